// SPDX-License-Identifier: Apache-2.0
// Store: the entry point. Opens a location and hands out tables.
//
//   auto store = blobtable::Store::Open("/var/lib/myapp/tables");
//   if (!store.ok()) { ... store.status().ToString() ... }
//   auto orders = (*store)->OpenTable("orders");
//   blobtable::Entity e("customer-42", "order-0001");
//   e.Set("total", 99.5).Set("items", int32_t{3});
//   auto stored = orders->Insert(e);          // stored->etag() is the new ETag
//
// Thread-safety: a Store and the Tables it hands out may be used from many
// threads at once. Several Stores (in one process or many) may open the same
// location at once.
#ifndef BLOBTABLE_STORE_H_
#define BLOBTABLE_STORE_H_

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "blobtable/export.h"
#include "blobtable/index.h"
#include "blobtable/metrics.h"
#include "blobtable/blob_store.h"
#include "blobtable/cache.h"
#include "blobtable/options.h"
#include "blobtable/retry.h"
#include "blobtable/status.h"
#include "blobtable/table.h"
#include "blobtable/txn.h"

namespace blobtable {

// What Store::RecoverAndReport did and found.
struct RecoveryReport {
  int resolved = 0;  // transactions finished or undone (what Recover returns)
  // A transaction whose coordinator may still be at work, left alone. It
  // holds a lock stripe of each of its partitions under a finite lease,
  // renewed while it runs;
  // once its coordinator stops they run out within kMaxLeaseSeconds
  // (TransactionOptions::lease_seconds is at most that), and then the next
  // reader, writer or Recover settles it.
  struct InFlight {
    std::string txn_id;
    std::vector<std::string> blobs;  // entity blobs of its intents (docs/data-model.md#blob-naming)
  };
  std::vector<InFlight> in_flight;
  static constexpr int kMaxLeaseSeconds = 60;
};

// What Store::RecoverAndReport looks at, and what it may delete.
struct RecoverOptions {
  // Delete damaged transaction records (and markers of releases before
  // 2026-11-28) instead of reporting them
  // (whoever meets their marks then clears them; a committed transaction's
  // writes not yet applied are lost).
  bool discard_damaged = false;
  // Also list every entity of every table, for intents no record names:
  // those of a coordinator that died in its first round before its pending
  // record was written (readers never see them; the next writer of such an
  // entity undoes its intent), or left by a release from before markers
  // (2026-11-26). Costs a listing of the whole store; without it Recover's
  // cost follows what is in flight (docs/transactions.md#recovery).
  bool scan_everything = false;
};

// What Store::DropTable did (so far, when its progress function has it).
struct DropTableReport {
  int64_t entities = 0;  // entity blobs deleted
  int64_t locks = 0;     // partition lock blobs and index blobs deleted
  // Blobs another writer changed while the drop ran: left (run it again).
  int64_t changed = 0;
};

struct DropTableOptions {
  // Drop it even while a transaction holds some of it (an entity under a
  // transaction's mark, a partition lock leased): those blobs are deleted
  // too, leases broken; that transaction's writes to the table are lost and
  // it may fail. Without it: Busy naming what is held, before anything is
  // deleted.
  bool force = false;
  // Called on the calling thread after each page of deletes (up to 1,000
  // blobs), with the report so far.
  std::function<void(const DropTableReport&)> progress;
};

// Store::Stats: what a table holds.
struct TableFigures {
  std::string name;          // lowercase
  int64_t entity_blobs = 0;  // its entity blobs (an entity a transaction holds may count twice
                             // or not at all: see `count` for entities)
  int64_t bytes = 0;         // their stored bodies
};

// Store::Stats: the embedded store's data file.
struct LocalFileFigures {
  std::string directory;
  uint64_t file_bytes = 0;  // data.mdb's size
  uint64_t page_size = 0;
  uint64_t pages_used = 0;  // pages up to the last in use
  uint64_t free_pages = 0;  // of those, free for reuse (after deletes and rewrites)
  int readers = 0;          // reader slots in use, in every process
  // About the file's size after Store::Compact (its records packed into
  // full pages): file_bytes less this is what compacting would give back.
  uint64_t compacted_bytes = 0;
};

struct StoreStats {
  std::vector<TableFigures> tables;      // every table that holds entities, by name
  std::optional<LocalFileFigures> file;  // the embedded store
  std::optional<CacheStats> cache;       // a store read through the local cache
};

// Store::Health's answer (docs/observability.md#health).
struct StoreHealth {
  // Whether storage can be used: the probe's outcome (HealthOptions::probe),
  // without one whether the last request had an answer.
  bool reachable = true;
  // The probe's failure, or the last failure of storage this store met (no
  // answer, HTTP 5xx, credentials refused: Azure), and when, on the
  // store's clock. Unset: none since the store opened.
  std::optional<Status> last_error;
  std::optional<TimePoint> last_error_at;
  // When storage last answered (Azure), on the store's clock.
  std::optional<TimePoint> last_answer_at;
  // The local cache: "none" (the embedded store, or no cache), "online",
  // or "answering from copies" (storage was unreachable moments ago: reads
  // the read policy lets fall back are answered stale, without a request,
  // for CacheOptions::unreachable_interval).
  std::string cache = "none";
  std::optional<CacheStats> cache_stats;
  // Commits of this store running now, and how long the oldest has run.
  int commits_in_flight = 0;
  std::chrono::milliseconds oldest_commit{0};
  // Committed transactions whose finishing (intents rewritten plain,
  // leases let go, records deleted) is queued or running on the store's
  // background threads, and how long ago the oldest committed.
  int finishing_backlog = 0;
  std::chrono::milliseconds oldest_finishing{0};
};

struct HealthOptions {
  // Send one request (a listing of at most one blob) to learn whether
  // storage answers now; off: judge by what the store last met, without a
  // request.
  bool probe = true;
};

// Store::Compact's report.
struct CompactReport {
  uint64_t bytes_before = 0, bytes_after = 0;
};

class BLOBTABLE_EXPORT Store {
 public:
  // Opens `location`: a directory for the embedded local store (created if
  // missing; "file:" prefix optional), or an Azure Storage connection string
  // (Azure Storage or Azurite; opening sends no request, and the container
  // is created by the first write that finds it missing): any
  // location with a part "Key=..." naming a connection-string key, in any
  // case. A location with ';' and '=' but no such key is InvalidArgument
  // (write file:DIR for such a directory). Fails
  // InvalidArgument on a bad container name or connection string, IOError if
  // the directory cannot be used. A service that cannot be reached is
  // found by the first call that needs it (Unavailable, or an answer from
  // the cache; docs/cache.md#the-local-cache).
  static Result<std::unique_ptr<Store>> Open(std::string_view location,
                                             const StoreOptions& options = {});

