// SPDX-License-Identifier: Apache-2.0
// Options for opening a Store, by concern: the store's own (container,
// clock, warnings, tables and transactions), each backend's
// (blobtable/storage_options.h: LocalOptions, AzureOptions) and the cache's
// (blobtable/cache.h: CacheOptions, ReadPolicy). The clock has its own
// header, blobtable/clock.h.
#ifndef BLOBTABLE_OPTIONS_H_
#define BLOBTABLE_OPTIONS_H_

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "blobtable/cache.h"
#include "blobtable/clock.h"
#include "blobtable/storage_options.h"
#include "blobtable/export.h"
#include "blobtable/trace.h"

namespace blobtable {

class BlobStore;
namespace internal {
struct TestingHooks;  // testing/hooks.h: seams for tests and benchmarks only
}  // namespace internal

// StoreOptions::slow_calls: public calls that took long, each described in
// one line (docs/observability.md#the-slow-call-log).
struct SlowCallLog {
  // A call (a table call, a commit, a recover) that took at least this long
  // is logged (0: every call); unset: none.
  std::optional<std::chrono::milliseconds> threshold;
  // Receives the lines, whole, possibly from several threads at once: "blobtable:
  // slow get on table orders: 812.4 ms, OK; 3 requests 805.1 ms, 2 retries,
  // backoff 600.0 ms, lock waits 0.0 ms, finishing waits 0.0 ms" (the
  // call's time, its outcome, and where it went: storage requests and their
  // time, retries and the backoff between them, waits for busy locks or
  // entities, waits for this store's own finishing). Names the table,
  // never a key or a credential. Null: StoreOptions::warn.
  std::function<void(const std::string& line)> sink;
};

// Options for opening a Store (see store.h).
struct StoreOptions {
  // The container holding the tables (Azure container rules: 3-63 characters,
  // lowercase letters, digits and single hyphens).
  std::string container = kDefaultContainer;
  // Make the store if there is none: a local directory (and its parents)
  // becomes a store, an Azure container is created by the first write that
  // finds it missing, a local container by its first write. Off:
  // Store::Open of a directory that holds no store fails NotFound ("no
  // store at DIR"), and a write into a missing container fails NotFound
  // (on either backend).
  bool create_if_missing = true;
  // Clock for leases and timestamps; null means Clock::Real(). Not owned; must
  // outlive the store.
  Clock* clock = nullptr;
  // Receives warnings (a damaged cache moved aside, a cache that failed);
  // null: standard error.
  std::function<void(const std::string& message)> warn;
  // If set, receives one line per storage request, whole, possibly from
  // several threads at once: "blobtable: PUT t/orders/e/-p/-r -> 412
  // ConditionNotMet 3.2 ms attempt 1" (operation, blob, outcome,
  // milliseconds, attempt). Azure: each HTTP attempt, retries included;
  // the local store: each call. Never secrets
  // (docs/azure.md#request-log-interoperability-service-version).
  std::function<void(const std::string& line)> request_log;
  // If set, receives a span for each public call, commit round and storage
  // request (blobtable/trace.h, docs/observability.md#traces). Null: none,
  // for the cost of a branch per call.
  std::shared_ptr<Tracer> tracer;
  // The slow-call log; off unless its threshold is set.
  SlowCallLog slow_calls;

  // Each backend's own, read by the one the location names.
  LocalOptions local;
  AzureOptions azure;
  // The local cache (Azure stores; docs/cache.md#the-local-cache).
  CacheOptions cache;

  // ---- Tables and transactions ----
  // How many times a read-modify-write (merge, upsert-merge) retries after an
  // ETag race with another writer before it returns Conflict.
  int max_merge_attempts = 16;
  // If set, Store::Open passes the backend it opened through this and uses
  // what it returns: the hook for request logging, counting and fault
  // injection (see BlobStoreWrapper). Over a local store, what it returns
  // must keep its atomic batches (traits().atomic_batch and CommitBatch, as
  // BlobStoreWrapper forwards them): every store of a directory commits in
  // batches that check the index definitions they followed
  // (docs/indexes.md#building-online). Open fails InvalidArgument if its
  // traits hide them; if it does not forward CommitBatch, every write fails
  // InvalidArgument. A store reads the traits once, when it is made. For the
  // same reason, a store made with Store::FromBlobStore over a local
  // directory's store must not hide them either.
  std::function<std::shared_ptr<BlobStore>(std::shared_ptr<BlobStore>)> wrap_blob_store;

  // A single-entity read or write that meets an entity held by a transaction
  // in progress waits up to this long for it, resolving a transaction whose
  // coordinator died, then returns Busy (on a table with indexes, where a
  // write is a transaction, so does a lock it waits for). Must be longer than any transaction
  // lease (TransactionOptions::lease_seconds, txn_lease_seconds), so that a
  // dead coordinator's record lease can run out within it.
  std::chrono::milliseconds busy_timeout{70'000};
  // Lease length for the transaction machinery that single-entity writes
  // use when they resolve a dead transaction (15..60).
  int txn_lease_seconds = 30;
  // Through the protocol, Commit() returns at the commit point and
  // the rest (intents rewritten plain, leases let go, the record deleted)
  // runs on the store's background threads (up to 16), and so does a reader's
  // rewrite of a decided intent it met; destroying the Store waits for it.
  // Off: Commit() finishes before it returns, and such a read rewrites the
  // intent before it returns (more round trips on the caller's time; the
  // interleaving simulation, which runs one thread at a time, needs it).
  bool finish_in_background = true;
  // For a process that makes a few calls and exits (a command-line tool, a
  // serverless function): its transactions lease each partition's first
  // lock stripe, which exists once a transaction of such a process has run
  // in the partition, rather than a stripe drawn for this store, which it
  // would often have to create first (two requests and two round trips more:
  // docs/transactions.md#cost). Off (long-running processes): each store
  // draws where it starts among a partition's 16 lock stripes, so that
  // processes committing on disjoint rows of one partition lease different
  // ones instead of waiting for each other. Safe either way: a stripe is only
  // its coordinator's sign of life (docs/protocol.md, invariant L2). The cost
  // of on: such processes share that stripe, so one killed while holding it
  // holds up the others' transactions on that partition until its lease runs
  // out (txn_lease_seconds).
  bool short_lived = false;

  // Entities whose stored form is at most this many bytes carry a copy of
  // it in their blob's metadata (base64, docs/data-model.md#stored-form), so that a
  // query answers them from its listing without a GET, with or without the
  // cache. 0: no copies. Backends that run in-process (the local store)
  // never get them: their reads cost no round trip.
  size_t inline_body_max_bytes = 4096;
  // A query reads the rows its listing could not answer with up to this
  // many requests at once (1: one after another; in-process backends: 1).
  int max_parallel_reads = 8;

  // Seams for tests and benchmarks (testing/hooks.h; e.g. transactions
  // through the lease coordinator on the local store); null: none. Not a
  // stable interface.
  std::shared_ptr<const internal::TestingHooks> testing;
};

}  // namespace blobtable

#endif  // BLOBTABLE_OPTIONS_H_
