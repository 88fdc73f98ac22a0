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

// The entity a listed blob's body decodes to (only the properties `only`
// names, if not null), if it is the entity the blob's name says; else the
// row is read (the read says what is wrong).
std::optional<Entity> FromListing(std::string_view body, std::string_view name,
                                  std::string_view etag, std::string_view entity_prefix,
                                  const std::vector<std::string>* only) {
  auto e =
      only ? internal::DecodeEntityPart(body, name, *only) : internal::DecodeEntity(body, name);
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
  RowCollector(const std::string& table, const std::string& entity_prefix, const QueryOptions& q,
               const std::string& after, const internal::Filter* filter,
               const std::vector<std::string>& filter_properties)
      : table_(table),
        entity_prefix_(entity_prefix),
        q_(q),
        after_(after),
        filter_(filter),
        filter_properties_(filter_properties) {}

  // One listed blob: `body` is its entity's body if the listing may answer
  // for it (no transaction's mark on it; its body listed with it, or an
  // inline copy that is the blob's body), else null. Corruption if it is
  // no entity blob of the table.
  Status Add(std::string_view name, std::string_view etag, const std::string_view* body) {
    if (past_range_ || (!after_.empty() && name <= after_)) return Status::OK();
    last_listed_.assign(name);
    Row row;
    if (body != nullptr)
      row.listed = FromListing(*body, name, etag, entity_prefix_,
                               filter_ != nullptr ? &filter_properties_ : nullptr);
    if (!row.listed) BT_RETURN_IF_ERROR(ToRead(name, etag, row));
    const std::string& rk = row.listed ? row.listed->row_key() : row.key.row_key;
    if (q_.row_key_from && rk < *q_.row_key_from) return Status::OK();
    if ((q_.row_key_to && rk > *q_.row_key_to) ||
        (q_.row_key_prefix && !rk.starts_with(*q_.row_key_prefix))) {
      past_range_ = q_.partition_key.has_value();  // nothing later matches
      return Status::OK();
    }
    if (row.listed && filter_ != nullptr) {                     // decoded in part
      if (!filter_->Matches(*row.listed)) return Status::OK();  // it cannot match
      row.listed = FromListing(*body, name, etag, entity_prefix_, nullptr);
      if (!row.listed) BT_RETURN_IF_ERROR(ToRead(name, etag, row));
    }
    row.name.assign(name);
    rows_.push_back(std::move(row));
    return Status::OK();
  }

  std::vector<Row>& rows() { return rows_; }
  bool past_range() const { return past_range_; }
  // The last blob the listings reached.
  const std::string& last_listed() const { return last_listed_; }

 private:
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

  const std::string& table_;
  const std::string& entity_prefix_;
  const QueryOptions& q_;
  const std::string& after_;
  const internal::Filter* filter_;
  const std::vector<std::string>& filter_properties_;
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
    return core.in_place->ListInPlace(list, [&](const internal::BlobInPlace& b) {
      return rows.Add(b.name, b.etag, internal::HasMark(*b.metadata) ? nullptr : &b.data);
    });
  }
  auto cached = core.ListEntityBlobs(list, policy);
  if (!cached.ok()) return cached.status();
  stale = cached->stale;
  for (const BlobItem& item : cached->page.items) {
    // A listing the cache answered (stale) has no copies or ETags to trust.
    std::optional<std::string> copy;
    std::string_view body;
    const bool answers = !stale && internal::MarkingTransaction(item.properties).empty() &&
                         (item.data || (copy = internal::InlineBody(item.properties)));
    if (answers) body = item.data ? *item.data : *copy;
    BT_RETURN_IF_ERROR(
        rows.Add(item.name, stale ? "" : item.properties.etag, answers ? &body : nullptr));
  }
  return std::move(cached->page.next_marker);
}

// Narrows the query's key range to the filter's (PartitionKey eq, RowKey
// bounds in its top-level conjunction); false if nothing can match.
bool NarrowToFilter(const internal::Filter& filter, QueryOptions& q) {
  const internal::FilterKeyRange r = filter.KeyRange();
  if (r.empty) return false;
  if (r.partition_key) {
    if (q.partition_key && *q.partition_key != *r.partition_key) return false;
    q.partition_key = r.partition_key;
  }
  if (r.row_key_from && (!q.row_key_from || *q.row_key_from < *r.row_key_from))
    q.row_key_from = r.row_key_from;
  if (r.row_key_to && (!q.row_key_to || *r.row_key_to < *q.row_key_to)) q.row_key_to = r.row_key_to;
  return !(q.row_key_from && q.row_key_to && *q.row_key_to < *q.row_key_from);
}

