// SPDX-License-Identifier: Apache-2.0
// What a Transaction buffers until Commit() (internal to txn/).
#ifndef BLOBTABLE_TXN_TXN_BUFFER_H_
#define BLOBTABLE_TXN_TXN_BUFFER_H_

#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "blobtable/entity.h"
#include "blobtable/txn.h"

namespace blobtable::internal {

struct TxnContext;

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

  bool writes() const {
    return kind == Kind::kPut || kind == Kind::kMerge || kind == Kind::kDelete;
  }
  // "table T, entity (PartitionKey 'P', RowKey 'R')", for messages.
  std::string Describe() const {
    return "table " + table + ", entity (PartitionKey '" + pk.substr(0, 64) + "', RowKey '" +
           rk.substr(0, 64) + "')";
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

struct TxnBuffer {
  std::shared_ptr<const TxnContext> core;
  TransactionOptions options;
  std::map<std::string, Intent> intents;  // by entity blob name: sorted
  size_t next_order = 0;
  bool finished = false;
  int lock_waits = 0;  // backoffs during Commit() (Transaction::CommitStats)
};

}  // namespace blobtable::internal

#endif  // BLOBTABLE_TXN_TXN_BUFFER_H_
