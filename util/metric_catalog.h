// SPDX-License-Identifier: Apache-2.0
// Every metric family a store keeps, with its unit and meaning, in one place
// (util/metrics.h). docs/observability.md#metrics lists the same names, and
// tests/metrics_test.cc fails if the two differ by one.
#ifndef BLOBTABLE_UTIL_METRIC_CATALOG_H_
#define BLOBTABLE_UTIL_METRIC_CATALOG_H_

#include "util/metrics.h"

namespace blobtable::internal::metric {

// ---- Public calls (kv/) ----
inline constexpr MetricDef kOperations{
    "blobtable_operations", MetricType::kCounter, "",
    "Calls of the table API, by kind (op) and outcome (code: a Status code name)", true};
inline constexpr MetricDef kOperationSeconds{"blobtable_operation_seconds", MetricType::kHistogram,
                                             "seconds",
                                             "How long calls of the table API took, by kind", true};
inline constexpr MetricDef kRowsReturned{"blobtable_query_rows_returned", MetricType::kCounter, "",
                                         "Entities queries and scans returned", false};
inline constexpr MetricDef kRowsScanned{
    "blobtable_query_rows_scanned", MetricType::kCounter, "",
    "Entities queries and scans read to answer (returned or left out by their filter)", false};

// ---- Azure Storage's HTTP requests (storage/azure/) ----
inline constexpr MetricDef kHttpRequests{
    "blobtable_http_requests", MetricType::kCounter, "",
    "HTTP requests sent to Azure Storage (each attempt), by operation (op) and HTTP status "
    "(status; \"none\": no answer)",
    true};
inline constexpr MetricDef kHttpRequestSeconds{
    "blobtable_http_request_seconds", MetricType::kHistogram, "seconds",
    "How long HTTP requests to Azure Storage took to answer (each attempt), by operation", true};
inline constexpr MetricDef kHttpRetries{"blobtable_http_retries", MetricType::kCounter, "",
                                        "HTTP attempts after a call's first", false};
inline constexpr MetricDef kHttpThrottled{
    "blobtable_http_throttled", MetricType::kCounter, "",
    "HTTP answers telling the client to slow down (429, 503), by status", true};
inline constexpr MetricDef kHttpBackoffSeconds{"blobtable_http_backoff_seconds",
                                               MetricType::kCounter,
                                               "seconds",
                                               "Time spent waiting between a call's HTTP attempts",
                                               false,
                                               1e-9};

// ---- The embedded store's data file (storage/local/) ----
inline constexpr MetricDef kLocalFileBytes{"blobtable_local_file_bytes", MetricType::kGauge,
                                           "bytes", "data.mdb's size on disk", false};
inline constexpr MetricDef kLocalMapBytes{
    "blobtable_local_map_bytes", MetricType::kGauge, "bytes",
    "The map's size: how far the file may grow before the store remaps it larger", false};
inline constexpr MetricDef kLocalUsedBytes{
    "blobtable_local_used_bytes", MetricType::kGauge, "bytes",
    "The file up to its last page in use (free pages within it included)", false};
inline constexpr MetricDef kLocalFreeBytes{
    "blobtable_local_free_bytes", MetricType::kGauge, "bytes",
    "Pages within the used part free for reuse (after deletes and rewrites)", false};
inline constexpr MetricDef kLocalReaders{"blobtable_local_readers", MetricType::kGauge, "",
                                         "Reader slots in use, in every process", false};

// ---- Transactions (txn/) ----
inline constexpr MetricDef kTxnCommits{
    "blobtable_txn_commits", MetricType::kCounter, "",
    "Transaction commits, by how they committed (path: read_only, atomic, coordinator; none: "
    "nothing to commit) and outcome (code: OK, Conflict, Busy, ...)",
    true};
inline constexpr MetricDef kTxnCommitSeconds{
    "blobtable_txn_commit_seconds", MetricType::kHistogram, "seconds",
    "How long commits took, from Commit() to its answer, by path", true};
inline constexpr MetricDef kTxnLockWaits{
    "blobtable_txn_lock_waits", MetricType::kCounter, "",
    "Waits of a commit for something busy (a partition lock, an entity held by another)", false};
inline constexpr MetricDef kTxnLockWaitSeconds{
    "blobtable_txn_lock_wait_seconds",
    MetricType::kCounter,
    "seconds",
    "Time spent in those waits (and single-entity calls' waits for an entity a transaction "
    "holds)",
    false,
    1e-9};
inline constexpr MetricDef kTxnCommitRounds{
    "blobtable_txn_commit_rounds", MetricType::kCounter, "",
    "Protocol rounds commits ran, by path (coordinator: 4 when nothing was busy, one more per "
    "wait; atomic: a batch each try); over blobtable_txn_commits, the rounds per commit",
    true};
inline constexpr MetricDef kTxnCommitRequests{
    "blobtable_txn_commit_requests", MetricType::kCounter, "",
    "HTTP requests commits sent (Azure; each attempt), by path; over blobtable_txn_commits, "
    "the requests per commit",
    true};
inline constexpr MetricDef kTxnFinishingBacklog{
    "blobtable_txn_finishing_backlog", MetricType::kGauge, "",
    "Finishing jobs (a commit's: intents rewritten plain, leases let go, the record deleted; "
    "a read's rewrite of a decided intent it met) queued or running on the store's "
    "background threads",
    false};
inline constexpr MetricDef kTxnFinishingLagSeconds{
    "blobtable_txn_finishing_lag_seconds", MetricType::kHistogram, "seconds",
    "From a finishing job's start (a commit point, a read that met a decided intent) to "
    "its end",
    false};
inline constexpr MetricDef kTxnAborts{"blobtable_txn_aborts", MetricType::kCounter, "",
                                      "Transactions given up uncommitted: Abort(), or destroyed",
                                      false};
inline constexpr MetricDef kRecoveries{"blobtable_recoveries", MetricType::kCounter, "",
                                       "Store::Recover runs, by outcome (code)", true};
inline constexpr MetricDef kRecoveredTxns{
    "blobtable_recovered_transactions", MetricType::kCounter, "",
    "Abandoned transactions Store::Recover finished or undid", false};

// ---- Coordination (coord/) ----
inline constexpr MetricDef kLockAcquisitions{
    "blobtable_lock_acquisitions", MetricType::kCounter, "",
    "Lock::Acquire calls (and a leader's campaigns), by outcome (code: OK, LockTimeout, ...)",
    true};
inline constexpr MetricDef kLocksLost{
    "blobtable_locks_lost", MetricType::kCounter, "",
    "Locks (and leaderships) lost while held: a renewal refused, or the lease run out", false};
inline constexpr MetricDef kQueueDeliveries{"blobtable_queue_deliveries", MetricType::kCounter, "",
                                            "Items WorkQueue::Dequeue handed out", false};
inline constexpr MetricDef kQueueCompletions{"blobtable_queue_completions", MetricType::kCounter,
                                             "", "WorkQueue::Complete calls, by outcome (code)",
                                             true};
inline constexpr MetricDef kQueueDeadLetters{
    "blobtable_queue_dead_letters", MetricType::kCounter, "",
    "Items moved to the dead letters after max_dequeues deliveries", false};

// ---- The local cache (cache/) ----
inline constexpr MetricDef kCacheHits{"blobtable_cache_hits", MetricType::kCounter, "",
                                      "Reads the local cache answered without a request", false};
inline constexpr MetricDef kCacheRevalidations{
    "blobtable_cache_revalidations", MetricType::kCounter, "",
    "Cached copies checked with storage, by result (not_modified: 304; changed: 200, a new "
    "body)",
    true};
inline constexpr MetricDef kCacheMisses{"blobtable_cache_misses", MetricType::kCounter, "",
                                        "Reads of blobs the cache did not hold", false};
inline constexpr MetricDef kCacheStale{"blobtable_cache_stale_answers", MetricType::kCounter, "",
                                       "Answers marked stale (offline, or storage unreachable)",
                                       false};
inline constexpr MetricDef kCacheEvictions{"blobtable_cache_evictions", MetricType::kCounter, "",
                                           "Entries dropped to keep the cache within its bound",
                                           false};
inline constexpr MetricDef kCacheSavedBytes{
    "blobtable_cache_saved_bytes", MetricType::kCounter, "bytes",
    "Body bytes not transferred thanks to hits and 304s", false};
inline constexpr MetricDef kCacheBytes{
    "blobtable_cache_bytes", MetricType::kGauge, "bytes",
    "What the cache directory holds now (every process's), bodies and properties", false};
inline constexpr MetricDef kCacheEntries{"blobtable_cache_entries", MetricType::kGauge, "",
                                         "Entries the cache directory holds now", false};

// Every family above, in the order docs/observability.md lists them.
inline constexpr const MetricDef* kAll[] = {&kOperations,          &kOperationSeconds,
                                            &kRowsReturned,        &kRowsScanned,
                                            &kHttpRequests,        &kHttpRequestSeconds,
                                            &kHttpRetries,         &kHttpThrottled,
                                            &kHttpBackoffSeconds,  &kLocalFileBytes,
                                            &kLocalMapBytes,       &kLocalUsedBytes,
                                            &kLocalFreeBytes,      &kLocalReaders,
                                            &kTxnCommits,          &kTxnCommitSeconds,
                                            &kTxnLockWaits,        &kTxnLockWaitSeconds,
                                            &kTxnCommitRounds,     &kTxnCommitRequests,
                                            &kTxnFinishingBacklog, &kTxnFinishingLagSeconds,
                                            &kTxnAborts,           &kRecoveries,
                                            &kRecoveredTxns,       &kLockAcquisitions,
                                            &kLocksLost,           &kQueueDeliveries,
                                            &kQueueCompletions,    &kQueueDeadLetters,
                                            &kCacheHits,           &kCacheRevalidations,
                                            &kCacheMisses,         &kCacheStale,
                                            &kCacheEvictions,      &kCacheSavedBytes,
                                            &kCacheBytes,          &kCacheEntries};

}  // namespace blobtable::internal::metric

#endif  // BLOBTABLE_UTIL_METRIC_CATALOG_H_