// Keeps only the selected properties (the keys, Timestamp and ETag stay).
void Project(const std::vector<std::string>& select, Entity& e) {
  if (select.empty()) return;
  auto& props = e.mutable_properties();
  for (auto it = props.begin(); it != props.end();)
    it = std::find(select.begin(), select.end(), it->first) == select.end() ? props.erase(it)
                                                                            : std::next(it);
}

}  // namespace

Result<QueryPage> Table::Query(const QueryOptions& options) const {
  BT_RETURN_IF_ERROR(Usable());
  const std::string ctx = "table " + name_ + ", query";
  QueryOptions q = options;
  std::optional<internal::Filter> filter;
  if (!q.filter.empty()) {
    auto parsed = internal::Filter::Parse(q.filter);
    if (!parsed.ok()) return parsed.status().WithContext(ctx);
    filter = std::move(*parsed);
  }
  if (q.top < 1 || q.top > 1000)
    return Status::InvalidArgument(ctx + ": top must be 1..1000, got " + std::to_string(q.top));
  if (q.partition_key) BT_RETURN_IF_ERROR(ValidateKey(*q.partition_key, "PartitionKey"));
  if (q.row_key_from) BT_RETURN_IF_ERROR(ValidateKey(*q.row_key_from, "RowKey"));
  if (q.row_key_to) BT_RETURN_IF_ERROR(ValidateKey(*q.row_key_to, "RowKey"));
  if (q.row_key_prefix) {
    BT_RETURN_IF_ERROR(ValidateKey(*q.row_key_prefix, "RowKey prefix"));
    if (!q.row_key_from || *q.row_key_from < *q.row_key_prefix) q.row_key_from = q.row_key_prefix;
  }
  if (filter && !NarrowToFilter(*filter, q)) return QueryPage{};  // nothing can match: no request

  const std::string entity_prefix = internal::naming::EntityPrefix(name_);
  ListOptions list;
  list.prefix =
      q.partition_key ? internal::naming::PartitionPrefix(name_, *q.partition_key) : entity_prefix;
  list.include_data = core_->blobs->traits().list_data;
  if (q.partition_key && q.row_key_from)
    list.start_from = list.prefix + "-" + internal::naming::EncodeKey(*q.row_key_from);
  // Keys are escaped byte by byte, so a RowKey prefix is a name prefix.
  if (q.partition_key && q.row_key_prefix)
    list.prefix += "-" + internal::naming::EncodeKey(*q.row_key_prefix);

  // The continuation token is "1." and the last returned name after the
  // table's entity prefix; listing resumes there.
  std::string after;
  if (!q.continuation.empty()) {
    if (q.continuation.substr(0, 2) != "1.")
      return Status::InvalidArgument(ctx + ": continuation token is not from blobtable");
    after = entity_prefix + q.continuation.substr(2);
    if (after.substr(0, list.prefix.size()) != list.prefix)
      return Status::InvalidArgument(ctx + ": continuation token belongs to another query");
    list.start_from = std::max(list.start_from, after);
  }
  // A page's rows, one more to tell whether more follow, and on a
  // continuation the last row of the page before (listing starts at it): one
  // listing a page (without that slot, every continued full page took two).
  list.max_results = std::min(5000, q.top + 1 + (after.empty() ? 0 : 1));

  const ReadPolicy policy = q.policy.value_or(core_->options.cache.read_policy);
  const std::vector<std::string> filter_properties =
      filter ? filter->Properties() : std::vector<std::string>();
  const size_t top = static_cast<size_t>(q.top);
  QueryPage page;
  std::string last;         // the last row the page answered for
  std::string last_listed;  // the last row the listings reached
  bool more = false;
  int pages = 0;
  for (;;) {
    RowCollector collect(name_, entity_prefix, q, after, filter ? &*filter : nullptr,
                         filter_properties);
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
        Project(q.select, *got[i]);
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
  if (more) page.continuation = "1." + last.substr(entity_prefix.size());
  return page;
}

}  // namespace blobtable
