// SPDX-License-Identifier: Apache-2.0
// A store's cache in its metrics (Store::Metrics): what this store's cache
// counted, read when a snapshot is taken, and what the directory holds.
#ifndef BLOBTABLE_CACHE_CACHE_METRICS_H_
#define BLOBTABLE_CACHE_CACHE_METRICS_H_

#include <memory>

#include "cache/blob_cache.h"
#include "util/metrics.h"

namespace blobtable::internal {

// Adds `cache`'s counts to `registry` (it keeps the cache open as long as
// it lives).
void CountCache(MetricsRegistry& registry, std::shared_ptr<BlobCache> cache);

}  // namespace blobtable::internal

#endif  // BLOBTABLE_CACHE_CACHE_METRICS_H_
