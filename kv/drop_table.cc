// SPDX-License-Identifier: Apache-2.0
// Store::DropTable: every blob of a table deleted, after a look for what a
// transaction holds.
#include <algorithm>
#include <string>
#include <vector>

#include "blobtable/store.h"
#include "kv/index_definitions.h"
#include "kv/store_core.h"
#include "model/blob_naming.h"
#include "model/index_naming.h"
#include "txn/entity_access.h"
#include "txn/index_upkeep.h"
#include "storage/list_all.h"
#include "txn/recovery.h"
#include "util/macros.h"
#include "util/parallel.h"

namespace blobtable {
namespace {

// The first blob of the table a transaction holds: an entity under its mark
// or a leased lock; OK if none.
Status RefuseWhatIsHeld(BlobStore& blobs, const std::string& table, const std::string& prefix) {
  ListOptions list;
  list.prefix = prefix;
  return internal::ForEachListed(blobs, list, [&](const BlobItem& item) {
    const auto of = internal::naming::TableOf(item.name);
    const std::string txn = internal::MarkingTransaction(item.properties);
    if (of && of->entity && !txn.empty())
      return Status::Busy("table " + table + ": blob '" + item.name + "' is held by transaction " +
                          txn + "; let it finish (or run recover if its coordinator died), " +
                          "or drop with force");
    if (of && !of->entity && item.properties.lease_state == LeaseState::kLeased)
      return Status::Busy("table " + table + ": partition lock '" + item.name +
                          "' is leased by a transaction in progress; wait for it, or drop " +
                          "with force");
    return Status::OK();
  });
}

// Deletes one blob at its listed ETag, breaking its lease first if it has
// one and `force` says so. Conflict/NotFound: it changed under the drop.
Status DeleteListed(BlobStore& blobs, const BlobItem& item, bool force) {
  if (force && item.properties.lease_state == LeaseState::kLeased) {
    auto broken = blobs.BreakLease(item.name, 0, {});
    if (!broken.ok() && !broken.status().IsNotFound()) return broken.status();
  }
  WriteOptions w;
  w.conditions.if_match = item.properties.etag;
  Status s = blobs.Delete(item.name, w);
  if (s.IsBusy() && !force)
    return Status::Busy("blob '" + item.name + "' was leased by a transaction during the drop; " +
                        "run it again, or with force");
  return s;
}

// One walk over the blobs under `prefix`, each deleted at its listed ETag
// (a page at once where the backend applies batches); one changed under the
// walk is counted in report.changed and left.
Status DropWalk(const internal::StoreCore& core, const std::string& prefix,
                const DropTableOptions& options, DropTableReport& report) {
  BlobStore& blobs = *core.blobs;
  ListOptions list;
  list.prefix = prefix;
  list.max_results = 1000;
  for (int pages = 0;;) {
    auto page = blobs.List(list);
    if (!page.ok()) return page.status();
    const std::vector<BlobItem>& items = page->items;
    std::vector<Status> done(items.size());
    bool batched = false;
    if (blobs.traits().atomic_batch && !options.force && !items.empty()) {
      std::vector<BatchOp> ops(items.size());
      for (size_t i = 0; i < items.size(); ++i) {
        ops[i].kind = BatchOp::Kind::kDelete;
        ops[i].blob = items[i].name;
        ops[i].conditions.if_match = items[i].properties.etag;
      }
      batched = blobs.CommitBatch(ops).status.ok();  // else one by one: which one failed
    }
    if (!batched)
      internal::ParallelFor(items.size(), core.CommitWidth(), [&](size_t i) {
        done[i] = DeleteListed(blobs, items[i], options.force);
      });
    for (size_t i = 0; i < items.size(); ++i) {
      if (done[i].IsConflict() || done[i].IsNotFound()) {
        ++report.changed;
        continue;
      }
      if (!done[i].ok()) return done[i];
      const auto of = internal::naming::TableOf(items[i].name);
      const bool entity = of && of->entity && !internal::naming::IsHiddenTable(of->table);
      ++(entity ? report.entities : report.locks);
    }
    if (options.progress) {
      internal::UserCode user;  // its calls are the user's own
      options.progress(report);
    }
    auto next = NextListPage(list, *page, &pages);
    if (!next.ok()) return next.status();
    if (!*next) return Status::OK();
  }
}

// The definitions of a table being dropped, every index in them marked
// dropping (one change of them; none if they name no index).
struct MarkedDefinitions {
  std::vector<std::string> indexes;  // their names
  std::string etag;                  // their version now; "" if none is stored
};
Result<MarkedDefinitions> MarkIndexesDropping(const internal::StoreCore& core,
                                              const std::string& table) {
  BT_ASSIGN_OR_RETURN(internal::SchemaCopy copy, internal::ReadSchema(core, table));
  MarkedDefinitions marked;
  marked.etag = copy.etag;
  const bool all_dropping = std::all_of(
      copy.schema->indexes.begin(), copy.schema->indexes.end(),
      [](const internal::IndexDefinition& d) { return d.state == IndexState::kDropping; });
  for (const internal::IndexDefinition& d : copy.schema->indexes)
    marked.indexes.push_back(d.spec.name);
  if (all_dropping) return marked;
  BT_RETURN_IF_ERROR(internal::ChangeSchema(
      core, table,
      [&](internal::TableSchema& schema) {
        marked.indexes.clear();
        for (internal::IndexDefinition& d : schema.indexes) {
          d.state = IndexState::kDropping;
          marked.indexes.push_back(d.spec.name);
        }
        return Status::OK();
      },
      &marked.etag));
  return marked;
}

}  // namespace

Result<DropTableReport> Store::DropTable(std::string_view name,
                                         const DropTableOptions& options) const {
  return internal::AdminCall(core_.get(), "drop_table", name, [&]() -> Result<DropTableReport> {
    BT_RETURN_IF_ERROR(internal::naming::ValidateTableName(name));
    const std::string table(name);
    const std::string ctx = "dropping table " + table;
    const std::string prefix = internal::naming::TablePrefix(table);
    if (!options.force)
      BT_RETURN_IF_ERROR(RefuseWhatIsHeld(*core_->blobs, table, prefix).WithContext(ctx));
    // Its indexes first: marked dropping, so that writers stop maintaining
    // them (after the wait a drop waits: none on the embedded store) and no
    // index is created again under their names while their entries are
    // deleted; a drop cut short leaves them dropping (DropTable or DropIndex
    // again finishes it). Then the table's blobs, each index's entries until
    // none changed under the walk, and last the definitions, at the version
    // marked: changed since (an index created meanwhile), they are marked
    // again and the new indexes' entries deleted too (docs/indexes.md#stored-form).
    DropTableReport report;
    BT_ASSIGN_OR_RETURN(std::string definitions, internal::naming::SchemaBlobName(table));
    constexpr int kMaxRounds = 16;
    for (int round = 1;; ++round) {
      auto marked = MarkIndexesDropping(*core_, table);
      if (!marked.ok() && marked.status().IsCorruption() && options.force) {
        // Definitions that cannot be read name no index to mark: everything
        // under "<table>~" goes, after the table's blobs, as before 2026-11-29.
        BT_RETURN_IF_ERROR(DropUnder(prefix, options, report).WithContext(ctx));
        const std::string hidden =
            internal::naming::AllTablesPrefix() + internal::naming::SchemaTableName(table);
        BT_RETURN_IF_ERROR(DropUnder(hidden, options, report, /*settle=*/true).WithContext(ctx));
        break;
      }
      if (!marked.ok())
        return marked.status().WithContext(
            marked.status().IsCorruption()
                ? ctx +
                      " (its index definitions are damaged: drop with force deletes them with "
                      "everything else)"
                : ctx);
      if (!marked->indexes.empty()) internal::WaitOutEarlierWriters(*core_);
      if (round == 1) BT_RETURN_IF_ERROR(DropUnder(prefix, options, report).WithContext(ctx));
      for (const std::string& index : marked->indexes) {
        const std::string entries =
            internal::naming::TablePrefix(internal::naming::IndexTableName(table, index));
        BT_RETURN_IF_ERROR(DropUnder(entries, options, report, /*settle=*/true).WithContext(ctx));
      }
      if (marked->etag.empty()) break;  // none stored: an index created from now on is new
      Status removed = internal::DeleteEntity(*core_, definitions, marked->etag);
      if (removed.ok()) ++report.locks;
      if (removed.ok() || removed.IsNotFound()) break;
      if (!removed.IsConflict() || round >= kMaxRounds)
        return removed.WithContext(ctx + ": removing its index definitions");
    }
    core_->schemas->Forget(table);
    return report;
  });
}

Status Store::DropUnder(const std::string& prefix, const DropTableOptions& options,
                        DropTableReport& report, bool settle) const {
  constexpr int kMaxWalks = 16;
  for (int walk = 1;; ++walk) {
    const int64_t changed_before = report.changed;
    BT_RETURN_IF_ERROR(DropWalk(*core_, prefix, options, report));
    if (!settle || report.changed == changed_before) return Status::OK();
    if (walk >= kMaxWalks)
      return Status::Busy("blobs under '" + prefix + "' kept changing while they were deleted (" +
                          std::to_string(report.changed - changed_before) + " in the last of " +
                          std::to_string(walk) + " walks)");
    report.changed = changed_before;  // deleted by the next walk, or counted there
  }
}

}  // namespace blobtable
