// SPDX-License-Identifier: Apache-2.0
// What the transaction layer needs from the store that opened it (internal):
// the storage, the cache's read entry point, the time service, and the few
// settings its waits, retries and rewrites follow. The store's own core
// (kv/store_core.h) is one of these plus every option as given.
#ifndef BLOBTABLE_TXN_TXN_CONTEXT_H_
#define BLOBTABLE_TXN_TXN_CONTEXT_H_

#include <algorithm>
#include <chrono>
#include <memory>
#include <string>

#include "blobtable/blob_store.h"
#include "blobtable/clock.h"
#include "cache/caching_blob_store.h"
#include "storage/in_place.h"
#include "txn/finisher.h"
#include "txn/lock_stripes.h"
#include "txn/recovery.h"
#include "txn/txn_metrics.h"
#include "util/call_observer.h"
#include "util/metrics.h"

namespace blobtable::internal {

class SchemaCache;  // txn/index_upkeep.h

struct TxnContext {
  // The top of the store's stack: the cache's wrapper when there is one.
  std::shared_ptr<BlobStore> blobs;
  // The same object as `blobs` when the store reads through a cache; null
  // without one.
  std::shared_ptr<CachingBlobStore> cache;
  // The same object as `blobs` when that is a backend that reads in place
  // with nothing stacked on it (storage/in_place.h): gets and queries
  // decode entities straight from its pages. Null otherwise.
  InPlaceReader* in_place = nullptr;
  Clock* clock = nullptr;  // never null once opened
  // StoreOptions::txn_lease_seconds, busy_timeout, max_merge_attempts;
  // TestingHooks::atomic_commits (testing/hooks.h).
  int txn_lease_seconds = 30;
  std::chrono::milliseconds busy_timeout{70'000};
  int max_merge_attempts = 16;
  bool atomic_commits = true;
  // The backend's traits().atomic_batch, as it said when the store was
  // made: how this store commits must not change under it (a wrapper whose
  // traits changed later would have it commit one way, then the other).
  bool atomic_batch = false;
  // Bytes up to which an entity's blob carries an inline copy of its body
  // (0: none), and how many reads a query sends at once; both from the
  // options, adapted to the backend (BlobStoreTraits).
  size_t inline_body_max = 0;
  int parallel_reads = 1;
  // Runs what follows a commit point; null: commits finish inline.
  std::shared_ptr<Finisher> finisher;
  // What this store's finishing made of the intents it rewrote (always set).
  std::shared_ptr<Rewrites> rewrites;
  // Which partition lock stripes this store's transactions hold (always set).
  std::shared_ptr<LockStripes> lock_stripes;
  // The store's copies of its tables' index definitions (always set by
  // Store; null: no index is maintained).
  std::shared_ptr<SchemaCache> schemas;
  // Where the store counts (Store::Metrics; always set by Store), and its
  // transactions' counters in it (null: not counted).
  std::shared_ptr<MetricsRegistry> metrics;
  std::shared_ptr<TxnMetrics> txn_metrics;
  // The commits running now (always set by Store).
  std::shared_ptr<CommitsInFlight> commits_in_flight;
  // The tracer and the slow-call log (StoreOptions::tracer, slow_calls);
  // null when neither is on.
  std::shared_ptr<const Observing> observing;

  // How many requests of one commit round go out at once: a round is meant
  // to cost one round trip, so up to 32 (more if queries may send more);
  // one at a time on an in-process backend (no round trip to save).
  size_t CommitWidth() const {
    if (blobs->traits().in_process) return 1;
    return static_cast<size_t>(std::max(32, parallel_reads));
  }
  // Whether this store commits as atomic batches: the backend applies them
  // (the local store) and TestingHooks::atomic_commits is on. Then every
  // commit checks the index definitions it followed in its own batch
  // (txn/definitions_check.h); otherwise through the lease coordinator, as
  // on Azure, and plain writes are single requests.
  bool CommitsInBatches() const { return atomic_commits && atomic_batch; }
  // Backoff between tries at something busy.
  // Counted as a wait for something busy (Store::Metrics, the slow-call
  // log) by the time asked for: the clock's, a test's fake one too.
  void Wait(std::chrono::milliseconds d) const {
    clock->SleepFor(d);
    Tally(&CallTally::lock_wait_ns, d);
    if (txn_metrics) txn_metrics->Waited(d);
  }
  // The `*round`-th wait of a retry loop (2, 4, 8, ... ms, at most 200 ms);
  // advances *round.
  void Backoff(int* round) const {
    Wait(std::chrono::milliseconds(std::min(200, 2 << std::min((*round)++, 7))));
  }
  // Reads entity blob `blob` as `policy` allows: through the cache when the
  // store has one (`listed_etag`: what a listing just showed); without one
  // from storage, except that an Offline read of a remote store is NotFound
  // without a request (nothing is cached). ReadPolicy::Validate() is
  // storage's answer, never stale (a cached copy still saves the body).
  Result<CachedGet> ReadEntityBlob(const std::string& blob, const ReadPolicy& policy,
                                   std::string_view listed_etag = {}) const;
  // The tracer spans go to, or null.
  Tracer* tracer() const { return observing ? observing->tracer.get() : nullptr; }
  // What settling another transaction's leftovers takes.
  ResolveContext Resolver() const { return {*blobs, *clock, txn_lease_seconds, inline_body_max}; }
};

}  // namespace blobtable::internal

#endif  // BLOBTABLE_TXN_TXN_CONTEXT_H_
