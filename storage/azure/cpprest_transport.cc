// SPDX-License-Identifier: Apache-2.0
// The second HTTP transport, on cpprestsdk (Microsoft's C++ REST SDK, archived
// upstream in 2026: selectable, never the default). One http_client per
// scheme://host:port, each keeping its connections alive; cpprest's
// exceptions stop here.
#include <cpprest/http_client.h>

#include <cerrno>

#include <openssl/err.h>
#include <openssl/ssl.h>

#include <boost/asio/ssl.hpp>
#include <map>
#include <mutex>

#include "util/ascii.h"
#include "blobtable/storage_options.h"
#include "storage/azure/http_transport.h"

namespace blobtable::internal {
namespace {

namespace http = web::http;

// cpprest hands on asio's error value, which for TLS errors is OpenSSL's
// packed error code (library and reason); the category is lost on the way,
// but OpenSSL's codes lie far above any errno.
TlsFailure ClassifyTls(int value) {
  const auto code = static_cast<unsigned long>(static_cast<unsigned int>(value));
  if (code <= 0xFFFF || ERR_GET_LIB(code) != ERR_LIB_SSL) return TlsFailure::kOther;
  switch (ERR_GET_REASON(code)) {
    case SSL_R_CERTIFICATE_VERIFY_FAILED: return TlsFailure::kCertificate;
    case SSL_R_WRONG_VERSION_NUMBER: return TlsFailure::kNotTls;
    default: return TlsFailure::kOther;
  }
}

class CpprestTransport final : public HttpTransport {
 public:
  explicit CpprestTransport(TransportOptions options) : options_(std::move(options)) {}

  std::string_view name() const override { return "cpprest"; }

  Result<HttpResponse> Send(const HttpRequest& request) override {
    try {
      size_t scheme_end = request.url.find("://");
      size_t path_start =
          request.url.find('/', scheme_end == std::string::npos ? 0 : scheme_end + 3);
      std::string base = request.url.substr(0, path_start);
      std::string path = path_start == std::string::npos ? "/" : request.url.substr(path_start);
      http::client::http_client& client = ClientFor(base, request.timeout);

      http::http_request req(request.method);
      req.set_request_uri(web::uri(path));  // already encoded: taken as is
      std::string content_type;
      for (const auto& [name, value] : request.headers) {
        if (name == "Content-Type")
          content_type = value;
        else
          req.headers().add(name, value);
      }
      // cpprest re-sends a request by itself when a reused connection dies,
      // and cannot say so: never reuse one (a connection per request).
      req.headers().add("Connection", "close");
      if (request.method == "PUT" || !request.body.empty()) {
        // cpprest sends Content-Length; Content-Type only when given.
        req.set_body(std::vector<unsigned char>(request.body.begin(), request.body.end()));
        if (content_type.empty())
          req.headers().remove(http::header_names::content_type);
        else
          req.headers().set_content_type(content_type);
      }
      http::http_response resp = client.request(req).get();
      HttpResponse out;
      out.status = resp.status_code();
      for (const auto& [name, value] : resp.headers()) {
        out.headers[AsciiLower(name)] = value;
      }
      if (Status framing = CheckContentLength(out); !framing.ok()) return framing;
      if (request.method != "HEAD") {
        // Only a declared length can be checked before reading (a chunked
        // body is read whole, then held to the same caps).
        const bool error = out.status >= 300;
        const size_t limit = error ? kMaxErrorBodyBytes : options_.max_response_bytes;
        const uint64_t declared = resp.headers().content_length();
        if (!error && declared > limit)
          return Status::Corruption(request.method + " answer's body is larger than " +
                                    std::to_string(limit) +
                                    " bytes (TransportOptions::max_response_bytes)");
        if (!error || declared <= limit) {
          std::vector<unsigned char> body = resp.extract_vector().get();
          if (!error && body.size() > limit)
            return Status::Corruption(request.method + " answer's body is larger than " +
                                      std::to_string(limit) + " bytes");
          out.body.assign(body.begin(), body.begin() + std::min(body.size(), limit));
        }
      }
      return out;
    } catch (const http::http_exception& e) {
      const std::string what = e.what();
      if (what.find("handshake") != std::string::npos)
        return TlsHandshakeFailed(request.method, ClassifyTls(e.error_code().value()), what);
      // A connection never made: nothing was sent, as curl says it. (cpprest
      // reports a refused connect as host_unreachable, with this text.)
      const int code = e.error_code().value();
      if (code == ECONNREFUSED ||
          (code == EHOSTUNREACH && what.find("Failed to connect") != std::string::npos))
        return Status::FromStorage(Code::kUnavailable, 0, kNotSent, RequestFailed(request, what));
      return Status::Unavailable(RequestFailed(request, what));
    } catch (const std::exception& e) {
      return Status::Unavailable(RequestFailed(request, e.what()));
    }
  }

 private:
  http::client::http_client& ClientFor(const std::string& base, std::chrono::milliseconds timeout) {
    std::lock_guard<std::mutex> lock(mu_);
    auto key = base + "|" + std::to_string(timeout.count());
    auto it = clients_.find(key);
    if (it != clients_.end()) return *it->second;
    http::client::http_client_config config;
    config.set_timeout(std::chrono::duration_cast<std::chrono::microseconds>(timeout));
    config.set_validate_certificates(options_.verify_tls);
    config.set_max_redirects(0);  // a 3xx comes back as it is (the store refuses it)
    if (!options_.ca_file.empty()) {
      std::string ca = options_.ca_file;
      config.set_ssl_context_callback(
          [ca](boost::asio::ssl::context& ctx) { ctx.load_verify_file(ca); });
    }
    auto client = std::make_unique<http::client::http_client>(web::uri(base), config);
    return *clients_.emplace(key, std::move(client)).first->second;
  }

  TransportOptions options_;
  std::mutex mu_;
  std::map<std::string, std::unique_ptr<http::client::http_client>> clients_;
};

}  // namespace

std::unique_ptr<HttpTransport> MakeCpprestTransport(const TransportOptions& options) {
  return std::make_unique<CpprestTransport>(options);
}

}  // namespace blobtable::internal
