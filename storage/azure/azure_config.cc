// SPDX-License-Identifier: Apache-2.0
#include "storage/azure/azure_config.h"

#include <cctype>
#include <map>
#include <utility>
#include <vector>

#include "util/ascii.h"
#include "util/base64.h"

namespace blobtable::internal {
namespace {

std::string_view Trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

Status Bad(const std::string& why) { return Status::InvalidArgument("connection string: " + why); }

// Whether `s` may appear in a message: a short word of ASCII letters and
// digits (a key name or a URL scheme), never anything that could be a key,
// a signature or a URL carrying one.
bool Echoable(std::string_view s) {
  if (s.empty() || s.size() > 32) return false;
  for (char c : s)
    if (!std::isalnum(static_cast<unsigned char>(c))) return false;
  return true;
}

// "part 3 (at character 41)": where a malformed part is, without its text.
std::string Where(int part, size_t offset) {
  return "part " + std::to_string(part) + " (at character " + std::to_string(offset + 1) + ")";
}

// Known keys, lowercase, to their canonical spelling ("" for another
// service's endpoint, accepted and ignored).
const std::map<std::string, std::string>& KnownKeys() {
  static const std::map<std::string, std::string> kKnown = {
      {"usedevelopmentstorage", "UseDevelopmentStorage"},
      {"defaultendpointsprotocol", "DefaultEndpointsProtocol"},
      {"accountname", "AccountName"},
      {"accountkey", "AccountKey"},
      {"blobendpoint", "BlobEndpoint"},
      {"endpointsuffix", "EndpointSuffix"},
      {"sharedaccesssignature", "SharedAccessSignature"},
      {"httptransport", "HttpTransport"},
      {"cafile", "CaFile"},
      {"queueendpoint", ""},
      {"tableendpoint", ""},
      {"fileendpoint", ""},
      {"developmentstorageproxyuri", ""},
  };
  return kKnown;
}

// The non-empty ';'-separated parts of a connection string, trimmed, each
// with the offset where it starts.
std::vector<std::pair<std::string_view, size_t>> Parts(std::string_view text) {
  std::vector<std::pair<std::string_view, size_t>> parts;
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t end = text.find(';', pos);
    if (end == std::string_view::npos) end = text.size();
    std::string_view part = Trim(text.substr(pos, end - pos));
    if (!part.empty()) parts.emplace_back(part, pos);
    pos = end + 1;
  }
  return parts;
}

}  // namespace

bool NamesAConnectionStringKey(std::string_view text) {
  for (const auto& [part, start] : Parts(text)) {
    size_t eq = part.find('=');
    if (eq != std::string_view::npos && KnownKeys().count(AsciiLower(Trim(part.substr(0, eq)))))
      return true;
  }
  return false;
}

Result<AzureConfig> ParseConnectionString(std::string_view text) {
  const std::map<std::string, std::string>& kKnown = KnownKeys();
  // Messages name keys and positions, never values: a malformed part may be
  // an account key or a signature pasted in the wrong place.
  std::map<std::string, std::string> kv;  // by canonical key name
  int index = 0;
  for (const auto& [part, start] : Parts(text)) {
    ++index;
    size_t eq = part.find('=');
    if (eq == std::string_view::npos || eq == 0)
      return Bad(Where(index, start) + " is not Key=Value");
    std::string_view name = Trim(part.substr(0, eq));
    std::string key = AsciiLower(name);
    auto known = kKnown.find(key);
    if (known == kKnown.end())
      return Bad(Echoable(name)
                     ? "unknown key '" + std::string(name) + "' in " + Where(index, start)
                     : "unknown key in " + Where(index, start) +
                           " (a key name is letters only: is a value misplaced?)");
    if (known->second.empty()) continue;  // another service's endpoint
    if (!kv.emplace(known->second, std::string(Trim(part.substr(eq + 1)))).second)
      return Bad("key '" + known->second + "' given twice");
  }
  auto get = [&](const char* k) -> std::string {
    auto it = kv.find(k);
    return it == kv.end() ? "" : it->second;
  };

  AzureConfig c;
  if (!get("HttpTransport").empty()) c.transport = AsciiLower(get("HttpTransport"));
  if (c.transport != "curl" && c.transport != "cpprest")
    return Bad("HttpTransport must be 'curl' or 'cpprest'");
  c.ca_file = get("CaFile");

  if (AsciiLower(get("UseDevelopmentStorage")) == "true") {
    c.account_name = kDevAccountName;
    c.account_key = *Base64Decode(kDevAccountKey);
    c.blob_endpoint = "http://127.0.0.1:10000/" + c.account_name;
    if (!get("BlobEndpoint").empty()) c.blob_endpoint = get("BlobEndpoint");
  } else {
    c.account_name = get("AccountName");
    std::string endpoint = get("BlobEndpoint");
    if (endpoint.empty()) {
      if (c.account_name.empty()) return Bad("needs AccountName or BlobEndpoint");
      std::string protocol = AsciiLower(get("DefaultEndpointsProtocol"));
      if (protocol.empty()) protocol = "https";
      if (protocol != "https" && protocol != "http")
        return Bad("DefaultEndpointsProtocol must be https or http");
      std::string suffix = get("EndpointSuffix");
      if (suffix.empty()) suffix = "core.windows.net";
      endpoint = protocol + "://" + c.account_name + ".blob." + suffix;
    }
    c.blob_endpoint = endpoint;
    if (!get("AccountKey").empty()) {
      auto key = Base64Decode(get("AccountKey"));
      if (!key.ok()) return Bad("AccountKey is not valid base64");  // never echo the key
      c.account_key = std::move(*key);
    }
  }
  c.sas = get("SharedAccessSignature");
  if (!c.sas.empty() && c.sas[0] == '?') c.sas.erase(0, 1);
  if (c.account_key.empty() && c.sas.empty())
    return Bad("needs AccountKey or SharedAccessSignature");
  if (!c.account_key.empty() && c.account_name.empty()) return Bad("AccountKey needs AccountName");

  while (!c.blob_endpoint.empty() && c.blob_endpoint.back() == '/') c.blob_endpoint.pop_back();
  const size_t sep = c.blob_endpoint.find("://");
  std::string scheme = sep == std::string::npos ? "" : AsciiLower(c.blob_endpoint.substr(0, sep));
  if (scheme != "https" && scheme != "http")
    return Bad("BlobEndpoint is not an http(s) URL" +
               (Echoable(scheme) ? " (its scheme is '" + scheme + "')" : std::string()));
  return c;
}

}  // namespace blobtable::internal
