// SPDX-License-Identifier: Apache-2.0
// The default HTTP transport, on libcurl: a pool of easy handles, each
// keeping its connections alive between requests.
#include <curl/curl.h>

#include <cctype>
#include <mutex>
#include <vector>

#include "util/ascii.h"
#include "storage/azure/http_transport.h"

namespace blobtable::internal {
namespace {

// Collects a response body up to its cap; past it, stops the transfer.
struct BodySink {
  CURL* handle;
  HttpResponse* response;
  size_t max_bytes;
  bool over = false;     // a success answer larger than max_bytes
  bool trimmed = false;  // an error answer cut at kMaxErrorBodyBytes
};

size_t OnBody(char* data, size_t size, size_t n, void* user) {
  auto* sink = static_cast<BodySink*>(user);
  long status = 0;
  curl_easy_getinfo(sink->handle, CURLINFO_RESPONSE_CODE, &status);
  const size_t limit = status >= 300 ? kMaxErrorBodyBytes : sink->max_bytes;
  std::string& body = sink->response->body;
  if (body.size() + size * n <= limit) {
    body.append(data, size * n);
    return size * n;
  }
  if (status >= 300) {
    body.append(data, limit - body.size());
    sink->trimmed = true;
  } else {
    sink->over = true;
  }
  return 0;  // stop reading: the transfer ends with CURLE_WRITE_ERROR
}

// libcurl re-sends a request by itself when a reused connection dies before
// any answer, and says so only in its verbose text; the store must know.
int OnDebug(CURL*, curl_infotype type, char* data, size_t size, void* user) {
  if (type == CURLINFO_TEXT &&
      std::string_view(data, size).find("retrying a fresh connect") != std::string_view::npos)
    static_cast<HttpResponse*>(user)->resent = true;
  return 0;
}

size_t OnHeader(char* data, size_t size, size_t n, void* user) {
  auto* response = static_cast<HttpResponse*>(user);
  std::string_view line(data, size * n);
  if (line.substr(0, 5) == "HTTP/") {
    response->headers.clear();  // a new response (after 100 Continue)
    return size * n;
  }
  size_t colon = line.find(':');
  if (colon == std::string_view::npos) return size * n;
  std::string name = AsciiLower(line.substr(0, colon));
  std::string_view value = line.substr(colon + 1);
  while (!value.empty() && (value.front() == ' ' || value.front() == '\t')) value.remove_prefix(1);
  while (!value.empty() && (value.back() == '\r' || value.back() == '\n' || value.back() == ' '))
    value.remove_suffix(1);
  response->headers[name] = std::string(value);
  return size * n;
}

class CurlTransport final : public HttpTransport {
 public:
  explicit CurlTransport(TransportOptions options) : options_(std::move(options)) {
    static std::once_flag once;
    std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
  }
  ~CurlTransport() override {
    for (CURL* h : idle_) curl_easy_cleanup(h);
  }

  std::string_view name() const override { return "curl"; }