  // A store over any BlobStore (a test wrapper, a custom backend). One that
  // shares a local directory with other stores must keep the local store's
  // atomic batches (StoreOptions::wrap_blob_store says why): a store
  // without them commits through the lease coordinator, and an index
  // another store creates or drops there without the grace may miss its
  // writes.
  static std::unique_ptr<Store> FromBlobStore(std::shared_ptr<BlobStore> blobs,
                                              const StoreOptions& options = {});

  // A handle on table `name` (Azure table-name rules; case-insensitive).
  // Tables need no creation: a table exists once it holds an entity.
  Result<Table> OpenTable(std::string_view name) const;

  // A new transaction (see txn.h). InvalidArgument if `options` break a
  // rule of TransactionOptions (a lease outside 15..60 s, a renewal margin
  // negative or not shorter than the lease, a negative lock timeout).
  Result<Transaction> Begin(const TransactionOptions& options = {}) const;

  // Runs `fn` in a new transaction and commits it; if `fn` or the commit
  // fails with a status the policy retries (RetriesOn: Conflict, Busy,
  // LockTimeout, LeaseLost; nothing was committed), runs it all again in a
  // fresh transaction, after a backoff. `fn` buffers operations (and may
  // read through the transaction); returning an error stops: the
  // transaction is dropped and the error returned (retried if retryable).
  // Never retries OutcomeUnknown, which is returned as it is (see txn.h).
  // Returns what the successful Commit() did; `attempts` (optional)
  // receives how many transactions were run. InvalidArgument for a bad
  // policy or options, before fn runs.
  using TransactionFn = std::function<Status(Transaction& txn)>;
  Result<std::vector<CommittedWrite>> RunTransaction(const TransactionFn& fn,
                                                     const RetryPolicy& policy = {},
                                                     const TransactionOptions& options = {},
                                                     int* attempts = nullptr) const;

