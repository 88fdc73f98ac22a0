// SPDX-License-Identifier: Apache-2.0
// Table::QueryIndex (docs/indexes.md#querying): one listing of the index's
// entries in the query's range, then the entities they name, read
// concurrently and checked against the query as they are now; or, when the
// selected properties are all in the index, the entries alone.
#include <algorithm>
#include <chrono>
#include <optional>
#include <vector>

#include "blobtable/table.h"
#include "kv/query_plan.h"
#include "kv/store_core.h"
#include "model/entity_codec.h"
#include "model/filter.h"
#include "model/index_entries.h"
#include "model/index_naming.h"
#include "storage/list_all.h"
#include "txn/entity_access.h"
#include "txn/index_upkeep.h"
#include "util/macros.h"
#include "util/parallel.h"

namespace blobtable {
namespace {

// Whether the index holds every property the caller reads.
bool Covers(const IndexSpec& spec, const std::vector<std::string>& select,
            const std::optional<internal::Filter>& filter) {
  if (select.empty()) return false;
  auto held = [&](const std::string& p) {
    return std::find(spec.properties.begin(), spec.properties.end(), p) != spec.properties.end() ||
           std::find(spec.covered.begin(), spec.covered.end(), p) != spec.covered.end();
  };
  if (!std::all_of(select.begin(), select.end(), held)) return false;
  if (!filter) return true;
  const std::vector<std::string> read = filter->Properties();
  return std::all_of(read.begin(), read.end(), held);
}

// The entry a listed blob holds: from the listing where it carries the
// body and no transaction's mark, else read. A listing the cache answered
// (stale) has no copies to trust, as in Table::Query: its entries are read.
Result<Entity> EntryOfListed(const internal::StoreCore& core, const std::string& hidden,
                             const BlobItem& item, bool listing_stale, const ReadPolicy& policy) {
  std::optional<std::string> copy;
  if (const std::string* body = listing_stale ? nullptr : internal::ListedBody(item, copy)) {
    auto e = internal::DecodeEntity(*body, item.name);
    if (e.ok()) return e;
  }
  BT_ASSIGN_OR_RETURN(internal::naming::EntityKey keys,
                      internal::naming::ParseEntityBlobName(hidden, item.name));
  return internal::ReadVisibleEntity(core, item.name, keys.partition_key, keys.row_key, policy);
}

}  // namespace

Result<QueryPage> Table::QueryIndex(std::string_view index, const IndexQuery& query,
                                    const QueryOptions& options) const {
  return internal::MeteredCall(core_.get(), internal::OpKind::kIndexQuery, name_,
                               [&] { return QueryIndexPage(index, query, options); });
}

Result<QueryPage> Table::QueryIndexPage(std::string_view index, const IndexQuery& query,
                                        const QueryOptions& options) const {
  BT_RETURN_IF_ERROR(Usable());
  const std::string ctx = "table " + name_ + ", query of index " + std::string(index);
  if (options.partition_key || options.row_key_from || options.row_key_to || options.row_key_prefix)
    return Status::InvalidArgument(ctx +
                                   ": the key fields of QueryOptions do not apply (put "
                                   "PartitionKey and RowKey conditions in the filter)");
  if (options.top < 1 || options.top > 1000)
    return Status::InvalidArgument(ctx + ": top must be 1..1000");
  BT_ASSIGN_OR_RETURN(internal::SchemaCopy copy, core_->schemas->Current(*core_, name_));
  const internal::IndexDefinition* d = copy.schema->Find(index);
  // The store's copy may be a second or two old: an index it does not
  // show ready is asked about afresh before the answer says it is missing,
  // building or dropping (an index another process just created or built).
  if (d == nullptr || d->state != IndexState::kReady) {
    BT_ASSIGN_OR_RETURN(copy, core_->schemas->Current(*core_, name_, std::chrono::milliseconds(0)));
    d = copy.schema->Find(index);
  }
  if (d == nullptr) return Status::InvalidArgument(ctx + ": the table has no such index");
  if (d->state == IndexState::kBuilding)
    return Status::Busy(ctx + ": the index is still being built");
  if (d->state == IndexState::kDropping)
    return Status::InvalidArgument(ctx + ": the index is being dropped");
  const IndexSpec& spec = d->spec;
  BT_RETURN_IF_ERROR(internal::ValidateIndexQuery(spec, query).WithContext(ctx));
  std::optional<internal::Filter> filter;
  if (!options.filter.empty()) {
    auto parsed = internal::Filter::Parse(options.filter);
    if (!parsed.ok()) return parsed.status().WithContext(ctx);
    filter = std::move(*parsed);
  }
  const ReadPolicy policy = options.policy.value_or(core_->options.cache.read_policy);
  const bool covered = Covers(spec, options.select, filter);
  const std::string hidden = internal::naming::IndexTableName(name_, spec.name);
  const internal::naming::IndexScan scan =
      internal::naming::IndexScanOf(name_, spec.name, query.equal, query.from, query.to);
  ListOptions list;
  list.prefix = scan.prefix;
  list.start_from = scan.from;
  if (!options.continuation.empty()) {
    // The continuation is the last entry answered for: on after it.
    if (!options.continuation.starts_with(scan.prefix))
      return Status::InvalidArgument(ctx + ": a continuation of another query");
    list.start_from = std::max(list.start_from, options.continuation + '\x01');
  }
  list.include_data = core_->blobs->traits().list_data;
  const size_t top = static_cast<size_t>(options.top);
  QueryPage page;
  std::string last_answered;  // the last entry the page has answered for
  for (int pages = 0;;) {
    auto listed = core_->ListEntityBlobs(list, policy);
    if (!listed.ok()) return listed.status().WithContext(ctx);
    page.stale = page.stale || listed->stale;
    std::vector<Entity> entries;
    std::vector<std::string> names;
    bool past = false;
    for (const BlobItem& item : listed->page.items) {
      if (item.name >= scan.to) {
        past = true;
        break;
      }
      if (internal::Counter* scanned = internal::RowsScannedCounter(core_.get())) scanned->Add();
      auto entry = EntryOfListed(*core_, hidden, item, listed->stale, policy);
      if (entry.status().IsNotFound()) continue;  // deleted since the listing
      if (!entry.ok()) return entry.status().WithContext(ctx);
      page.stale = page.stale || entry->stale();
      auto values = internal::IndexedValues(spec, *entry);
      if (!values || !internal::MatchesIndexQuery(query, *values)) continue;
      entries.push_back(std::move(*entry));
      names.push_back(item.name);
    }
    // In batches of the room left on the page.
    for (size_t next = 0; next < entries.size();) {
      if (page.entities.size() == top) {
        page.continuation = last_answered;
        return page;
      }
      const size_t n = std::min(entries.size() - next, top - page.entities.size());
      std::vector<Result<Entity>> got(n, Status::Internal("not read"));
      std::vector<std::pair<std::string, std::string>> keys(n);
      for (size_t i = 0; i < n; ++i) {
        auto of = internal::EntityOfEntry(entries[next + i]);
        if (!of.ok()) return of.status().WithContext(ctx + ", entry " + names[next + i]);
        keys[i] = {of->partition_key, of->row_key};
        if (covered) got[i] = internal::EntityFromEntry(entries[next + i], *of);
      }
      if (!covered) {
        internal::ParallelFor(n, static_cast<size_t>(core_->parallel_reads), [&](size_t i) {
          got[i] = Get(keys[i].first, keys[i].second, policy);
        });
      }
      for (size_t i = 0; i < n; ++i) {
        if (got[i].status().IsNotFound()) continue;  // deleted since its entry was listed
        if (!got[i].ok()) return got[i].status();
        // As the entity is now: it must still hold the entry's values.
        auto now = internal::IndexedValues(spec, *got[i]);
        auto listed_values = internal::IndexedValues(spec, entries[next + i]);
        if (!now || !internal::MatchesIndexQuery(query, *now) ||
            !internal::SameIndexValues(*now, *listed_values))
          continue;
        if (filter && !filter->Matches(*got[i])) continue;
        page.stale = page.stale || got[i]->stale();
        internal::ProjectSelected(options.select, *got[i]);
        page.entities.push_back(std::move(*got[i]));
      }
      next += n;
      last_answered = names[next - 1];
    }
    if (past) return page;
    auto more = NextListPage(list, listed->page, &pages);
    if (!more.ok()) return more.status().WithContext(ctx);
    if (!*more) return page;
    if (page.entities.size() == top && !last_answered.empty()) {
      page.continuation = last_answered;  // more may follow
      return page;
    }
  }
}

}  // namespace blobtable
