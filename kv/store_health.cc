// SPDX-License-Identifier: Apache-2.0
// Store::Health: what storage last said, probed if asked, and what the
// store has in flight.
#include <chrono>

#include "blobtable/store.h"
#include "kv/store_core.h"

namespace blobtable {

namespace {

std::chrono::milliseconds Since(SteadyTime then, SteadyTime now) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(now - then);
}

}  // namespace

StoreHealth Store::Health(const HealthOptions& options) const {
  StoreHealth h;
  const Clock& clock = *core_->clock;
  std::optional<Status> probed;
  if (options.probe) {
    ListOptions one;
    one.max_results = 1;
    auto listed = core_->blobs->List(one);  // through the cache too: it sends the listing
    probed = listed.status();
  }
  // Read after the probe: its answer (or failure) is the last one.
  const internal::StorageOutcomes::Last last = core_->metrics->storage_outcomes().last();
  h.last_error = last.error;
  h.last_error_at = last.error_at;
  h.last_answer_at = last.answer_at;
  h.reachable = !last.failed_last;
  if (probed) {
    h.reachable = probed->ok();
    if (!probed->ok()) {
      h.last_error = *probed;
      h.last_error_at = clock.Now();
    }
  }
  if (core_->cache) {
    h.cache = core_->cache->storage_known_unreachable() ? "answering from copies" : "online";
    h.cache_stats = core_->cache->cache().Stats();
  }
  const SteadyTime now = clock.Steady();
  h.commits_in_flight = static_cast<int>(core_->commits_in_flight->count());
  if (auto oldest = core_->commits_in_flight->oldest()) h.oldest_commit = Since(*oldest, now);
  if (core_->finisher) {
    const internal::Finisher::Backlog b = core_->finisher->backlog();
    h.finishing_backlog = static_cast<int>(b.jobs);
    h.oldest_finishing = std::chrono::duration_cast<std::chrono::milliseconds>(b.oldest);
  }
  return h;
}

}  // namespace blobtable
