// SPDX-License-Identifier: Apache-2.0
// Table::Query: one listing answers for the rows it can (their inline
// copies, docs/data-model.md#stored-form, or their bodies where the backend
// lists with data, in place where it can: storage/in_place.h); the
// others are read, concurrently, each through the cache if the store has
// one.
#include <algorithm>
#include <optional>
#include <vector>

#include "blobtable/table.h"
#include "model/blob_naming.h"
#include "model/entity_codec.h"
#include "model/filter.h"
#include "model/inline_body.h"
#include "kv/query_plan.h"
#include "txn/recovery.h"
#include "kv/store_core.h"
#include "util/macros.h"
#include "util/parallel.h"

namespace blobtable {
namespace {

// A listed blob whose entity the page returns (if it still exists).
struct Row {
  std::string name;
  // The entity the listing answers with, if it may; else the row is read.
  std::optional<Entity> listed;
  internal::naming::EntityKey key;  // rows to read: their keys
  std::string etag;                 // rows to read: the ETag listed, "" if not to be trusted
};

// The entity a listed blob's body decodes to, if it is the entity the
// blob's name says; else the row is read (the read says what is wrong).
std::optional<Entity> FromListing(std::string_view body, std::string_view name,
                                  std::string_view etag, std::string_view entity_prefix) {
  auto e = internal::DecodeEntity(body, name);
  if (!e.ok() ||
      !internal::naming::IsEntityBlobNameOf(name, entity_prefix, e->partition_key(), e->row_key()))
    return std::nullopt;
  e->set_etag(std::string(etag));
  return std::move(*e);
}

// Takes a listing's blobs onto the rows of a page, within the query's
// key range. With a filter, a row the listing answers for is first decoded
// with only the properties the filter reads, and decoded whole only if it
// matches (docs/performance.md: a filtered scan builds the rows it returns).
class RowCollector {
 public:
  RowCollector(const std::string& table, const internal::QueryPlan& plan,
               internal::Counter* scanned)
      : scanned_counter_(scanned),
        table_(table),
        entity_prefix_(plan.entity_prefix),
        q_(plan.q),
        after_(plan.after),
        filter_(plan.filter ? &*plan.filter : nullptr),
        filter_properties_(plan.filter_properties) {}

  // One listed blob: `body` is its entity's body if the listing may answer
  // for it (no transaction's mark on it; its body listed with it, or an
  // inline copy that is the blob's body), else null. Corruption if it is
  // no entity blob of the table.
  Status Add(std::string_view name, std::string_view etag, const std::string_view* body) {
    if (past_range_ || (!after_.empty() && name <= after_)) return Status::OK();
    ++scanned_;
    last_listed_.assign(name);
    // With a filter, the properties it reads are viewed where they lie
    // first: a row that cannot match is never copied.
    bool placed = false;
    if (body != nullptr && filter_ != nullptr) {
      auto part = internal::DecodeEntityViewPart(*body, name, filter_properties_, props_);
      if (part.ok() && internal::naming::IsEntityBlobNameOf(
                           name, entity_prefix_, part->partition_key(), part->row_key())) {
        if (!InRange(part->row_key()) || !filter_->Matches(*part)) return Status::OK();
        placed = true;
      }
    }
    Row row;
    if (body != nullptr && (filter_ == nullptr || placed))
      row.listed = FromListing(*body, name, etag, entity_prefix_);
    if (!row.listed) BT_RETURN_IF_ERROR(ToRead(name, etag, row));
    if (!placed && !InRange(row.listed ? row.listed->row_key() : row.key.row_key))
      return Status::OK();
    row.name.assign(name);
    rows_.push_back(std::move(row));
    return Status::OK();
  }

  RowCollector(const RowCollector&) = delete;
  RowCollector& operator=(const RowCollector&) = delete;
  ~RowCollector() {  // the rows its listing reached, returned or not
    if (scanned_counter_ != nullptr && scanned_ > 0) scanned_counter_->Add(scanned_);
  }

  std::vector<Row>& rows() { return rows_; }
  bool past_range() const { return past_range_; }
  // The last blob the listings reached.
  const std::string& last_listed() const { return last_listed_; }

 private:
  // Whether RowKey `rk` is in the query's range; past it, notes that
  // nothing later in the partition can be.
  bool InRange(std::string_view rk) {
    const internal::RowPlace place = internal::PlaceRow(q_, rk);
    if (place == internal::RowPlace::kAfter) past_range_ = q_.partition_key.has_value();
    return place == internal::RowPlace::kIn;
  }

  // Makes `row` a row to read, by its keys.
  Status ToRead(std::string_view name, std::string_view etag, Row& row) const {
    // A reservation is absent unless its (dead) transaction committed: the
    // read resolves that.
    auto key = internal::naming::ParseEntityBlobName(table_, name);
    if (!key.ok())
      return Status::Corruption("blob '" + std::string(name) +
                                "' in the table's entity prefix is not an entity blob");
    row.key = *std::move(key);
    row.etag.assign(etag);
    return Status::OK();
  }

