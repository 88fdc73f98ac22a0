// SPDX-License-Identifier: Apache-2.0
// Secondary indexes kept in the same commit as their entities
// (docs/indexes.md#maintaining): every transaction that writes an indexed
// table gains the writes of the entries those writes change, and commits
// them as one; a table's index definitions are read through a cache here.
//
// Invariants (checked by Store::CheckIndex and the stress tool's index
// workload):
//   I1  every entity holding each property of a maintained index has exactly
//       one entry in it, holding its values; no entry names an entity that
//       is gone or holds other values;
//   I2  a unique index's values are held by at most one entity.
// Writers learn of a new index within 2.5 s of its creation (a copy older
// than kSchemaFresh is read again, in the background while it is younger
// than half kSchemaMaxAge); a commit point later than kSchemaMaxAge after its definitions were read
// reads them again first (and is refused, Conflict, if they changed), and an index build waits
// kSchemaGrace before its backfill: so every write that commits after the backfill starts maintains
// the index (docs/indexes.md#building-online).
#ifndef BLOBTABLE_TXN_INDEX_UPKEEP_H_
#define BLOBTABLE_TXN_INDEX_UPKEEP_H_

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "blobtable/clock.h"
#include "blobtable/status.h"
#include "model/index_schema.h"
#include "txn/txn_buffer.h"

