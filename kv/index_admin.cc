// SPDX-License-Identifier: Apache-2.0
// Store::CreateIndex, DropIndex, ListIndexes and CheckIndex
// (docs/indexes.md): the definitions are one entity of the table's hidden
// definitions table, changed by conditional writes; a build publishes the
// index as building, waits out the writers that read the definitions
// before, then walks the table a page at a time (txn/index_upkeep.h,
// CommitBuilt), keeping where it got to in the definitions so that it
// resumes after a crash.
#include <algorithm>
#include <functional>
#include <map>

#include "blobtable/store.h"
#include "kv/index_definitions.h"
#include "kv/store_core.h"
#include "model/entity_codec.h"
#include "model/index_entries.h"
#include "model/index_naming.h"
#include "storage/list_all.h"
#include "testing/hooks.h"
#include "testing/sync_point.h"
#include "txn/definitions_check.h"
#include "txn/entity_access.h"
#include "txn/index_upkeep.h"
#include "util/macros.h"

namespace blobtable {
namespace {

using internal::IndexDefinition;
using internal::SchemaCopy;
using internal::TableSchema;

constexpr int kBuildPage = 100;  // entities a build's transaction covers

Status NoSuchIndex(std::string_view table, std::string_view name) {
  return Status::NotFound("table " + std::string(table) + " has no index " + std::string(name));
}

bool SameSpec(const IndexSpec& a, const IndexSpec& b) {
  return a.properties == b.properties && a.unique == b.unique && a.covered == b.covered;
}

}  // namespace

Result<std::vector<IndexInfo>> Store::ListIndexes(std::string_view table) const {
  BT_RETURN_IF_ERROR(internal::naming::ValidateTableName(table));
  BT_ASSIGN_OR_RETURN(SchemaCopy copy, internal::ReadSchema(*core_, table));
  std::vector<IndexInfo> out;
  for (const IndexDefinition& d : copy.schema->indexes) out.push_back({d.spec, d.state});
  return out;
}

Status Store::CreateIndex(std::string_view table_name, const IndexSpec& spec,
                          const CreateIndexOptions& options) const {
  return internal::AdminCall(core_.get(), "create_index", table_name, [&]() -> Status {
    BT_RETURN_IF_ERROR(internal::naming::ValidateTableName(table_name));
    const std::string table(table_name);
    const std::string ctx = "table " + table + ", creating index " + spec.name;
    // Published as building (or found building: resumed).
    std::string resume_from;
    Status published = internal::ChangeSchema(*core_, table, [&](TableSchema& schema) {
      if (const IndexDefinition* d = schema.Find(spec.name)) {
        if (d->state == IndexState::kBuilding && SameSpec(d->spec, spec)) {
          resume_from = d->built_through;
          return Status::OK();
        }
        return Status::Conflict("the table has an index " + d->spec.name +
                                (d->state == IndexState::kDropping
                                     ? " being dropped (DropIndex finishes a drop cut short)"
                                     : ""));
      }
      BT_RETURN_IF_ERROR(internal::ValidateNewIndex(spec, schema));
      schema.indexes.push_back({spec, IndexState::kBuilding, ""});
      return Status::OK();
    });
    if (!published.ok()) return published.WithContext(ctx);
    // Every write committed from now on followed definitions that hold the index.
    internal::WaitOutEarlierWriters(*core_);
    Table walked(core_, table);
    QueryOptions page_of;
    page_of.top = kBuildPage;
    page_of.policy = ReadPolicy::Validate();
    page_of.continuation = resume_from;
    IndexBuildProgress progress;
    for (;;) {
      BT_ASSIGN_OR_RETURN(SchemaCopy copy, internal::ReadSchema(*core_, table));
      const IndexDefinition* d = copy.schema->Find(spec.name);
      if (d == nullptr || d->state != IndexState::kBuilding)
        return Status::Conflict(ctx + ": the index was dropped or changed while it was built");
      auto page = walked.Query(page_of);
      if (!page.ok()) return page.status().WithContext(ctx);
      bool raced = false;
      Status built =
          internal::CommitBuilt(core_, table, d->spec, page->entities, copy.etag, &raced);
      if (raced) {  // read it again, halved: a busy table still lets a build through
        page_of.top = std::max(1, page_of.top / 2);
        continue;
      }
      if (!built.ok()) {
        if (built.IsConflict()) {  // two entities hold one unique value: no index
          Status dropped = DropIndex(table, spec.name, {.wait = true});
          if (!dropped.ok())
            return built.WithContext(ctx + " (and dropping it: " + dropped.ToString() + ")");
        }
        return built.WithContext(ctx);
      }
      BT_SYNC_POINT("index.page_built");  // committed, its place not yet kept
      progress.entities += static_cast<int64_t>(page->entities.size());
      for (const Entity& e : page->entities)
        if (internal::IndexedValues(d->spec, e)) ++progress.entries;
      const std::string next = page->continuation;
      BT_RETURN_IF_ERROR(internal::ChangeSchema(*core_, table, [&](TableSchema& schema) {
                           IndexDefinition* mine = schema.Find(spec.name);
                           if (mine != nullptr && mine->state == IndexState::kReady && next.empty())
                             return Status::OK();  // this change, applied by a lost write
                           if (mine == nullptr || mine->state != IndexState::kBuilding)
                             return Status::Conflict("the index was dropped while it was built");
                           mine->built_through = next;
                           if (next.empty()) mine->state = IndexState::kReady;
                           return Status::OK();
                         }).WithContext(ctx));
      if (options.progress) {
        internal::UserCode user;  // its calls are the user's own
        options.progress(progress);
      }
      if (next.empty()) return Status::OK();
      page_of.continuation = next;
      page_of.top = std::min(kBuildPage, page_of.top * 2);
    }
  });
}

Status Store::DropIndex(std::string_view table_name, std::string_view name,
                        const DropIndexOptions& options) const {
  return internal::AdminCall(core_.get(), "drop_index", table_name, [&]() -> Status {
    BT_RETURN_IF_ERROR(internal::naming::ValidateTableName(table_name));
    BT_RETURN_IF_ERROR(internal::naming::ValidateIndexName(name));
    const std::string table(table_name);
    const std::string index(name);
    const std::string ctx = "table " + table + ", dropping index " + index;
    BT_RETURN_IF_ERROR(internal::ChangeSchema(*core_, table, [&](TableSchema& schema) {
                         IndexDefinition* d = schema.Find(name);
                         if (d == nullptr) return NoSuchIndex(table, name);
                         d->state = IndexState::kDropping;
                         return Status::OK();
                       }).WithContext(ctx));
    // One removal at a time an index in this store: a second, started while
    // the first still deletes, could delete the entries of an index created
    // again under the name once the first is done.
    internal::IndexDrops& drops = *core_->index_drops;
    const std::string key = internal::naming::IndexTableName(table, index);
    const bool background = !options.wait && core_->finisher;
    {
      std::unique_lock<std::mutex> lock(drops.mu);
      if (background && drops.running.count(key) > 0) return Status::OK();  // on its way
      drops.done.wait(lock, [&] { return drops.running.count(key) == 0; });
      drops.running.insert(key);
    }
    auto removal = [&drops, key](const Store& store, const std::string& table,
                                 const std::string& index) {
      Status removed = store.RemoveDropped(table, index);
      std::lock_guard<std::mutex> lock(drops.mu);
      drops.running.erase(key);
      drops.done.notify_all();
      return removed;
    };
    if (!background) return removal(*this, table, index).WithContext(ctx);
    // The job runs on a store of its own over the same parts, which finishes
    // inline: it must not hold the finisher that runs it.
    auto parts = std::make_shared<internal::StoreCore>(*core_);
    parts->finisher = nullptr;
    core_->finisher->Submit([parts, table, index, removal] {
      Status removed = removal(Store(parts), table, index);
      if (!removed.ok())
        parts->Warn("table " + table + ", dropping index " + index +
                    " in the background: " + removed.ToString() +
                    "; it stays listed as dropping until DropIndex finishes it");
    });
    return Status::OK();
  });
}

// The rest of a drop, once the index is marked dropping: the grace where
// one is needed, its entries, its definition. Only while it is still marked dropping: not an
// index created again under its name since another drop finished.
Status Store::RemoveDropped(const std::string& table, const std::string& name) const {
  auto still_dropping = [&]() -> Result<bool> {
    BT_ASSIGN_OR_RETURN(SchemaCopy copy, internal::ReadSchema(*core_, table));
    const IndexDefinition* d = copy.schema->Find(name);
    return d != nullptr && d->state == IndexState::kDropping;
  };
  BT_ASSIGN_OR_RETURN(bool dropping, still_dropping());
  if (!dropping) return Status::OK();  // done by another
  // Writers that read the definitions before may still write entries.
  BT_SYNC_POINT("index.drop_waiting");
  internal::WaitOutEarlierWriters(*core_);
  BT_ASSIGN_OR_RETURN(dropping, still_dropping());
  if (!dropping) return Status::OK();
  // Until a walk meets no entry changed under it: a transaction committed
  // before the drop may still be finishing its entries (its intents
  // rewritten plain), and an entry left would outlive the definition.
  DropTableReport report;
  BT_RETURN_IF_ERROR(DropUnder(
      internal::naming::TablePrefix(internal::naming::IndexTableName(table, name)), {}, report,
      /*settle=*/true));
  return internal::ChangeSchema(*core_, table, [&](TableSchema& schema) {
    std::erase_if(schema.indexes, [&](const IndexDefinition& d) {
      return d.state == IndexState::kDropping &&
             internal::naming::IndexTableName(table, d.spec.name) ==
                 internal::naming::IndexTableName(table, name);
    });
    return Status::OK();
  });
}

Result<IndexCheckReport> Store::CheckIndex(std::string_view table_name,
                                           std::string_view name) const {
  return internal::AdminCall(
      core_.get(), "check_index", table_name, [&]() -> Result<IndexCheckReport> {
        BT_RETURN_IF_ERROR(internal::naming::ValidateTableName(table_name));
        const std::string table(table_name);
        const std::string ctx = "table " + table + ", checking index " + std::string(name);
        BT_ASSIGN_OR_RETURN(SchemaCopy copy, internal::ReadSchema(*core_, table));
        const IndexDefinition* d = copy.schema->Find(name);
        if (d == nullptr) return NoSuchIndex(table, name);
        if (d->state == IndexState::kBuilding)
          return Status::Busy(ctx +
                              ": it is still being built (it holds entries only for the "
                              "entities walked so far): check it once CreateIndex has finished");
        const IndexSpec& spec = d->spec;
        const std::string hidden = internal::naming::IndexTableName(table, name);
        IndexCheckReport report;
        auto problem = [&](std::string what) {
          if (report.problems.size() < 20) report.problems.push_back(std::move(what));
        };
        // What the index should hold: by entry blob name.
        std::map<std::string, Entity> expected;
        QueryOptions all;
        all.policy = ReadPolicy::Validate();
        TableScan scan = Table(core_, table).Scan(all);
        for (const Entity& e : scan) {
          ++report.entities;
          auto entry = internal::EntryOf(table, spec, e);
          if (!entry.ok()) return entry.status().WithContext(ctx);
          if (!*entry) continue;
          BT_ASSIGN_OR_RETURN(std::string blob,
                              internal::naming::EntityBlobName(hidden, (*entry)->partition_key(),
                                                               (*entry)->row_key()));
          auto [it, added] = expected.emplace(blob, std::move(**entry));
          if (!added) {
            ++report.duplicates;
            problem(internal::EntityContext(table, e.partition_key(), e.row_key()) +
                    ": holds the values of another entity in unique index " + spec.name);
          }
        }
        if (!scan.status().ok()) return scan.status().WithContext(ctx);
        ListOptions list;
        list.prefix = internal::naming::EntityPrefix(hidden);
        Status walked = internal::ForEachListed(*core_->blobs, list, [&](const BlobItem& item) {
          auto keys = internal::naming::ParseEntityBlobName(hidden, item.name);
          if (!keys.ok()) return Status::Corruption("'" + item.name + "' is not an index entry");
          auto entry = internal::ReadVisibleEntity(*core_, item.name, keys->partition_key,
                                                   keys->row_key, ReadPolicy::Validate());
          if (entry.status().IsNotFound()) return Status::OK();  // deleted since the listing
          if (!entry.ok()) return entry.status();
          ++report.entries;
          auto wanted = expected.find(item.name);
          if (wanted == expected.end() || wanted->second.properties() != entry->properties()) {
            ++report.dangling;
            auto of = internal::EntityOfEntry(*entry);
            problem("an entry of index " + spec.name + " names " +
                    (of.ok() ? internal::EntityContext(table, of->partition_key, of->row_key)
                             : std::string("no entity")) +
                    (wanted == expected.end() ? ", which does not hold its values"
                                              : ", and holds other properties than it"));
          }
          if (wanted != expected.end()) expected.erase(wanted);
          return Status::OK();
        });
        if (!walked.ok()) return walked.WithContext(ctx);
        for (const auto& [blob, entry] : expected) {
          ++report.missing;
          auto of = internal::EntityOfEntry(entry);
          if (of.ok())
            problem(internal::EntityContext(table, of->partition_key, of->row_key) +
                    ": has no entry in index " + spec.name);
        }
        return report;
      });
}

}  // namespace blobtable
