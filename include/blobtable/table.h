// SPDX-License-Identifier: Apache-2.0
// Table: insert, replace, merge, upsert, delete, get and query entities of
// one table. Obtain one from Store::OpenTable. A Table is a cheap handle
// (copy it freely) and is thread-safe: calls may run from many threads and
// processes at once; each call is atomic on its entity.
//
// Failures, by Code:
//   InvalidArgument  bad table name, key, property, size, or ETag argument
//   NotFound         the entity does not exist (Get, Replace, Merge, Delete)
//   Conflict         Insert of an existing entity; an ETag that no longer
//                    matches (re-read and retry)
//   Busy             the entity is leased by a transaction in progress (on a
//                    table with indexes, where a write is a transaction, also
//                    a lock it waited for past StoreOptions::busy_timeout)
//   Corruption       the stored blob is not a valid entity (names the blob)
//   Unavailable/IOError  the storage backend failed
#ifndef BLOBTABLE_TABLE_H_
#define BLOBTABLE_TABLE_H_

#include <functional>
#include <iterator>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "blobtable/export.h"
#include "blobtable/blob_store.h"
#include "blobtable/entity.h"
#include "blobtable/entity_view.h"
#include "blobtable/index.h"
#include "blobtable/options.h"
#include "blobtable/retry.h"
#include "blobtable/status.h"

namespace blobtable {

namespace internal {
struct StoreCore;
class MetricsRegistry;       // util/metrics.h
class CoordMetrics;          // kv/op_metrics.h
enum class WriteMode : int;  // txn/entity_access.h
}  // namespace internal

struct QueryOptions {
  // Only this partition; unset: the whole table, in (PartitionKey, RowKey) order.
  std::optional<std::string> partition_key;
  // RowKey range, both ends inclusive, byte-wise ordinal order of UTF-8.
  std::optional<std::string> row_key_from;
  std::optional<std::string> row_key_to;
  // Only RowKeys that start with these bytes (with the bounds above, if
  // any). With partition_key set, the listing itself is narrowed to them.
  std::optional<std::string> row_key_prefix;
  // Most entities in one page: 1..1000 (Azure Tables' page limit).
  int top = 1000;
  // From the previous page's QueryPage::continuation; empty for the first.
  std::string continuation;
  // How rows may be answered from the local cache; unset: the store's
  // StoreOptions::cache.read_policy.
  std::optional<ReadPolicy> policy;
  // Only rows matching this Azure Tables $filter (docs/api.md#filters), e.g.
  // "PartitionKey eq 'p' and Price ge 10.0"; empty: every row. Malformed:
  // InvalidArgument naming the position. PartitionKey eq and RowKey bounds
  // in its top-level `and` narrow the listing like the fields above; other
  // conditions are checked on each row, from the copy its listing carries
  // where there is one (no GET for a row that does not match). With a
  // filter a page holds the matches of one listing, as in Azure: it may hold
  // fewer than `top` rows, even none, while `continuation` says more follow.
  std::string filter;
  // Only these properties in each row ($select); PartitionKey, RowKey,
  // Timestamp and the ETag always come, except from a covered index query
  // (QueryIndex): no ETag and no Timestamp there. Empty: every property.
  std::vector<std::string> select;
};

struct QueryPage {
  std::vector<Entity> entities;  // in (PartitionKey, RowKey) order
  // Non-empty when more entities match: pass it back in QueryOptions.
  std::string continuation;
  // Some rows, or the listing itself, came from the cache unvalidated
  // (offline, or storage unreachable): rows may be missing or old.
  bool stale = false;
};

// Table::Visit's function: called with each row as a view (valid only
// during the call). An error it returns stops the visit, which returns it.
using EntityVisitor = std::function<Status(const EntityView& row)>;

// What Table::Visit visited.
struct VisitedPage {
  int64_t rows = 0;          // the rows handed to the visitor
  std::string continuation;  // as QueryPage::continuation
  bool stale = false;        // as QueryPage::stale
};

// What Table::DeleteWhere did (so far, when its progress function has it).
struct DeleteWhereReport {
  int64_t matched = 0;  // entities the query matched
  int64_t deleted = 0;  // of them, deleted (0 in a dry run)
  // Of them, changed or deleted by another writer after they were read:
  // left as they are (run it again to take them too).
  int64_t changed = 0;
};

struct DeleteWhereOptions {
  // Count what would be deleted; delete nothing.
  bool dry_run = false;
  // Called on the calling thread after each batch (up to 500 entities), with
  // the report so far.
  std::function<void(const DeleteWhereReport&)> progress;
};

class TableScan;

// InvalidArgument saying why, if `name` is not a table name Azure Tables
// accepts: 3-63 ASCII letters and digits, starting with a letter, not
// "tables" (any case). Store::OpenTable checks the same.
BLOBTABLE_EXPORT Status ValidateTableName(std::string_view name);

// Table::Update's function: called with the entity as stored (exists), or
// with a new entity holding only the keys (!exists). It changes the
// properties and returns OK to have them written, or an error to stop:
// Update then writes nothing and returns that error. It may run several
// times (once an attempt), so it should do nothing but change the entity.
using UpdateFn = std::function<Status(Entity& entity, bool exists)>;

class BLOBTABLE_EXPORT Table {
 public:
  // An empty handle, for a member assigned later: every call on it fails
  // InvalidArgument ("an empty Table handle"). Assign one from
  // Store::OpenTable.
  Table() = default;
  // False for an empty handle.
  bool valid() const { return core_ != nullptr; }
  const std::string& name() const { return name_; }

