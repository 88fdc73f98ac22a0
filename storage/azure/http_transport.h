// SPDX-License-Identifier: Apache-2.0
// The HTTP transport behind the Azure backend: one small interface, two
// implementations (libcurl, the default; cpprestsdk, selectable). Modelled on
// azure-sdk-for-cpp's HttpTransport::Send.
#ifndef BLOBTABLE_STORAGE_AZURE_HTTP_TRANSPORT_H_
#define BLOBTABLE_STORAGE_AZURE_HTTP_TRANSPORT_H_

#include <charconv>
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "blobtable/status.h"
#include "storage/storage_errors.h"

namespace blobtable::internal {

struct HttpRequest {
  std::string method;  // GET, HEAD, PUT, DELETE
  std::string url;     // absolute and already percent-encoded
  // Sent exactly as given (the transport adds only Host, Content-Length and
  // connection handling); names as Azure spells them.
  std::vector<std::pair<std::string, std::string>> headers;
  std::string_view body;
  std::chrono::milliseconds timeout{30'000};  // the whole request
};

// "host:port" of an absolute URL (the scheme's port if it names none), for
// messages: where a request went is not secret, and says which endpoint
// could not be reached.
inline std::string HostAndPort(std::string_view url) {
  const size_t scheme_end = url.find("://");
  if (scheme_end == std::string_view::npos) return std::string(url);
  std::string_view rest = url.substr(scheme_end + 3);
  rest = rest.substr(0, rest.find_first_of("/?"));
  if (const size_t at = rest.rfind('@'); at != std::string_view::npos) rest.remove_prefix(at + 1);
  const size_t host_end = rest.starts_with('[') ? rest.find(']') : 0;  // an IPv6 address
  if (host_end != std::string_view::npos && rest.find(':', host_end) != std::string_view::npos)
    return std::string(rest);
  return std::string(rest) + (url.substr(0, scheme_end) == "https" ? ":443" : ":80");
}

// "<METHOD> request to <host:port> failed: <why>": how both transports
// report a request that got no answer.
inline std::string RequestFailed(const HttpRequest& request, std::string_view why) {
  return request.method + " request to " + HostAndPort(request.url) +
         " failed: " + std::string(why);
}

struct HttpResponse {
  int status = 0;
  std::map<std::string, std::string> headers;  // names in lowercase
  std::string body;
  // The transport sent the request more than once (a reused connection died
  // before any answer, and it tried again on a fresh one): an earlier send
  // may have been applied, so this answer may be about it.
  bool resent = false;

  // The header's value, or null. `lower_name` must be lowercase.
  const std::string* Header(std::string_view lower_name) const {
    auto it = headers.find(std::string(lower_name));
    return it == headers.end() ? nullptr : &it->second;
  }
};

// A decimal header value, parsed without exceptions; nullopt if it is not
// one, or does not fit.
template <typename T>
std::optional<T> ParseDecimal(const std::string& text) {
  T value{};
  const char* end = text.data() + text.size();
  auto [stop, ec] = std::from_chars(text.data(), end, value);
  if (text.empty() || ec != std::errc() || stop != end) return std::nullopt;
  return value;
}

// A response header that cannot be what the protocol says it is: retrying
// the same server will not fix it.
inline Status MalformedHeader(const char* name, const std::string& value) {
  return Status::Corruption(std::string("the storage service answered with a malformed ") + name +
                            " header ('" + value.substr(0, 40) + "')");
}

// Corruption if the response carries a Content-Length that is not a plain
// decimal number: its body cannot be framed, so both transports say this
// instead of whatever their parser made of it.
inline Status CheckContentLength(const HttpResponse& response) {
  const std::string* length = response.Header("content-length");
  if (length == nullptr || ParseDecimal<uint64_t>(*length)) return Status::OK();
  return MalformedHeader("Content-Length", *length);
}

struct TransportOptions {
  // Verify TLS certificates (on unless the endpoint is plain HTTP anyway).
  bool verify_tls = true;
  // A CA bundle to verify against instead of the system's; empty: system.
  std::string ca_file;
  std::chrono::milliseconds connect_timeout{10'000};
  // The largest response body accepted; a larger one fails Corruption
  // without being read whole. Error answers (status 300 and up) keep only
  // their first kMaxErrorBodyBytes: only their message is read.
  size_t max_response_bytes = size_t{512} << 20;
};

inline constexpr size_t kMaxErrorBodyBytes = 64u << 10;

// How a TLS handshake failed, where the caller should act differently:
// both transports classify by OpenSSL's reason and word it the same way.
enum class TlsFailure {
  kCertificate,  // the peer's certificate did not verify: configuration
  kNotTls,       // the peer answered, but not in TLS (an http:// port)
  kOther,        // anything else (reset mid-handshake...): retryable
};

// The Status for a failed handshake of `method`; `detail` is the library's
// own words (never holds a secret: no request content reaches it).
inline Status TlsHandshakeFailed(const std::string& method, TlsFailure why,
                                 const std::string& detail) {
  std::string what = method + " request failed: " + detail;
  switch (why) {
    case TlsFailure::kCertificate:
      return Status::InvalidArgument(what + " (TLS certificate verification)");
    case TlsFailure::kNotTls:
      return Status::InvalidArgument(what + " (TLS handshake: the endpoint does not speak TLS;" +
                                     " is it an http:// endpoint?)");
    case TlsFailure::kOther: break;
  }
  return Status::Unavailable(what + " (TLS handshake)");
}

class HttpTransport {
 public:
  virtual ~HttpTransport() = default;
  // Sends one request and returns whatever HTTP status came back (errors
  // included). Fails Unavailable when no response arrived (refused, reset,
  // timed out), with storage_code() kNotSent when the request certainly
  // never reached the server (no connection could be made), and
  // InvalidArgument for TLS failures retrying cannot fix (TlsFailure).
  // Never throws.
  // Thread-safe; connections are reused across calls.
  virtual Result<HttpResponse> Send(const HttpRequest& request) = 0;
  virtual std::string_view name() const = 0;  // "curl", "cpprest"
};

std::unique_ptr<HttpTransport> MakeCurlTransport(const TransportOptions& options);
// Null in a build without cpprestsdk (BLOBTABLE_WITH_CPPREST off).
std::unique_ptr<HttpTransport> MakeCpprestTransport(const TransportOptions& options);

}  // namespace blobtable::internal

#endif  // BLOBTABLE_STORAGE_AZURE_HTTP_TRANSPORT_H_
