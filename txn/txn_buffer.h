// SPDX-License-Identifier: Apache-2.0
// What a Transaction buffers until Commit() (internal to txn/).
#ifndef BLOBTABLE_TXN_TXN_BUFFER_H_
#define BLOBTABLE_TXN_TXN_BUFFER_H_

#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "blobtable/clock.h"
#include "blobtable/entity.h"
#include "blobtable/txn.h"
#include "model/key_rules.h"
#include "txn/intent_resolver.h"

namespace blobtable::internal {

// The storage code of a transaction's insert of an entity that exists,
// which it never read: no retry of the transaction can fix it, so
// Store::RunTransaction returns it at once (Azure Tables' own code for it).
inline constexpr char kEntityAlreadyExists[] = "EntityAlreadyExists";

struct TxnContext;
struct TableSchema;

// Everything a transaction does to one entity.
struct Intent {
  std::string table, pk, rk, blob, lock;
  size_t order = 0;  // when its write was buffered (Commit returns writes in this order)
  // What a Get inside the transaction saw.
  bool read = false;
  bool read_found = false;
  std::string read_etag;
  std::string read_handles;           // the other handles of that version (H1)
  std::optional<Entity> read_entity;  // what that read returned, if found
  bool reads_disagree = false;        // read twice and saw two versions
  // The write (or check).
  enum class Kind { kNone, kPut, kMerge, kDelete, kCheck } kind = Kind::kNone;
  enum class Expect { kAny, kExists, kAbsent, kETag } expect = Expect::kAny;
  std::string etag;
  Entity entity;
  // An index entry's write that the transaction's own writes made
  // (txn/index_upkeep.h): said as `about`, left out of Commit's result.
  bool upkeep = false;
  std::string about;
  // An index entry written unread: its version as the upkeep looked it up,
  // beside its claims' reads (txn/index_upkeep.cc), so that the commit's
  // plan need not look again. Not a read: a change since is planned again.
  std::optional<CommittedVersion> looked;
  // The Timestamp to give the new version (unset: the commit's clock).
  std::optional<DateTime> stamp;
  // Set by Expectation when what the transaction read had changed (a race,
  // as against a condition that failed).
  mutable bool changed_since_read = false;

  bool writes() const {
    return kind == Kind::kPut || kind == Kind::kMerge || kind == Kind::kDelete;
  }
  // "table T, entity (PartitionKey 'P', RowKey 'R')", for messages.
  std::string Describe() const {
    if (!about.empty()) return about;
    return "table " + table + ", entity (PartitionKey " + QuotedForMessage(pk) + ", RowKey " +
           QuotedForMessage(rk) + ")";
  }
};

// InvalidArgument for options no commit can work with (txn.h), on every
// backend alike.
Status ValidateOptions(const TransactionOptions& o);
// When less than this remains of a lease, it is renewed.
std::chrono::milliseconds RenewalMargin(const TransactionOptions& o);

// Whether an entity as storage holds it (exists, etag; no other
// transaction's mark on it) satisfies the intent: what the transaction read
// and the write's condition. Conflict or NotFound, saying why, if not.
// `same_as`: the handles of the version this one continues (the blob's
// kSameAsMetadata list: an intent rewritten plain), which match as well.
Status Expectation(const Intent& i, bool exists, const std::string& etag,
                   std::string_view same_as = "");

// The stored form a put or merge intent writes over `current` (the stored
// body; null if absent): its entity, merged into the current one for a
// merge, stamped with `now`.
Result<std::string> NewBody(const Intent& i, const std::string* current, TimePoint now);

// Reads the entity of `i` now (validated, never a stale copy) and records
// what was seen, as Transaction::Get does: the commit then fails Conflict
// if it changed. NotFound if absent; errors of the read.
Result<Entity> ReadIntoIntent(const TxnContext& core, Intent& i);

struct TxnBuffer {
  std::shared_ptr<const TxnContext> core;
  TransactionOptions options;
  std::map<std::string, Intent> intents;  // by entity blob name: sorted
  size_t next_order = 0;
  bool finished = false;
  int lock_waits = 0;  // backoffs during Commit() (Transaction::CommitStats)
  int rounds = 0;      // protocol rounds Commit() ran (Store::Metrics)
  // The commit point must come before this when the transaction maintained
  // indexes (txn/index_upkeep.h): their definitions were read then.
  std::optional<SteadyTime> schema_deadline;
  // The definitions' ETag each written table's upkeep followed (by table),
  // and what they said.
  std::map<std::string, std::string> schema_etags;
  std::map<std::string, std::shared_ptr<const TableSchema>> schemas_followed;
  // Set when the commit was refused because those definitions changed
  // (SchemaChanged): a plain write runs again with the new ones.
  bool schema_changed = false;
};

// Commits `buffer` as Transaction::Commit does (with the entries of the
// indexes its writes change): read-only, one atomic batch, or the protocol.
Result<std::vector<CommittedWrite>> CommitBuffer(TxnBuffer& buffer);

}  // namespace blobtable::internal

#endif  // BLOBTABLE_TXN_TXN_BUFFER_H_