  // The entity with its ETag and Timestamp, read by the store's
  // StoreOptions::cache.read_policy, or by `policy` (Entity::stale() says whether
  // it came from the cache unvalidated).
  Result<Entity> Get(std::string_view partition_key, std::string_view row_key) const;
  Result<Entity> Get(std::string_view partition_key, std::string_view row_key,
                     const ReadPolicy& policy) const;

  // Get, with the entity handed to `visit` as a view instead of copied into
  // an Entity: on the embedded store an entity no transaction has marked is
  // read where it lies, without copying a value (as Visit reads rows); any
  // other, and every entity of a store with wrappers or a cache, is read as
  // Get reads it and handed over as a view of that entity
  // (EntityView::stale() as Entity::stale()). Same checks and errors as Get
  // but one, Visit's: on the embedded store a value read in place is not
  // checked against its checksum (its record's head is, and the entity must
  // decode), so one damaged on disk in a way that still decodes is handed
  // over as it lies, where Get answers Corruption (docs/backends.md,
  // "Checksums"). An error found before the entity is handed over means
  // `visit` was not called. Else what `visit` returns. The view is valid
  // only during the call, which on the embedded store runs inside its read
  // transaction: `visit` may read the store (another GetView too) but must
  // not write to it (as for Visit).
  Status GetView(std::string_view partition_key, std::string_view row_key,
                 const EntityVisitor& visit) const;
  Status GetView(std::string_view partition_key, std::string_view row_key, const ReadPolicy& policy,
                 const EntityVisitor& visit) const;

  // Each write returns the entity as stored, with its new ETag and Timestamp.
  // Insert fails Conflict if the entity exists.
  Result<Entity> Insert(const Entity& entity) const;
  // Replaces all properties. `if_match` is the ETag the caller last saw, or
  // "*" for any version. NotFound if missing; Conflict on an ETag mismatch.
  Result<Entity> Replace(const Entity& entity, std::string_view if_match) const;
  // Sets the given properties, keeping the others. Same conditions as Replace.
  Result<Entity> Merge(const Entity& entity, std::string_view if_match) const;
  // The same, at the entity's own ETag (entity.etag(), as a read or write
  // returned it): InvalidArgument if it has none.
  Result<Entity> Replace(const Entity& entity) const;
  Result<Entity> Merge(const Entity& entity) const;
  // Insert or replace, unconditionally.
  Result<Entity> Upsert(const Entity& entity) const;
  // Insert or merge, unconditionally.
  Result<Entity> UpsertMerge(const Entity& entity) const;
  // `if_match` as for Replace.
  Status Delete(std::string_view partition_key, std::string_view row_key,
                std::string_view if_match) const;

  // One page of entities in key order.
  Result<QueryPage> Query(const QueryOptions& options) const;

  // The page Query(options) returns, handed to `visit` row by row, in key
  // order, as views instead of entities: on the embedded store each row is
  // read from the store's page where it lies, without allocating or copying
  // (docs/performance.md, "Step 5"); a row a transaction has marked,
  // and every row of a store with wrappers or a cache, is read as Query
  // reads it and handed over as a view of that entity. Same rows, same
  // checks, same errors as Query, but one: on the embedded store a value
  // read in place is not checked against its checksum (its record's head
  // is), so one damaged on disk in a way that still decodes is handed over
  // as it lies (or, under a $filter, judged as it lies: kept or left out),
  // where Get, Query, Count and DeleteWhere answer Corruption
  // (docs/backends.md, "Checksums"). Also the visitor's own error, which
  // ends the visit (the rows visited before it stay visited). On the
  // embedded store `visit` runs inside the listing's read transaction: it
  // may read the store but must not write to it (a write that grows the map
  // would wait for that transaction to end).
  Result<VisitedPage> Visit(const QueryOptions& options, const EntityVisitor& visit) const;
  // The same with a function that returns nothing.
  template <typename Fn>
  requires std::is_void_v<std::invoke_result_t<Fn&, const EntityView&>> Result<VisitedPage> Visit(
      const QueryOptions& options, Fn fn)
  const {
    return Visit(options, EntityVisitor([&fn](const EntityView& row) {
                   fn(row);
                   return Status::OK();
                 }));
  }

