// SPDX-License-Identifier: Apache-2.0
// The request log, one format for every backend: a line per storage request
// attempt, "blobtable: PUT t/orders/e/-p/-r -> 412 ConditionNotMet 3.2 ms
// attempt 1". The Azure backend writes one per HTTP attempt (its pipeline's
// LogPolicy, with retries); any other backend is wrapped in
// LoggingBlobStore, a line per call. Only the operation, blob name,
// outcome and time: never a URL (it may carry a SAS), a header or a body.
// docs/azure.md#request-log-interoperability-service-version
#ifndef BLOBTABLE_STORAGE_REQUEST_LOG_H_
#define BLOBTABLE_STORAGE_REQUEST_LOG_H_

#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "blobtable/blob_store.h"
#include "blobtable/clock.h"

namespace blobtable::internal {

// Receives whole lines (StoreOptions::request_log). May be called from
// several threads at once: a sink that writes to a stream serialises.
using RequestLogSink = std::function<void(const std::string& line)>;

// The one line format. `outcome` is what became of the attempt: an HTTP
// status and error code ("412 ConditionNotMet"), "ok" or a Status code
// name, or "no response (Unavailable)".
std::string RequestLogLine(std::string_view op, std::string_view blob, std::string_view outcome,
                           double ms, int attempt);

// `target` with every call logged to `log` (one line each, attempt 1: the
// wrapper sees calls, not the retries under them), timed on `clock`
// (null: Clock::Real()). Stack it directly on a backend, below caches and
// fault injectors, so that it logs what reached storage.
std::shared_ptr<BlobStore> LogRequests(std::shared_ptr<BlobStore> target, RequestLogSink log,
                                       const Clock* clock = nullptr);

}  // namespace blobtable::internal

#endif  // BLOBTABLE_STORAGE_REQUEST_LOG_H_