  // The tables that hold at least one entity, by name in lowercase (how
  // they are stored: table names are case-insensitive), sorted. Costs one
  // listing a table, and one more.
  Result<std::vector<std::string>> ListTables() const;

  // Secondary indexes (blobtable/index.h, docs/indexes.md). Each call
  // fails InvalidArgument for a bad table or index name or spec.
  //
  // Creates index `spec` on `table` and builds it online: publishes it as
  // building (from then on every writer of the store maintains it), waits
  // until no write that read the definitions before can still commit
  // (docs/indexes.md#building-online: 10 s on the store's clock on Azure;
  // no wait on the embedded store, whose commits check the definitions in
  // their own LMDB transaction), then
  // walks the table writing the entries of what it holds, and marks it
  // ready. Writers go on meanwhile. A build that stopped (a crash, an
  // error) resumes where it stopped when CreateIndex is called again with
  // the same spec. Conflict if the table has another index of that name, or
  // if a unique index finds two entities holding the same values (the
  // index is then dropped, and the message names both).
  Status CreateIndex(std::string_view table, const IndexSpec& spec,
                     const CreateIndexOptions& options = {}) const;
  // Stops maintaining index `name` of `table` and deletes its entries. It
  // is marked dropping at once (queries that read the definitions from then
  // on refuse it, writers stop maintaining it), then, after the wait a build waits too, its
  // entries are deleted and its definition removed: in the background on the store's threads
  // (destroying the Store waits for them), or before DropIndex returns
  // with options.wait or on a store that finishes commits inline
  // (StoreOptions::finish_in_background off). A drop cut short (the process
  // ended, an error) leaves the index listed as dropping: DropIndex again
  // finishes it, and CreateIndex of that name is Conflict until then.
  // NotFound if there is no such index.
  Status DropIndex(std::string_view table, std::string_view name,
                   const DropIndexOptions& options = {}) const;
  // The indexes of `table` as stored now, in the order they were created.
  Result<std::vector<IndexInfo>> ListIndexes(std::string_view table) const;
  // Walks the table and the index and reports where they disagree
  // (IndexCheckReport). Not a snapshot: run it when no writer is at work, or
  // again on what it reports. Holds the index's keys in memory.
  Result<IndexCheckReport> CheckIndex(std::string_view table, std::string_view name) const;

  // Deletes table `name`: every entity and partition lock blob it has, and
  // its indexes.
  // First a listing of the whole table to find what a transaction holds
  // (refused, Busy naming it, unless options.force), then the blobs page by
  // page, each at the ETag listed: a page is one atomic batch where the
  // store commits batches atomically (the embedded store), concurrent
  // Deletes elsewhere. Not atomic as a whole: writers during a drop may
  // leave entities (DropTableReport::changed counts what changed under it);
  // its indexes are marked dropping first (a drop cut short leaves them
  // so: DropTable or DropIndex again finishes it), and their entries are
  // walked until none changed under the walk (Busy if they keep changing:
  // run it again), the definitions last;
  // a drop that failed part way is resumed by running it again. A table
  // with nothing left is not listed by ListTables. InvalidArgument for a
  // bad name.
  Result<DropTableReport> DropTable(std::string_view name,
                                    const DropTableOptions& options = {}) const;

  // Figures of the whole store: a listing of every table (its entity blobs
  // and their bytes), the embedded store's file, the cache's counters.
  Result<StoreStats> Stats() const;

  // The embedded store only: a consistent copy of its directory (every
  // container) into `directory`, which must not exist or be empty, as the
  // store was at one moment while writers go on (LMDB's mdb_env_copy, one
  // read transaction), synced: it opens as a store. InvalidArgument for a
  // non-empty `directory`, or for another backend (back that up with an
  // export of every table: `blobtable backup --export`).
  Status Backup(std::string_view directory) const;

