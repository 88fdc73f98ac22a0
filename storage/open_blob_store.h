// SPDX-License-Identifier: Apache-2.0
// One entry to the backends: a location names either a directory (the local
// LMDB store) or an Azure Storage connection string, decided by the
// connection-string parser's own rules (IsConnectionString, store.h).
#ifndef BLOBTABLE_STORAGE_OPEN_BLOB_STORE_H_
#define BLOBTABLE_STORAGE_OPEN_BLOB_STORE_H_

#include <memory>
#include <string>
#include <string_view>

#include "blobtable/blob_store.h"
#include "blobtable/clock.h"
#include "blobtable/export.h"
#include "blobtable/storage_options.h"
#include "blobtable/trace.h"
#include "storage/request_log.h"
#include "util/call_context.h"
#include "util/metrics.h"

namespace blobtable::internal {

// What opening a backend takes (StoreOptions' share of it).
struct BackendOptions {
  std::string container = kDefaultContainer;
  bool create_if_missing = true;  // as StoreOptions::create_if_missing
  Clock* clock = nullptr;         // null: Clock::Real()
  RequestLogSink request_log;     // as StoreOptions::request_log
  LocalOptions local;
  AzureOptions azure;
  // Where the backend counts (the store's registry, Store::Metrics); null:
  // nowhere read.
  std::shared_ptr<MetricsRegistry> metrics;
  std::shared_ptr<Tracer> tracer;  // as StoreOptions::tracer
  // The opening library's calls (util/call_context.h), for a backend that
  // is a module of its own.
  CallSource call_source = &ThisModulesCall;
};

// Opens the backend `location` names (see Store::Open for the rules and
// failures).
Result<std::shared_ptr<BlobStore>> OpenBlobStore(std::string_view location,
                                                 const BackendOptions& options);

}  // namespace blobtable::internal

namespace blobtable {

// Declared for users in blobtable/store.h; defined here, where locations are
// told apart.
BLOBTABLE_EXPORT bool IsConnectionString(std::string_view location);

}  // namespace blobtable

#endif  // BLOBTABLE_STORAGE_OPEN_BLOB_STORE_H_
