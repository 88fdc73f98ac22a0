// SPDX-License-Identifier: Apache-2.0
// Options shared by the store layers (the clock and the cache's ReadPolicy
// have their own headers, included here as before: blobtable/clock.h,
// blobtable/cache.h).
#ifndef BLOBTABLE_OPTIONS_H_
#define BLOBTABLE_OPTIONS_H_

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "blobtable/cache.h"
#include "blobtable/clock.h"
#include "blobtable/export.h"

namespace blobtable {

class BlobStore;

// Local backend: what an acknowledged write survives.
enum class LocalDurability {
  // Every commit waits until the disk has it (LMDB's two syncs: the data,
  // then the page that points at it). An acknowledged write survives a
  // crash of the process, of the system, and a power loss.
  kFull,
  // Every commit still syncs its data, but not the page that points at it
  // (LMDB's MDB_NOMETASYNC): one sync a commit instead of two. An
  // acknowledged write survives a crash of the process (kill -9) with
  // nothing lost. A crash of the system or a power loss may lose the last
  // commit acknowledged before it (the store opens as it was one commit
  // earlier: every write of that commit gone, none half there); it never
  // damages the store.
  kRelaxed,
};

// Options for opening a Store (see store.h).
struct StoreOptions {
  // The container holding the tables (Azure container rules: 3-63 characters,
  // lowercase letters, digits and single hyphens).
  std::string container = "blobtable";
  // Make the store if there is none: a local directory (and its parents)
  // becomes a store, an Azure container is created by the first write that
  // finds it missing. Off: Store::Open of a directory that holds no store
  // fails NotFound ("no store at DIR"), and a write into a missing
  // container fails NotFound.
  bool create_if_missing = true;
  // Clock for leases and timestamps; null means Clock::Real(). Not owned; must
  // outlive the store.
  Clock* clock = nullptr;
  // Local backend: the largest the LMDB file may grow to. The file grows only
  // as data is written; this reserves address space.
  uint64_t local_map_size = uint64_t{64} << 30;  // 64 GiB
  // Local backend: the mode of the files a new store creates (data.mdb,
  // lock.mdb, blobtable.store; less the umask); a directory made for it gets
  // the same plus search bits. 0600 keeps a store to its owner. A user who
  // can read but not write a store opens it read-only: reads work, writes
  // fail IOError saying so.
  unsigned local_file_mode = 0644;
  // Local backend: see LocalDurability. Stores of one process that share a
  // directory share its commits: while one of them asks kFull, all get it.
  LocalDurability local_durability = LocalDurability::kFull;
  // How many times a read-modify-write (merge, upsert-merge) retries after an
  // ETag race with another writer before it returns Conflict.
  int max_merge_attempts = 16;
  // If set, Store::Open passes the backend it opened through this and uses
  // what it returns: the hook for request logging, counting and fault
  // injection (see BlobStoreWrapper).
  std::function<std::shared_ptr<BlobStore>(std::shared_ptr<BlobStore>)> wrap_blob_store;

  // A single-entity read or write that meets an entity held by a transaction
  // in progress waits up to this long for it, resolving a transaction whose
  // coordinator died, then returns Busy. Must be longer than any transaction
  // lease (TransactionOptions::lease_seconds, txn_lease_seconds), so that a
  // dead coordinator's record lease can run out within it.
  std::chrono::milliseconds busy_timeout{70'000};
  // Lease length for the transaction machinery that single-entity writes
  // use when they resolve a dead transaction (15..60).
  int txn_lease_seconds = 30;
  // Transactions on a backend that applies an atomic batch (the local store)
  // commit as one batch, one LMDB write transaction: no record, locks or
  // leases. Off: through the lease coordinator, as on Azure
  // (docs/transactions.md#the-protocol); for tests of that protocol. Both may run on one store.
  bool atomic_commits = true;
  // Through the protocol, Commit() returns at the commit point and
  // the rest (intents rewritten plain, leases let go, the record deleted)
  // runs on the store's one background thread, and so does a reader's
  // rewrite of a decided intent it met; destroying the Store waits for it.
  // Off: Commit() finishes before it returns, and such a read rewrites the
  // intent before it returns (more round trips on the caller's time; the
  // interleaving simulation, which runs one thread at a time, needs it).
  bool finish_in_background = true;

  // Entities whose stored form is at most this many bytes carry a copy of
  // it in their blob's metadata (base64, docs/data-model.md#stored-form), so that a
  // query answers them from its listing without a GET, with or without the
  // cache. 0: no copies. Backends that run in-process (the local store)
  // never get them: their reads cost no round trip.
  size_t inline_body_max_bytes = 4096;
  // A query reads the rows its listing could not answer with up to this
  // many requests at once (1: one after another; in-process backends: 1).
  int max_parallel_reads = 8;

  // ---- Azure backend (a connection string as the location) ----
  // HTTP transport: "curl" (default) or "cpprest"; empty: the connection
  // string's HttpTransport setting, else curl.
  std::string http_transport;
  // CA bundle for TLS verification; empty: the connection string's CaFile,
  // else the system's. Verification is always on for https.
  std::string ca_file;
  // Per HTTP request (one attempt).
  std::chrono::milliseconds request_timeout{30'000};
  // Retries of throttled, failed (408, 429, 500, 502, 503, 504) and
  // unanswered requests: exponential backoff with jitter, bounded both by
  // attempts and by the total time spent.
  int max_attempts = 5;
  std::chrono::milliseconds retry_initial_delay{200};
  std::chrono::milliseconds retry_max_delay{8'000};
  std::chrono::milliseconds retry_max_total{60'000};
  // If set, receives one line per storage request attempt: method, blob,
  // HTTP status, error code, milliseconds, attempt. Never secrets.
  std::function<void(const std::string& line)> request_log;

  // ---- The local cache (Azure stores; docs/cache.md#the-local-cache) ----
  // Reads of an Azure store go through a local LMDB cache, revalidated with
  // If-None-Match; off for the local backend, which would only duplicate.
  bool cache = true;
  // Its directory, shared by every store and process that names it (made
  // owner-only); empty: $XDG_CACHE_HOME/blobtable, else ~/.cache/blobtable.
  std::string cache_directory;
  // Bound on cached bytes (bodies and properties); the least recently used
  // entries are evicted beyond it.
  uint64_t cache_max_bytes = uint64_t{1} << 30;  // 1 GiB
  // The policy of Table::Get and Table::Query when the call names none.
  ReadPolicy read_policy;
  // A stale-if-error read answers from the cache once this much time has
  // gone on a storage request that has not answered, retries or not.
  std::chrono::milliseconds stale_if_error_deadline{2'000};
  // After storage was found unreachable, reads answer from the cache without
  // trying storage for this long; the first read after it tries again.
  std::chrono::milliseconds unreachable_interval{5'000};
  // Receives warnings (a damaged cache moved aside, a cache that failed);
  // null: standard error.
  std::function<void(const std::string& message)> warn;
};

}  // namespace blobtable

#endif  // BLOBTABLE_OPTIONS_H_