  // How many entities the query matches, over all its pages from
  // `options.continuation` (top and select do not matter). Without a
  // filter the embedded store counts its listing without decoding the rows
  // (damage is then not seen: `blobtable check` finds it); a row under a
  // transaction's mark is read to tell whether it exists. Errors as Query's.
  Result<int64_t> Count(const QueryOptions& options = {}) const;

  // Deletes every entity the query matches, each only at the ETag it was
  // read with: an entity another writer changed or deleted since is left
  // (DeleteWhereReport::changed). In batches of up to 500: one atomic
  // transaction a batch where the store commits batches atomically (the
  // embedded store: one LMDB write each), concurrent Deletes elsewhere.
  // Not one atomic step: a failure part way leaves the batches before it
  // deleted, and the error is returned; running it again goes on.
  Result<DeleteWhereReport> DeleteWhere(const QueryOptions& options,
                                        const DeleteWhereOptions& how = {}) const;

  // One page of the entities index `index` holds within `query`
  // (blobtable/index.h), in the index's order (values, then keys). From
  // `options`: top, continuation (QueryPage's, of an index query), policy,
  // filter (checked on each entity) and select; the key fields must be
  // unset. A page lists the index once and reads the entities it names
  // concurrently, each checked against `query` as it is now (an entity
  // changed since its entry was listed is left out, never returned not
  // matching); with `select` naming only indexed and covered properties
  // (and a filter reading only those), the index answers alone, no entity
  // read: each entity then has no ETag (empty) and no Timestamp (the
  // epoch), since its entry is written with it, before storage stamps it.
  // InvalidArgument for an unknown index or a query that does not fit it;
  // Busy while it is still being built; others as Query's.
  Result<QueryPage> QueryIndex(std::string_view index, const IndexQuery& query,
                               const QueryOptions& options = {}) const;

  // Every entity the query matches, page after page as the loop needs them
  // (QueryOptions::top is the page size; continuation, where to start):
  //   auto scan = table.Scan(options);
  //   for (const Entity& e : scan) { ... }
  //   if (!scan.status().ok()) { ... }   // the loop ended on an error
  // See TableScan.
  TableScan Scan(QueryOptions options = {}) const;
  // The same over an index: the entities QueryIndex(index, query, options)
  // answers, page after page, in the index's order.
  TableScan ScanIndex(std::string_view index, IndexQuery query, QueryOptions options = {}) const;

  // Reads the entities of `keys` (PartitionKey, RowKey), concurrently on a
  // remote store (StoreOptions::max_parallel_reads at once), one after
  // another on the local one: one result a key, in the order of `keys`,
  // each as Get would answer (NotFound for a missing entity).
  std::vector<Result<Entity>> GetMany(
      const std::vector<std::pair<std::string, std::string>>& keys) const;
  std::vector<Result<Entity>> GetMany(const std::vector<std::pair<std::string, std::string>>& keys,
                                      const ReadPolicy& policy) const;

  // Optimistic read-modify-write of one entity: reads it (validated, never
  // a stale copy), applies `fn` (UpdateFn), and writes the result at the
  // ETag it read (Replace), or inserts it if it was absent (Insert). A
  // write that lost a race (Conflict; NotFound: deleted since the read) or
  // met a busy entity runs it all again under `policy` (RetryPolicy).
  // If `fn` left the entity as it was, nothing is written. Returns the
  // entity as stored; `attempts` (optional) receives how many were made.
  // Failures: fn's own error; InvalidArgument if fn changed the keys or the
  // entity is invalid; the last attempt's Conflict/Busy when the policy
  // ran out; OutcomeUnknown (never retried: the write may have taken
  // effect); others as for Get and Replace.
  Result<Entity> Update(std::string_view partition_key, std::string_view row_key,
                        const UpdateFn& fn, const RetryPolicy& policy = {},
                        int* attempts = nullptr) const;
  // The same with a function that returns nothing (it always writes).
  template <typename Fn>
  requires std::is_void_v<std::invoke_result_t<Fn&, Entity&, bool>> Result<Entity> Update(
      std::string_view partition_key, std::string_view row_key, Fn fn,
      const RetryPolicy& policy = {}, int* attempts = nullptr)
  const {
    return Update(partition_key, row_key,
                  UpdateFn([fn = std::move(fn)](Entity& e, bool exists) mutable {
                    fn(e, exists);
                    return Status::OK();
                  }),
                  policy, attempts);
  }

