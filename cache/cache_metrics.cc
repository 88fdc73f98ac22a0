// SPDX-License-Identifier: Apache-2.0
#include "cache/cache_metrics.h"

#include <atomic>

#include "util/metric_catalog.h"

namespace blobtable::internal {

namespace {

// One of this store's counters (CacheCounters), read at snapshot time.
void Count(MetricsRegistry& registry, const MetricDef& def, MetricLabels labels,
           const std::shared_ptr<BlobCache>& cache, std::atomic<uint64_t> CacheCounters::*n) {
  registry.AddReader(def, std::move(labels), [cache, n] {
    return static_cast<double>((cache->counters().*n).load(std::memory_order_relaxed));
  });
}

}  // namespace

void CountCache(MetricsRegistry& registry, std::shared_ptr<BlobCache> cache) {
  Count(registry, metric::kCacheHits, {}, cache, &CacheCounters::hits);
  Count(registry, metric::kCacheRevalidations, {{"result", "not_modified"}}, cache,
        &CacheCounters::not_modified);
  Count(registry, metric::kCacheRevalidations, {{"result", "changed"}}, cache,
        &CacheCounters::changed);
  Count(registry, metric::kCacheMisses, {}, cache, &CacheCounters::misses);
  Count(registry, metric::kCacheStale, {}, cache, &CacheCounters::stale);
  Count(registry, metric::kCacheEvictions, {}, cache, &CacheCounters::evictions);
  Count(registry, metric::kCacheSavedBytes, {}, cache, &CacheCounters::bytes_saved);
  // What the directory holds now (every process's entries), in one read.
  registry.AddReaders([cache] {
    const CacheStats now = cache->Stats();
    return std::vector<MetricsRegistry::Reading>{
        {&metric::kCacheBytes, {}, static_cast<double>(now.bytes)},
        {&metric::kCacheEntries, {}, static_cast<double>(now.entries)}};
  });
}

}  // namespace blobtable::internal
