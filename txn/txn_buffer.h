// What a Transaction buffers until Commit() (internal to txn/).
#ifndef BLOBTABLE_TXN_TXN_BUFFER_H_
#define BLOBTABLE_TXN_TXN_BUFFER_H_

#include <map>
#include <memory>
#include <string>

#include "blobtable/entity.h"
#include "blobtable/txn.h"

namespace blobtable::internal {

struct StoreCore;

// Everything a transaction does to one entity.
struct Intent {
  std::string table, pk, rk, blob, lock;
  size_t order = 0;  // when its write was buffered (Commit returns writes in this order)
  // What a Get inside the transaction saw.
  bool read = false;
  bool read_found = false;
  std::string read_etag;
  bool reads_disagree = false;  // read twice and saw two versions
  // The write (or check).
  enum class Kind { kNone, kPut, kMerge, kDelete, kCheck } kind = Kind::kNone;
  enum class Expect { kAny, kExists, kAbsent, kETag } expect = Expect::kAny;
  std::string etag;
  Entity entity;

  bool writes() const { return kind == Kind::kPut || kind == Kind::kMerge || kind == Kind::kDelete; }
  // "table T, entity (PartitionKey 'P', RowKey 'R')", for messages.
  std::string Describe() const {
    return "table " + table + ", entity (PartitionKey '" + pk.substr(0, 64) + "', RowKey '" +
           rk.substr(0, 64) + "')";
  }
};

struct TxnBuffer {
  std::shared_ptr<const StoreCore> core;
  TransactionOptions options;
  std::map<std::string, Intent> intents;  // by entity blob name: sorted
  size_t next_order = 0;
  bool finished = false;
};

}  // namespace blobtable::internal

#endif  // BLOBTABLE_TXN_TXN_BUFFER_H_
