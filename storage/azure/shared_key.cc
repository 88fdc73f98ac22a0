// SPDX-License-Identifier: Apache-2.0
#include "storage/azure/shared_key.h"

#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <algorithm>
#include <cctype>
#include <map>
#include <vector>

#include "util/ascii.h"
#include "util/base64.h"

namespace blobtable::internal {
namespace {

std::string HeaderValue(const HttpRequest& r, std::string_view name) {
  std::string want = AsciiLower(name);
  for (const auto& [n, v] : r.headers)
    if (AsciiLower(n) == want) return v;
  return "";
}

}  // namespace

std::string HeaderSortKey(std::string_view lower_name) {
  // The service sorts with a culture-aware compare, not byte order: '-' has
  // no primary weight and '_' sorts before digits and letters (Azure SDK
  // issues: python #10277, net #41328). For names of letters, digits, '_' and
  // '-' (all blobtable sends: metadata names are C# identifiers) this key
  // gives that order; the name itself breaks ties.
  std::string key;
  for (char c : lower_name) {
    if (c == '-') continue;
    key.push_back(c == '_' ? '\x01' : c);
  }
  key.push_back('\0');
  key += lower_name;
  return key;
}

std::string PercentDecode(std::string_view s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '%' && i + 2 < s.size() && std::isxdigit(static_cast<unsigned char>(s[i + 1])) &&
        std::isxdigit(static_cast<unsigned char>(s[i + 2]))) {
      out.push_back(static_cast<char>(std::stoi(std::string(s.substr(i + 1, 2)), nullptr, 16)));
      i += 2;
    } else {
      out.push_back(s[i]);
    }
  }
  return out;
}

std::string PercentEncode(std::string_view s, bool keep_slash) {
  static const char* kHex = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : s) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~' ||
        (keep_slash && c == '/')) {
      out.push_back(static_cast<char>(c));
    } else {
      out.push_back('%');
      out.push_back(kHex[c >> 4]);
      out.push_back(kHex[c & 15]);
    }
  }
  return out;
}

std::string SharedKeyStringToSign(const HttpRequest& r, std::string_view account) {
  std::string out = r.method + "\n";
  for (const char* h :
       {"Content-Encoding", "Content-Language", "Content-Length", "Content-MD5", "Content-Type",
        "Date", "If-Modified-Since", "If-Match", "If-None-Match", "If-Unmodified-Since", "Range"}) {
    std::string v = HeaderValue(r, h);
    // The transport sends Content-Length from the body; sign the same.
    if (std::string_view(h) == "Content-Length" && v.empty() && !r.body.empty())
      v = std::to_string(r.body.size());
    if (std::string_view(h) == "Content-Length" && v == "0") v.clear();
    out += v + "\n";
  }
  // Canonicalized headers: x-ms-*, lowercase, "name:value\n", in the
  // service's order (see HeaderSortKey).
  std::map<std::string, std::pair<std::string, std::string>> ms;
  for (const auto& [n, v] : r.headers) {
    std::string name = AsciiLower(n);
    if (name.rfind("x-ms-", 0) == 0) ms[HeaderSortKey(name)] = {name, v};
  }
  for (const auto& [key, header] : ms) out += header.first + ":" + header.second + "\n";
  // Canonicalized resource: "/account" + the encoded path as sent, then the
  // query parameters decoded, lowercase names, sorted, comma-joined values.
  size_t scheme = r.url.find("://");
  size_t path_start = r.url.find('/', scheme == std::string::npos ? 0 : scheme + 3);
  size_t q = r.url.find('?');
  std::string path =
      path_start == std::string::npos
          ? "/"
          : r.url.substr(path_start, q == std::string::npos ? std::string::npos : q - path_start);
  out += "/" + std::string(account) + path;
  std::map<std::string, std::vector<std::string>> params;
  if (q != std::string::npos) {
    std::string_view query = std::string_view(r.url).substr(q + 1);
    size_t pos = 0;
    while (pos <= query.size()) {
      size_t amp = query.find('&', pos);
      if (amp == std::string_view::npos) amp = query.size();
      std::string_view kv = query.substr(pos, amp - pos);
      pos = amp + 1;
      if (kv.empty()) continue;
      size_t eq = kv.find('=');
      params[AsciiLower(PercentDecode(kv.substr(0, eq)))].push_back(
          eq == std::string_view::npos ? "" : PercentDecode(kv.substr(eq + 1)));
    }
  }
  for (auto& [name, values] : params) {
    std::sort(values.begin(), values.end());
    out += "\n" + name + ":";
    for (size_t i = 0; i < values.size(); ++i) out += (i ? "," : "") + values[i];
  }
  return out;
}

std::string SharedKeySignature(std::string_view key, std::string_view string_to_sign) {
  unsigned char mac[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()),
       reinterpret_cast<const unsigned char*>(string_to_sign.data()), string_to_sign.size(), mac,
       &len);
  return Base64Encode(std::string_view(reinterpret_cast<const char*>(mac), len));
}

void SignWithSharedKey(HttpRequest& r, std::string_view account, std::string_view key) {
  std::string sig = SharedKeySignature(key, SharedKeyStringToSign(r, account));
  r.headers.emplace_back("Authorization", "SharedKey " + std::string(account) + ":" + sig);
}

}  // namespace blobtable::internal