  Result<HttpResponse> Send(const HttpRequest& request) override {
    CURL* h = Take();
    if (h == nullptr) return Status::Internal("curl_easy_init failed");
    HttpResponse response;
    curl_slist* headers = nullptr;
    for (const auto& [name, value] : request.headers)
      headers = curl_slist_append(headers, (name + ": " + value).c_str());
    // curl would add these on its own; Shared Key signs what is sent.
    headers = curl_slist_append(headers, "Expect:");
    headers = curl_slist_append(headers, "Accept:");
    if (request.method == "PUT" && !HasHeader(request, "Content-Type"))
      headers = curl_slist_append(headers, "Content-Type:");

    curl_easy_setopt(h, CURLOPT_URL, request.url.c_str());
    curl_easy_setopt(h, CURLOPT_PATH_AS_IS, 1L);  // never normalise "." or ".." away
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, headers);
    curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, static_cast<long>(request.timeout.count()));
    curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS,
                     static_cast<long>(options_.connect_timeout.count()));
    curl_easy_setopt(h, CURLOPT_SSL_VERIFYPEER, options_.verify_tls ? 1L : 0L);
    curl_easy_setopt(h, CURLOPT_SSL_VERIFYHOST, options_.verify_tls ? 2L : 0L);
    if (!options_.ca_file.empty()) curl_easy_setopt(h, CURLOPT_CAINFO, options_.ca_file.c_str());
    char error_detail[CURL_ERROR_SIZE] = "";
    curl_easy_setopt(h, CURLOPT_ERRORBUFFER, error_detail);
    BodySink sink{h, &response, options_.max_response_bytes};
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, OnBody);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, &sink);
    curl_easy_setopt(h, CURLOPT_VERBOSE, 1L);  // only to see re-sends (OnDebug)
    curl_easy_setopt(h, CURLOPT_DEBUGFUNCTION, OnDebug);
    curl_easy_setopt(h, CURLOPT_DEBUGDATA, &response);
    curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, OnHeader);
    curl_easy_setopt(h, CURLOPT_HEADERDATA, &response);
    if (request.method == "HEAD") {
      curl_easy_setopt(h, CURLOPT_NOBODY, 1L);
    } else if (request.method == "PUT") {
      curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, "PUT");
      curl_easy_setopt(h, CURLOPT_POSTFIELDS, request.body.data());
      curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE,
                       static_cast<curl_off_t>(request.body.size()));
    } else {
      curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, request.method.c_str());
    }

    CURLcode rc = curl_easy_perform(h);
    long status = 0;
    curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
    curl_slist_free_all(headers);
    curl_easy_setopt(h, CURLOPT_ERRORBUFFER, nullptr);  // it lives on this stack
    Give(h);
    if (sink.over)
      return Status::Corruption(request.method + " answer's body is larger than " +
                                std::to_string(options_.max_response_bytes) +
                                " bytes (TransportOptions::max_response_bytes)");
    if (Status framing = CheckContentLength(response); !framing.ok()) return framing;
    if (rc != CURLE_OK && !sink.trimmed) {
      std::string what = RequestFailed(request, curl_easy_strerror(rc));
      if (rc == CURLE_PEER_FAILED_VERIFICATION || rc == CURLE_SSL_CACERT_BADFILE)
        return TlsHandshakeFailed(request.method, TlsFailure::kCertificate, curl_easy_strerror(rc));
      if (rc == CURLE_SSL_CONNECT_ERROR) {
        // curl keeps OpenSSL's reason only as text (its error buffer).
        const std::string detail = error_detail;
        const bool not_tls = detail.find("wrong version number") != std::string::npos;
        return TlsHandshakeFailed(request.method,
                                  not_tls ? TlsFailure::kNotTls : TlsFailure::kOther,
                                  detail.empty() ? curl_easy_strerror(rc) : detail);
      }
      if (rc == CURLE_WEIRD_SERVER_REPLY)  // an answer that is not HTTP: as cpprest says it
        return Status::Corruption(what + " (the storage service's answer is malformed" +
                                  (error_detail[0] ? std::string(": ") + error_detail : "") + ")");
      if (rc == CURLE_COULDNT_CONNECT || rc == CURLE_COULDNT_RESOLVE_HOST ||
          rc == CURLE_COULDNT_RESOLVE_PROXY)
        return Status::FromStorage(Code::kUnavailable, 0, kNotSent, what);
      return Status::Unavailable(what);
    }
    response.status = static_cast<int>(status);
    return response;
  }

 private:
  static bool HasHeader(const HttpRequest& r, std::string_view name) {
    for (const auto& h : r.headers)
      if (h.first == name) return true;
    return false;
  }

  CURL* Take() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (!idle_.empty()) {
        CURL* h = idle_.back();
        idle_.pop_back();
        curl_easy_reset(h);  // keeps its live connections
        return h;
      }
    }
    return curl_easy_init();
  }
  void Give(CURL* h) {
    std::lock_guard<std::mutex> lock(mu_);
    idle_.push_back(h);
  }

  TransportOptions options_;
  std::mutex mu_;
  std::vector<CURL*> idle_;
};

}  // namespace

std::unique_ptr<HttpTransport> MakeCurlTransport(const TransportOptions& options) {
  return std::make_unique<CurlTransport>(options);
}

}  // namespace blobtable::internal