namespace blobtable::internal {

struct TxnContext;

// A copy of the definitions older than this is read again: beside the
// write that finds it so (on the store's background threads) while it is
// younger than half kSchemaMaxAge, before the write after that.
inline constexpr std::chrono::milliseconds kSchemaFresh{1'000};
// A commit point (a plain write's request, a transaction's record) must
// come within this of reading the definitions it maintained.
inline constexpr std::chrono::milliseconds kSchemaMaxAge{5'000};
// How long an index build waits between publishing the index as building
// and walking the table: past every commit point that read the
// definitions before (kSchemaMaxAge), with room for a request in flight.
inline constexpr std::chrono::milliseconds kSchemaGrace{2 * kSchemaMaxAge};

// The three times above, as a store uses them. Only tests change them
// (TestingHooks::index_time_divisor), for every store on their storage.
struct SchemaTimes {
  std::chrono::milliseconds fresh = kSchemaFresh;
  std::chrono::milliseconds max_age = kSchemaMaxAge;
  std::chrono::milliseconds grace = kSchemaGrace;
  static SchemaTimes DividedBy(int divisor) {
    const int d = divisor < 1 ? 1 : divisor;
    return SchemaTimes{kSchemaFresh / d, kSchemaMaxAge / d, kSchemaGrace / d};
  }
};

// The definitions of a table as read, and when.
struct SchemaCopy {
  std::shared_ptr<const TableSchema> schema;  // never null (empty: no index)
  std::string etag;                           // of the stored definitions; "" if none
  SteadyTime read_at{};
  // The last moment a commit point may come relying on this copy
  // (read_at + max_age; set by SchemaCache::Current).
  SteadyTime deadline{};
};

// The store's copies of its tables' definitions. Thread-safe.
class SchemaCache {
 public:
  explicit SchemaCache(SchemaTimes times = {}) : times_(times) {}
  const SchemaTimes& times() const { return times_; }
  // The definitions of `table`: the copy if younger than times().fresh (or
  // `max_age`), else read again (a cache revalidation on a store with one).
  // Without `max_age`, a copy younger than half times().max_age is also
  // returned at once, and read again on `core`'s background threads (one
  // read a table at a time; at once where the store has none): its
  // deadline leaves the commit half of max_age, and a write need not wait
  // a round trip for definitions that rarely change.
  Result<SchemaCopy> Current(const TxnContext& core, std::string_view table,
                             std::optional<std::chrono::milliseconds> max_age = std::nullopt);
  // Forgets the copy of `table` (after changing its definitions), and the
  // copy any read started before the call brings.
  void Forget(std::string_view table);
  // Whether the store keeps a copy of `table`'s definitions (of any age):
  // without one, Current reads them on the caller's time.
  bool Holds(std::string_view table);

 private:
  Result<SchemaCopy> ReadAndKeep(const TxnContext& core, std::string_view table);
  // Queues a read of `table`'s definitions on `core`'s background threads,
  // unless one is queued or running; false if the store has none.
  bool RefreshLater(const TxnContext& core, const std::string& table);

  const SchemaTimes times_;
  std::mutex mu_;
  std::map<std::string, SchemaCopy, std::less<>> copies_;  // by SchemaTableName
  std::set<std::string, std::less<>> refreshing_;          // tables, by SchemaTableName
  std::map<std::string, uint64_t, std::less<>> forgets_;   // Forget calls, by SchemaTableName
};

// Reads the stored definitions of `table` (none: an empty schema, etag "").
Result<SchemaCopy> ReadSchema(const TxnContext& core, std::string_view table);

// The entity that holds a table's definitions (table SchemaTableName,
// keys "" and naming::kSchemaRowKey).
Entity SchemaEntity(const TableSchema& schema);

// Adds to `buffer` the entry writes its writes make (reading first what it
// writes without having read it: the commit then checks that version), and
// sets its schema deadline. Conflict naming the index and the value when a
// unique index's value is held by another entity. Errors of the reads.
Status AddIndexUpkeep(TxnBuffer& buffer);

// For a plain write to a table that had no index when `*deadline` was set
// (its definitions' read + kSchemaMaxAge), just before its request: past
// the deadline, reads the definitions again; if the table has an index
// now, sets *indexed and returns Conflict (the write must go through
// AddIndexUpkeep), else moves the deadline on.
Status StillUnindexed(const TxnContext& core, std::string_view table, SteadyTime* deadline,
                      bool* indexed);

// One batch of an index build (Store::CreateIndex): writes the entries in
// `spec` of `entities` (of `table`, each with the ETag it was read at) in
// one transaction that also checks each of them, and the table's
// definitions (at `schema_etag`), unchanged. Conflict naming both entities
// when a unique value is held by another; with *raced set when the batch
// lost a race (an entity or the definitions changed: read them again).
Status CommitBuilt(const std::shared_ptr<const TxnContext>& core, const std::string& table,
                   const IndexSpec& spec, const std::vector<Entity>& entities,
                   const std::string& schema_etag, bool* raced);

// Just before the commit point: if `buffer` followed definitions read more
// than kSchemaMaxAge ago, reads them again; Conflict if they changed since
// (the writes may have missed an index: SchemaChanged), else the deadline
// moves on.
Status CheckSchemaAge(TxnBuffer& buffer, SteadyTime now);

// For a commit that is one atomic batch (txn/atomic_commit.h): the
// definitions each written table's upkeep followed (buffer.schema_etags),
// each as a read of the definitions' entity at that version (absent where
// there were none), to be checked in the batch itself. A batch applied
// after they changed in what writers maintain (SameUpkeep) is refused
// however long it waited for the store's writer lock, so an index created
// meanwhile is never missed. None for a table whose definitions the
// transaction writes itself.
struct SchemaRead {
  std::string table;  // the table whose definitions they are
  Intent read;
  std::shared_ptr<const TableSchema> followed;  // what they said (never null)
};
Result<std::vector<SchemaRead>> SchemaReads(const TxnBuffer& buffer);

// The Conflict for a transaction whose definitions of `table` changed
// before its commit point (nothing was committed); sets
// buffer.schema_changed and forgets this store's copy of them.
Status SchemaChanged(TxnBuffer& buffer, const std::string& table);

// The definitions stored in entity `stored` (table `table`'s, for
// messages); Corruption if it holds none.
Result<TableSchema> SchemaOf(const Entity& stored, std::string_view table);

// Whether writers following `a` maintain what writers following `b` do:
// the same indexes, specs and states (a build's place aside).
bool SameUpkeep(const TableSchema& a, const TableSchema& b);

}  // namespace blobtable::internal

#endif  // BLOBTABLE_TXN_INDEX_UPKEEP_H_
