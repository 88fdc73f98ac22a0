// SPDX-License-Identifier: Apache-2.0
// The Azure backend's per-attempt policies and their chain
// (storage/azure/pipeline.h).
#include "storage/azure/pipeline.h"

#include <utility>

#include "storage/azure/responses.h"
#include "storage/azure/shared_key.h"
#include "storage/storage_errors.h"
#include "util/call_context.h"
#include "util/metric_catalog.h"

namespace blobtable::internal::azure {

namespace {

std::string Named(const Attempt& a) { return std::string(a.op) + " '" + std::string(a.blob) + "'"; }

Result<HttpResponse> RefuseRedirect(Result<HttpResponse> r, const Attempt& a) {
  if (!r.ok() || r->status < 300 || r->status > 399 || r->status == 304) return r;
  std::string host = "an unnamed location";
  if (const std::string* location = r->Header("location")) {
    size_t start = location->find("://");
    start = start == std::string::npos ? 0 : start + 3;
    host = "'" + location->substr(start, location->find_first_of("/?#", start) - start) + "'";
  }
  return Status::FromStorage(Code::kInvalidArgument, r->status, "Redirect",
                             Named(a) + ": the service redirected it to " + host +
                                 "; blobtable follows no redirects (check the endpoint)");
}

// Azure Storage stamps every answer with its request id; an answer without
// one (a web server's page, 200 or 404) is never read as a store, empty or
// not. A 5xx without one stays transient (a proxy's, a load balancer's).
Result<HttpResponse> RefuseNotAzure(Result<HttpResponse> r, const Attempt& a) {
  if (!r.ok() || r->status >= 500 || FromAzureStorage(*r)) return r;
  return NotAzureStorage(*r, a.op);
}

Result<HttpResponse> RefuseCutAnswer(Result<HttpResponse> r, const Attempt& a) {
  const std::string_view op = a.op;
  const bool has_etag = op == "PUT" || op == "SET-METADATA" || op == "GET" || op == "HEAD" ||
                        op.rfind("LEASE-", 0) == 0;
  if (!r.ok() || !has_etag || r->status < 200 || r->status > 299 || r->Header("etag") != nullptr)
    return r;
  return Status::Unavailable(Named(a) + ": the answer was cut short (HTTP " +
                             std::to_string(r->status) + " without an ETag)");
}

}  // namespace

Result<HttpResponse> NextHop::Send(HttpRequest& request, const Attempt& attempt) const {
  if (policies_.empty()) return transport_->Send(request);
  return policies_.front()->Send(request, attempt, NextHop(*transport_, policies_.subspan(1)));
}

namespace {

// InvalidArgument naming the first header whose name or value holds a
// control character (CR and LF above all: a caller's string, an ETag given
// as If-Match, would otherwise end the header and add others of its own).
Status CheckHeaders(const HttpRequest& request) {
  auto control = [](std::string_view text) {
    for (unsigned char c : text)
      if ((c < 0x20 && c != '\t') || c == 0x7f) return true;
    return false;
  };
  for (const auto& [name, value] : request.headers)
    if (control(name) || control(value))
      // kNotSent: the retry budget then knows no write may have been applied.
      return Status::FromStorage(Code::kInvalidArgument, 0, kNotSent,
                                 "header " + name + ": a control character (a line break?) in it");
  return Status::OK();
}

}  // namespace

Result<HttpResponse> AuthPolicy::Send(HttpRequest& request, const Attempt& attempt,
                                      const NextHop& next) const {
  // Checked here, the first hop, before the request is signed or sent.
  if (Status s = CheckHeaders(request); !s.ok()) return s;
  if (!sas_.empty()) {
    request.url += (request.url.find('?') == std::string::npos ? "?" : "&") + sas_;
  } else {
    SignWithSharedKey(request, account_, key_);
  }
  return next.Send(request, attempt);
}

std::string LogLine(const Attempt& attempt, double ms, const Result<HttpResponse>& response) {
  std::string outcome;
  if (response.ok()) {
    outcome = std::to_string(response->status);
    if (const std::string* code = response->Header("x-ms-error-code")) outcome += " " + *code;
  } else {
    outcome = "no response (" + std::string(CodeName(response.status().code())) + ")";
  }
  return RequestLogLine(attempt.op, attempt.blob, outcome, ms, attempt.number);
}

Result<HttpResponse> LogPolicy::Send(HttpRequest& request, const Attempt& attempt,
                                     const NextHop& next) const {
  const SteadyTime t0 = clock_->Steady();
  Result<HttpResponse> response = next.Send(request, attempt);
  if (log_) {
    double ms = std::chrono::duration<double, std::milli>(clock_->Steady() - t0).count();
    log_(LogLine(attempt, ms, response));
  }
  return response;
}

Counter& MetricsPolicy::Requests(const char* op, int status) const {
  std::lock_guard<std::mutex> lock(mu_);
  Counter*& c = requests_[{op, status}];
  if (c == nullptr)
    c = &registry_->AddCounter(metric::kHttpRequests,
                               {{"op", op}, {"status", status ? std::to_string(status) : "none"}});
  return *c;
}

LatencyHistogram& MetricsPolicy::Latency(const char* op) const {
  std::lock_guard<std::mutex> lock(mu_);
  LatencyHistogram*& h = latency_[op];
  if (h == nullptr) h = &registry_->AddHistogram(metric::kHttpRequestSeconds, {{"op", op}});
  return *h;
}

void MetricsPolicy::NoteOutcome(const Attempt& attempt,
                                const Result<HttpResponse>& response) const {
  StorageOutcomes& outcomes = registry_->storage_outcomes();
  if (!response.ok()) {
    outcomes.Failed(response.status().WithContext(Named(attempt)), clock_->Now());
    return;
  }
  const int status = response->status;
  if (status >= 500 || status == 401 || status == 403) {
    const std::string* code = response->Header("x-ms-error-code");
    outcomes.Failed(
        Status::FromStorage(
            status >= 500 ? Code::kUnavailable : Code::kInvalidArgument, status, code ? *code : "",
            Named(attempt) + ": HTTP " + std::to_string(status) + (code ? " " + *code : "")),
        clock_->Now());
    return;
  }
  outcomes.Answered(clock_->Now());
}

Result<HttpResponse> MetricsPolicy::Send(HttpRequest& request, const Attempt& attempt,
                                         const NextHop& next) const {
  const SteadyTime t0 = clock_->Steady();
  Result<HttpResponse> response = next.Send(request, attempt);
  const auto took = clock_->Steady() - t0;
  Latency(attempt.op).Record(took);
  TallyRequest(took);  // the call's, for the slow-call log
  const int status = response.ok() ? response->status : 0;
  Requests(attempt.op, status).Add();
  NoteOutcome(attempt, response);
  if (status == 429 || status == 503)
    registry_->AddCounter(metric::kHttpThrottled, {{"status", std::to_string(status)}}).Add();
  return response;
}

Result<HttpResponse> TracePolicy::Send(HttpRequest& request, const Attempt& attempt,
                                       const NextHop& next) const {
  if (!tracer_) return next.Send(request, attempt);
  std::string_view client_id;
  for (const auto& [name, value] : request.headers)
    if (name == "x-ms-client-request-id") client_id = value;
  const std::string number = std::to_string(attempt.number);
  Span span(tracer_.get(), "blobtable.request",
            {{"op", attempt.op},
             {"blob", attempt.blob},
             {"attempt", number},
             {"client_request_id", client_id}});
  Result<HttpResponse> response = next.Send(request, attempt);
  if (!response.ok()) {
    span.End(response.status());
    return response;
  }
  span.Set("http_status", std::to_string(response->status));
  if (const std::string* id = response->Header("x-ms-request-id")) span.Set("request_id", *id);
  if (const std::string* code = response->Header("x-ms-error-code")) span.Set("error_code", *code);
  span.End(Status::OK());
  return response;
}

Result<HttpResponse> RefusalPolicy::Send(HttpRequest& request, const Attempt& attempt,
                                         const NextHop& next) const {
  return RefuseCutAnswer(
      RefuseRedirect(RefuseNotAzure(next.Send(request, attempt), attempt), attempt), attempt);
}

Pipeline::Pipeline(const AzureConfig& config, std::shared_ptr<HttpTransport> transport,
                   RequestLogSink log, const Clock& clock, MetricsRegistry& metrics,
                   std::shared_ptr<Tracer> tracer)
    : auth_(config),
      log_(std::move(log), clock),
      metrics_(metrics, clock),
      trace_(std::move(tracer)),
      chain_{&auth_, &log_, &metrics_, &trace_, &refusal_},
      transport_(std::move(transport)) {}

}  // namespace blobtable::internal::azure
