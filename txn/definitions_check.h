// SPDX-License-Identifier: Apache-2.0
// A write that relied on a table's index definitions checks them in the very
// step that commits it, where the store commits in atomic batches (the
// local store: one LMDB write transaction; TxnContext::CommitsInBatches):
// the definitions' blob is one more step of the batch, at the version the
// write followed. A write committed after an index was created or marked
// dropping has then always followed the definitions that say so, however
// long it waited for the writer lock, and CreateIndex/DropIndex need not
// wait kSchemaGrace there (docs/indexes.md#building-online). Elsewhere
// (Azure, and the lease coordinator on any backend), the definitions' age
// is checked before the request instead (StillUnindexed, CheckSchemaAge),
// and the grace covers the rest.
//
// Used by plain writes to a table with no maintained index (kv/table.cc,
// through UnindexedWrite) and by atomic commits (txn/atomic_commit.cc),
// which plain writes to an indexed table are.
#ifndef BLOBTABLE_TXN_DEFINITIONS_CHECK_H_
#define BLOBTABLE_TXN_DEFINITIONS_CHECK_H_

#include <string>
#include <string_view>

#include "blobtable/blob_store.h"
#include "blobtable/status.h"
#include "txn/index_upkeep.h"
#include "txn/txn_context.h"

namespace blobtable::internal {

// The step of an atomic batch that holds only while the definitions in
// blob `blob` are still at version `etag` ("": none stored).
BatchOp DefinitionsCheck(const std::string& blob, const std::string& etag);

// The definitions of `table` as stored now, read from storage itself (not
// through a cache or a transaction's view), `etag` their version to check
// again; Busy while a transaction's intent is on them (an index build's
// page checks them so under the lease protocol): wait, then ask again.
Result<SchemaCopy> DefinitionsNow(const TxnContext& core, std::string_view table);

// Keeps a plain write to a table that had no maintained index (per `copy`)
// from committing after one appears. On a store that commits in batches, Put
// and Delete send the write with a DefinitionsCheck; when that check fails
// they read the definitions again and, if the table still has no
// maintained index, send it again at their new version. Elsewhere Before
// runs StillUnindexed (their age) and Put and Delete are the store's own.
// Once the table has a maintained index, indexed() is set and the call
// fails Conflict (nothing written): the write goes through the index
// upkeep instead. Not thread-safe; one per write.
class UnindexedWrite {
 public:
  UnindexedWrite(const TxnContext& core, std::string table, const SchemaCopy& copy);

  // Just before each request that may write: StillUnindexed where the
  // definitions are not checked in the commit; OK otherwise.
  Status Before();
  // As BlobStore::Put and Delete (their errors are theirs), with the check.
  Result<WriteResult> Put(const std::string& blob, std::string_view data, const PutOptions& o);
  Status Delete(const std::string& blob, const WriteOptions& o);
  // The write was refused because the table has a maintained index now.
  bool indexed() const { return indexed_; }

 private:
  // Sends `op` with the check until the check holds; the op's own failure
  // as the request alone would give it.
  BatchResult Checked(BatchOp op);

  const TxnContext& core_;
  const std::string table_;
  const bool batched_;
  std::string blob_;     // the definitions' blob (batched_ only)
  std::string etag_;     // their version followed
  SteadyTime deadline_;  // StillUnindexed's (not batched_)
  bool indexed_ = false;
};

}  // namespace blobtable::internal

#endif  // BLOBTABLE_TXN_DEFINITIONS_CHECK_H_