  // Rewrites the embedded store in `directory` without its free pages
  // (mdb_env_copy's compaction) and puts the copy in its place, so the file
  // shrinks to what it holds. Only while no process has the store open:
  // Busy naming the process that has (this one included). Processes that
  // try to open it meanwhile wait until the copy is in place. NotFound if
  // `directory` holds no store.
  static Result<CompactReport> Compact(std::string_view directory);

  // Finishes or undoes every transaction whose coordinator died after its
  // first round (normally done lazily by whoever next touches its
  // partitions); returns how many. It finds them from their records (each
  // created pending in the transaction's first round), not from a listing
  // of every entity: its requests follow what is
  // in flight, not the size of the store (RecoverOptions::scan_everything
  // for the rest). A damaged transaction record (it cannot be told
  // whether that transaction committed) is reported as Corruption naming
  // it, after the others were resolved; with `discard_damaged`, such records
  // are deleted instead (whoever meets their marks then clears them; a
  // committed one's writes not yet applied are lost) and counted.
  Result<int> Recover(bool discard_damaged = false) const;
  // The same, saying also which transactions it left alone because their
  // coordinator may still be at work.
  Result<RecoveryReport> RecoverAndReport(bool discard_damaged = false) const;
  Result<RecoveryReport> RecoverAndReport(const RecoverOptions& options) const;

  // What this store's local cache counted (with the totals of its
  // directory); NotFound if it reads without one (the local backend,
  // StoreOptions::cache off, or a cache that could not be opened).
  Result<CacheStats> cache_stats() const;

  // What this store counted since it was opened: its calls by kind and
  // outcome, Azure's HTTP requests, retries and waits, its cache
  // (docs/observability.md#metrics lists every name). Counting is always
  // on; taking a snapshot costs a lock and a copy (and reads the cache
  // directory's size, where there is one), never a request.
  MetricsSnapshot Metrics() const;
  // A function that takes Metrics() of this store, callable from any thread
  // also after the store is gone (then its counts and gauges as they were
  // when it closed): for a tool that prints them at exit or on a signal.
  std::function<MetricsSnapshot()> MetricsSource() const;

  // Whether storage answers, what failed last and when, the cache's state,
  // the commits in flight and the finishing backlog (StoreHealth). Never
  // fails: a probe's failure is its answer (reachable false, and the
  // error). `blobtable health` prints it.
  StoreHealth Health(const HealthOptions& options = {}) const;

  // Returns once what every commit so far left to the background threads
  // (StoreOptions::finish_in_background) has run: its intents are plain
  // entities again, its leases and record gone (or left to a resolver where
  // storage failed). The destructor does the same.
  void WaitForFinishing() const;
  ~Store();

  BlobStore& blob_store() const;
  const StoreOptions& options() const;

 private:
  BLOBTABLE_HIDDEN explicit Store(std::shared_ptr<internal::StoreCore> core)
      : core_(std::move(core)) {}
  friend class Lock;
  friend class WorkQueue;
  // Where the coordination primitives count (Store::Metrics).
  BLOBTABLE_HIDDEN internal::CoordMetrics& coord_metrics() const;
  // FromBlobStore's work, counting in `metrics` (where Open's backend counts).
  BLOBTABLE_HIDDEN static std::unique_ptr<Store> Make(
      std::shared_ptr<BlobStore> blobs, const StoreOptions& options,
      std::shared_ptr<internal::MetricsRegistry> metrics);
  // The part of DropIndex after marking the index dropping (index_admin.cc).
  BLOBTABLE_HIDDEN Status RemoveDropped(const std::string& table, const std::string& name) const;
  // DropTable's walk over the blobs under `prefix`; with `settle`, walked
  // again until a walk meets no blob changed under it (report.changed then
  // counts the last walk's).
  BLOBTABLE_HIDDEN Status DropUnder(const std::string& prefix, const DropTableOptions& options,
                                    DropTableReport& report, bool settle = false) const;
  std::shared_ptr<internal::StoreCore> core_;
};

// True if Store::Open takes `location` as an Azure Storage connection
// string: a ';'-separated part "Key=..." names a key the connection-string
// parser knows (any case, spaces around the key), and no "file:" prefix.
BLOBTABLE_EXPORT bool IsConnectionString(std::string_view location);

}  // namespace blobtable

#endif  // BLOBTABLE_STORE_H_