  // Where an entity and its partition's lock live (see docs/data-model.md#blob-naming):
  // the lock's first blob (stripe 0); a transaction leases one of 16 stripes.
  Result<std::string> EntityBlobName(std::string_view partition_key,
                                     std::string_view row_key) const;
  Result<std::string> LockBlobName(std::string_view partition_key) const;

 private:
  friend class Store;
  friend class TableScan;
  friend class EntityWatch;
  friend class Transaction;
  BLOBTABLE_HIDDEN Table(std::shared_ptr<const internal::StoreCore> core, std::string name)
      : core_(std::move(core)), name_(std::move(name)) {}
  // InvalidArgument on an empty handle.
  Status Usable() const;

  // The one write path: validates, names and encodes; `if_match` for
  // kReplace and kMerge only.
  BLOBTABLE_HIDDEN Result<Entity> Write(const Entity& entity, std::string_view if_match,
                                        internal::WriteMode mode) const;
  // The same on a table with indexes: one transaction that writes the
  // entity and its entries (kv/table_indexed.cc).
  BLOBTABLE_HIDDEN Result<Entity> WriteIndexed(const Entity& entity, std::string_view if_match,
                                               internal::WriteMode mode) const;
  BLOBTABLE_HIDDEN Status DeleteIndexed(std::string_view pk, std::string_view rk,
                                        std::string_view if_match) const;
  // Visit, with each value read in place checked against its checksum
  // (`check_values`: for a caller that acts on what it reads, as Count and
  // DeleteWhere do) or not (Visit's own).
  BLOBTABLE_HIDDEN Result<VisitedPage> VisitRows(const QueryOptions& options,
                                                 const EntityVisitor& visit,
                                                 bool check_values) const;
  // Query's and QueryIndex's work, counted by them (kv/op_metrics.h).
  BLOBTABLE_HIDDEN Result<QueryPage> QueryOnePage(const QueryOptions& options) const;
  BLOBTABLE_HIDDEN Result<QueryPage> QueryIndexPage(std::string_view index, const IndexQuery& query,
                                                    const QueryOptions& options) const;
  // The one read path (`listed_etag`: what a listing just showed).
  BLOBTABLE_HIDDEN Result<Entity> Read(std::string_view pk, std::string_view rk,
                                       const ReadPolicy& policy,
                                       std::string_view listed_etag) const;

  std::shared_ptr<const internal::StoreCore> core_;
  std::string name_;
};

// The entities of a query, fetched a page at a time while a loop walks
// them. An input range: iterate it once. The loop ends at the last entity
// or at the first error; status() says which (check it after the loop: a
// scan whose error nobody asked for is reported through StoreOptions::warn
// when it is destroyed). A filtered query's empty pages are skipped. Like
// Query, a scan is not a snapshot: rows written during it may or may not
// appear. Used from one thread at a time.
class BLOBTABLE_EXPORT TableScan {
 public:
  class iterator {
   public:
    using iterator_category = std::input_iterator_tag;
    using value_type = Entity;
    using difference_type = std::ptrdiff_t;
    using pointer = const Entity*;
    using reference = const Entity&;
    iterator() = default;
    const Entity& operator*() const { return scan_->page_.entities[scan_->index_]; }
    const Entity* operator->() const { return &**this; }
    iterator& operator++() {
      scan_->Advance();
      return *this;
    }
    void operator++(int) { ++*this; }
    bool operator==(std::default_sentinel_t) const { return scan_ == nullptr || scan_->done_; }

   private:
    friend class TableScan;
    explicit iterator(TableScan* scan) : scan_(scan) {}
    TableScan* scan_ = nullptr;
  };

  TableScan(TableScan&&) noexcept;
  TableScan& operator=(TableScan&&) noexcept;
  ~TableScan();

  // Fetches the first page (on the first call only).
  iterator begin();
  std::default_sentinel_t end() const { return {}; }

  // OK while the scan goes on and once it has ended at the last entity;
  // otherwise why it stopped early.
  const Status& status() const {
    status_checked_ = true;
    return status_;
  }
  // Some entity or listing came from the cache unvalidated (QueryPage::stale).
  bool stale() const { return stale_; }
  // Pages fetched so far.
  int pages() const { return pages_; }

 private:
  friend class Table;
  TableScan(Table table, QueryOptions options);
  TableScan(Table table, std::string_view index, IndexQuery query, QueryOptions options);
  void Advance();
  void Fetch();

  Table table_;
  QueryOptions options_;
  std::string index_name_;  // empty: the table itself
  IndexQuery index_query_;
  QueryPage page_;
  size_t index_ = 0;
  bool started_ = false;
  bool done_ = false;
  bool stale_ = false;
  int pages_ = 0;
  Status status_;
  mutable bool status_checked_ = false;
};

}  // namespace blobtable

#endif  // BLOBTABLE_TABLE_H_