  internal::Counter* scanned_counter_;
  uint64_t scanned_ = 0;
  const std::string& table_;
  const std::string& entity_prefix_;
  const QueryOptions& q_;
  const std::string& after_;
  const internal::Filter* filter_;
  const std::vector<std::string>& filter_properties_;
  std::vector<PropertyView> props_;  // a row's filtered properties, viewed
  std::vector<Row> rows_;
  std::string last_listed_;
  bool past_range_ = false;
};

// Lists the page `list` asks for onto `rows`: in place where the backend
// can, else through the cache if the store has one. Returns the page's
// next marker; `stale` tells whether the cache answered from its copies.
Result<std::string> ListRows(const internal::StoreCore& core, const ListOptions& list,
                             const ReadPolicy& policy, RowCollector& rows, bool& stale) {
  if (core.in_place != nullptr) {
    stale = false;
    const auto checked = internal::InPlaceData::kChecked;
    return core.in_place->ListInPlace(list, checked, [&](const internal::BlobInPlace& b) {
      return rows.Add(b.name, b.etag, internal::HasMark(*b.metadata) ? nullptr : &b.data);
    });
  }
  auto cached = core.ListEntityBlobs(list, policy);
  if (!cached.ok()) return cached.status();
  stale = cached->stale;
  for (const BlobItem& item : cached->page.items) {
    // A listing the cache answered (stale) has no copies or ETags to trust.
    std::optional<std::string> copy;
    const std::string* listed = stale ? nullptr : internal::ListedBody(item, copy);
    const bool answers = listed != nullptr;
    std::string_view body;
    if (answers) body = *listed;
    BT_RETURN_IF_ERROR(
        rows.Add(item.name, stale ? "" : item.properties.etag, answers ? &body : nullptr));
  }
  return std::move(cached->page.next_marker);
}

}  // namespace

Result<QueryPage> Table::Query(const QueryOptions& options) const {
  return internal::MeteredCall(core_.get(), internal::OpKind::kQuery, name_,
                               [&] { return QueryOnePage(options); });
}

Result<QueryPage> Table::QueryOnePage(const QueryOptions& options) const {
  BT_RETURN_IF_ERROR(Usable());
  const std::string ctx = "table " + name_ + ", query";
  auto planned = internal::PlanQuery(name_, core_->blobs->traits().list_data,
                                     core_->options.cache.read_policy, options);
  if (!planned.ok()) return planned.status();
  internal::QueryPlan& plan = *planned;
  if (plan.nothing) return QueryPage{};  // nothing can match: no request
  const QueryOptions& q = plan.q;
  const std::optional<internal::Filter>& filter = plan.filter;
  ListOptions& list = plan.list;
  const ReadPolicy& policy = plan.policy;
  const size_t top = static_cast<size_t>(q.top);
  QueryPage page;
  std::string last;         // the last row the page answered for
  std::string last_listed;  // the last row the listings reached
  bool more = false;
  int pages = 0;
  for (;;) {
    RowCollector collect(name_, plan, internal::RowsScannedCounter(core_.get()));
    bool stale = false;
    auto next_marker = ListRows(*core_, list, policy, collect, stale);
    if (!next_marker.ok()) return next_marker.status().WithContext(ctx);
    page.stale = page.stale || stale;
    std::vector<Row>& rows = collect.rows();
    if (!collect.last_listed().empty()) last_listed = collect.last_listed();
    // In batches of the room left on the page, so that a row deleted since
    // the listing makes room for the next one.
    for (size_t next = 0; next < rows.size();) {
      if (page.entities.size() == top) {
        more = true;
        break;
      }
      const size_t n = std::min(rows.size() - next, top - page.entities.size());
      std::vector<Result<Entity>> got(n, Status::Internal("not read"));
      std::vector<size_t> to_read;
      for (size_t i = 0; i < n; ++i) {
        if (rows[next + i].listed)
          got[i] = std::move(*rows[next + i].listed);
        else
          to_read.push_back(i);
      }
      internal::ParallelFor(
          to_read.size(), static_cast<size_t>(core_->parallel_reads), [&](size_t j) {
            const Row& row = rows[next + to_read[j]];
            // The listing's ETag lets a cached copy answer without a request.
            got[to_read[j]] = Read(row.key.partition_key, row.key.row_key, policy, row.etag);
          });
      for (size_t i = 0; i < n; ++i) {
        if (got[i].status().IsNotFound()) continue;  // deleted since it was listed
        if (!got[i].ok()) return got[i].status();
        last = rows[next + i].name;
        if (filter && !filter->Matches(*got[i])) continue;
        page.stale = page.stale || got[i]->stale();
        internal::ProjectSelected(q.select, *got[i]);
        page.entities.push_back(std::move(*got[i]));
      }
      next += n;
    }
    if (more || collect.past_range()) break;
    ListPage marker;  // what NextListPage reads of a page
    marker.next_marker = *std::move(next_marker);
    auto next = NextListPage(list, marker, &pages);
    if (!next.ok()) return next.status().WithContext(ctx);
    if (!*next) break;
    if (filter && !last_listed.empty()) {
      // A filtered page holds the matches of one listing, as in Azure: it
      // may hold fewer than `top` rows, and more may follow.
      more = true;
      last = last_listed;
      break;
    }
  }
  if (more) page.continuation = internal::ContinuationAfter(plan, last);
  return page;
}

}  // namespace blobtable
