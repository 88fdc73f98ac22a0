// SPDX-License-Identifier: Apache-2.0
#include "txn/definitions_check.h"

#include <algorithm>
#include <memory>
#include <utility>
#include <vector>

#include "model/entity_codec.h"
#include "model/index_naming.h"
#include "txn/recovery.h"
#include "util/macros.h"

namespace blobtable::internal {
namespace {

// How often a marked definitions blob is settled before DefinitionsNow
// answers Busy: a transaction's intent there is an index build's check,
// decided within its own commit.
constexpr int kSettleRounds = 4;

BatchResult Refused(Status why) { return BatchResult{std::move(why), 0, {}}; }

}  // namespace

BatchOp DefinitionsCheck(const std::string& blob, const std::string& etag) {
  BatchOp op;
  op.kind = BatchOp::Kind::kCheck;
  op.blob = blob;
  if (etag.empty())
    op.conditions.if_none_match = std::string(kAnyETag);
  else
    op.conditions.if_match = etag;
  return op;
}

Result<SchemaCopy> DefinitionsNow(const TxnContext& core, std::string_view table) {
  BT_ASSIGN_OR_RETURN(std::string blob, naming::SchemaBlobName(table));
  const std::string ctx = "table " + std::string(table) + ": reading its index definitions";
  for (int round = 0;; ++round) {
    SchemaCopy copy;
    copy.read_at = core.clock->Steady();
    auto got = core.blobs->Get(blob, {});
    if (got.status().IsNotFound()) {
      copy.schema = std::make_shared<TableSchema>();
      return copy;
    }
    if (!got.ok()) return got.status().WithContext(ctx);
    if (!MarkingTransaction(got->properties).empty()) {
      Status settled = round < kSettleRounds ? ResolveBlob(core.Resolver(), blob, got->properties)
                                             : Status::Busy("a transaction holds them");
      if (!settled.ok()) return settled.WithContext(ctx);
      continue;  // read them again, settled
    }
    BT_ASSIGN_OR_RETURN(Entity stored, DecodeEntity(got->data, blob));
    BT_ASSIGN_OR_RETURN(TableSchema schema, SchemaOf(stored, table));
    copy.schema = std::make_shared<TableSchema>(std::move(schema));
    copy.etag = got->properties.etag;
    return copy;
  }
}

UnindexedWrite::UnindexedWrite(const TxnContext& core, std::string table, const SchemaCopy& copy)
    : core_(core),
      table_(std::move(table)),
      batched_(core.CommitsInBatches() && core.schemas != nullptr),
      etag_(copy.etag),
      deadline_(copy.deadline) {
  if (batched_) {
    auto blob = naming::SchemaBlobName(table_);
    if (blob.ok()) blob_ = *std::move(blob);  // a table with a bad name has no entity to write
  }
}

Status UnindexedWrite::Before() {
  if (batched_) return Status::OK();  // checked in the batch itself
  return StillUnindexed(core_, table_, &deadline_, &indexed_);
}

Result<WriteResult> UnindexedWrite::Put(const std::string& blob, std::string_view data,
                                        const PutOptions& o) {
  if (!batched_) return core_.blobs->Put(blob, data, o);
  BatchOp op;
  op.kind = BatchOp::Kind::kPut;
  op.blob = blob;
  op.conditions = o.conditions;
  op.data = std::string(data);
  op.metadata = o.metadata;
  BatchResult done = Checked(std::move(op));
  if (!done.status.ok()) return done.status;
  return done.writes.at(0);
}

Status UnindexedWrite::Delete(const std::string& blob, const WriteOptions& o) {
  if (!batched_) return core_.blobs->Delete(blob, o);
  BatchOp op;
  op.kind = BatchOp::Kind::kDelete;
  op.blob = blob;
  op.conditions = o.conditions;
  return Checked(std::move(op)).status;
}

BatchResult UnindexedWrite::Checked(BatchOp op) {
  std::vector<BatchOp> ops{std::move(op), BatchOp{}};
  const int attempts = std::max(1, core_.max_merge_attempts);
  for (int round = 1;; ++round) {
    ops[1] = DefinitionsCheck(blob_, etag_);
    BatchResult done = core_.blobs->CommitBatch(ops);
    if (done.status.ok() || done.failed != 1) return done;
    // The definitions changed since they were read: still no index to
    // maintain, or the write must maintain one now.
    auto now = DefinitionsNow(core_, table_);
    if (!now.ok()) return Refused(now.status());
    if (now->schema->Maintained()) {
      indexed_ = true;
      core_.schemas->Forget(table_);
      return Refused(Status::Conflict("the table has an index now"));
    }
    etag_ = now->etag;
    if (round >= attempts)
      return Refused(Status::Conflict("gave up after " + std::to_string(round) +
                                      " attempts, the table's index definitions changing "
                                      "each time"));
  }
}

}  // namespace blobtable::internal
