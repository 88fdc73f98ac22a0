// SPDX-License-Identifier: Apache-2.0
// The Azure backend's HTTP pipeline, after the Azure SDK for C++'s: every
// attempt passes a short, fixed chain of policies, each with one job and a
// Send(request, attempt, next), and then the transport. The order, built in
// Pipeline alone: authentication (it signs the request as it will go out),
// the request log (one line per attempt, with what the refusals made of the
// answer), the metrics (the same), the trace span (the same), the refusal
// of redirects and cut answers, the transport. The
// retry budget (storage/azure/retry.h) stands in front and sends each
// attempt through the chain.
#ifndef BLOBTABLE_STORAGE_AZURE_PIPELINE_H_
#define BLOBTABLE_STORAGE_AZURE_PIPELINE_H_

#include <array>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <string_view>

#include "blobtable/clock.h"
#include "blobtable/trace.h"
#include "storage/azure/azure_config.h"
#include "storage/azure/http_transport.h"
#include "storage/request_log.h"
#include "util/metrics.h"

namespace blobtable::internal::azure {

// What the policies know of the attempt they pass on.
struct Attempt {
  const char* op = "";    // for the log and messages: "GET", "PUT", "LEASE-ACQUIRE", ...
  std::string_view blob;  // the same; the prefix for a listing, empty for the container
  int number = 1;         // 1, 2, ... within one request's retries
};

class Policy;

// The rest of a chain after a policy: the policies still to pass, then the
// transport (a test's scripted fake, when a policy is tested alone).
class NextHop {
 public:
  explicit NextHop(HttpTransport& transport, std::span<const Policy* const> policies = {})
      : transport_(&transport), policies_(policies) {}
  Result<HttpResponse> Send(HttpRequest& request, const Attempt& attempt) const;

 private:
  HttpTransport* transport_;
  std::span<const Policy* const> policies_;
};

class Policy {
 public:
  virtual ~Policy() = default;
  virtual Result<HttpResponse> Send(HttpRequest& request, const Attempt& attempt,
                                    const NextHop& next) const = 0;
};

// Authentication: the SAS appended to the URL, or a Shared Key signature
// (an Authorization header over everything the request carries).
class AuthPolicy final : public Policy {
 public:
  explicit AuthPolicy(const AzureConfig& config)
      : account_(config.account_name), key_(config.account_key), sas_(config.sas) {}
  Result<HttpResponse> Send(HttpRequest& request, const Attempt& attempt,
                            const NextHop& next) const override;

 private:
  std::string account_, key_, sas_;
};

// The request log's line (storage/request_log.h) for an HTTP attempt: the
// status and error code, or "no response (CODE)".
std::string LogLine(const Attempt& attempt, double ms, const Result<HttpResponse>& response);

// The request log: one LogLine per attempt to `log` (none if it is null),
// timed on `clock`.
class LogPolicy final : public Policy {
 public:
  LogPolicy(RequestLogSink log, const Clock& clock) : log_(std::move(log)), clock_(&clock) {}
  Result<HttpResponse> Send(HttpRequest& request, const Attempt& attempt,
                            const NextHop& next) const override;

 private:
  RequestLogSink log_;
  const Clock* clock_;
};

// The HTTP metrics (Store::Metrics, docs/observability.md#metrics): each
// attempt counted by operation and status and timed, answers asking the
// client to slow down (429, 503) counted apart.
class MetricsPolicy final : public Policy {
 public:
  MetricsPolicy(MetricsRegistry& registry, const Clock& clock)
      : registry_(&registry), clock_(&clock) {}
  Result<HttpResponse> Send(HttpRequest& request, const Attempt& attempt,
                            const NextHop& next) const override;

 private:
  // What the answer says of storage (Store::Health).
  void NoteOutcome(const Attempt& attempt, const Result<HttpResponse>& response) const;
  // Registered on first use: the statuses met are not known before.
  Counter& Requests(const char* op, int status) const;
  LatencyHistogram& Latency(const char* op) const;

  MetricsRegistry* registry_;
  const Clock* clock_;
  mutable std::mutex mu_;
  mutable std::map<std::pair<std::string, int>, Counter*> requests_;
  mutable std::map<std::string, LatencyHistogram*> latency_;
};

// The traces (StoreOptions::tracer): a span "blobtable.request" for each
// attempt, under the span open on the thread (a root span outside one):
// at its start the operation, blob and attempt number and the
// x-ms-client-request-id sent; at its end the HTTP status, Azure's error
// code and the x-ms-request-id it answered with. It ends OK for any HTTP
// answer (the status says which), with the error for none.
class TracePolicy final : public Policy {
 public:
  explicit TracePolicy(std::shared_ptr<Tracer> tracer) : tracer_(std::move(tracer)) {}
  Result<HttpResponse> Send(HttpRequest& request, const Attempt& attempt,
                            const NextHop& next) const override;

 private:
  std::shared_ptr<Tracer> tracer_;
};

// Answers not taken as they came:
// - A redirect is never followed (it would carry the Authorization header
//   and the request to another host): an error naming where it pointed. 304
//   is not a redirect but a conditional read's answer.
// - Every successful answer to a write, read or lease action carries an
//   ETag; one without it was cut short (a response truncated inside its
//   headers can reach us as a bare status line): Unavailable, as no answer,
//   so that the write-id rules settle it.
class RefusalPolicy final : public Policy {
 public:
  Result<HttpResponse> Send(HttpRequest& request, const Attempt& attempt,
                            const NextHop& next) const override;
};

// The chain in its one order, ending at `transport`. Holds pointers to its
// own members: neither copied nor moved.
class Pipeline {
 public:
  Pipeline(const AzureConfig& config, std::shared_ptr<HttpTransport> transport, RequestLogSink log,
           const Clock& clock, MetricsRegistry& metrics = UnreadMetrics(),
           std::shared_ptr<Tracer> tracer = nullptr);
  Pipeline(const Pipeline&) = delete;
  Pipeline& operator=(const Pipeline&) = delete;

  // The first hop: Send() passes a request through the whole chain.
  NextHop Start() const { return NextHop(*transport_, chain_); }

 private:
  AuthPolicy auth_;
  LogPolicy log_;
  MetricsPolicy metrics_;
  TracePolicy trace_;
  RefusalPolicy refusal_;
  std::array<const Policy*, 5> chain_;
  std::shared_ptr<HttpTransport> transport_;
};

}  // namespace blobtable::internal::azure

#endif  // BLOBTABLE_STORAGE_AZURE_PIPELINE_H_
