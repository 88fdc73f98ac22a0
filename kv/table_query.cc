// SPDX-License-Identifier: Apache-2.0
// Table::Query: one listing answers for the rows it can (their inline
// copies, docs/data-model.md#stored-form); the others are read, concurrently, each
// through the cache if the store has one.
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
  const BlobItem* item;
  internal::naming::EntityKey key;
};

// The entity a listed blob carries, if the listing may answer for it: no
// transaction's mark on it (that needs settling: read it), and its body
// listed with it (a backend that lists with data, in the listing's
// snapshot) or an inline copy that is the blob's body (its MD5 is the
// Content-MD5 listed), decoding to this entity.
std::optional<Entity> FromListing(const Row& row) {
  const BlobProperties& p = row.item->properties;
  if (!internal::MarkingTransaction(p).empty()) return std::nullopt;
  // The body itself (a backend that lists with data), else its inline copy.
  std::optional<std::string> copy;
  if (!row.item->data && !(copy = internal::InlineBody(p))) return std::nullopt;
  auto e = internal::DecodeEntity(row.item->data ? *row.item->data : *copy, row.item->name);
  if (!e.ok() || e->partition_key() != row.key.partition_key || e->row_key() != row.key.row_key)
    return std::nullopt;  // read it: the read says what is wrong
  e->set_etag(p.etag);
  return std::move(*e);
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
  const size_t top = static_cast<size_t>(q.top);
  QueryPage page;
  std::string last;         // the last row the page answered for
  std::string last_listed;  // the last row the listings reached
  bool more = false;
  int pages = 0;
  for (;;) {
    auto cached = core_->ListEntityBlobs(list, policy);
    if (!cached.ok()) return cached.status().WithContext(ctx);
    page.stale = page.stale || cached->stale;
    const ListPage* listed = &cached->page;
    std::vector<Row> rows;
    bool past_range = false;
    for (const BlobItem& item : listed->items) {
      if (!after.empty() && item.name <= after) continue;
      last_listed = item.name;
      // A reservation is absent unless its (dead) transaction committed:
      // the read below resolves that.
      auto key = internal::naming::ParseEntityBlobName(name_, item.name);
      if (!key.ok())
        return Status::Corruption(ctx + ": blob '" + item.name +
                                  "' in the table's entity prefix is not an entity blob");
      if (q.row_key_from && key->row_key < *q.row_key_from) continue;
      if ((q.row_key_to && key->row_key > *q.row_key_to) ||
          (q.row_key_prefix && !key->row_key.starts_with(*q.row_key_prefix))) {
        past_range = q.partition_key.has_value();  // nothing later matches
        if (past_range) break;
        continue;
      }
      rows.push_back(Row{&item, std::move(*key)});
    }
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
        // A listing the cache answered (stale) has no copies to trust.
        std::optional<Entity> e = cached->stale ? std::nullopt : FromListing(rows[next + i]);
        if (e)
          got[i] = std::move(*e);
        else
          to_read.push_back(i);
      }
      internal::ParallelFor(
          to_read.size(), static_cast<size_t>(core_->parallel_reads), [&](size_t j) {
            const Row& row = rows[next + to_read[j]];
            // The listing's ETag lets a cached copy answer without a request.
            const std::string listed_etag = cached->stale ? "" : row.item->properties.etag;
            got[to_read[j]] = Read(row.key.partition_key, row.key.row_key, policy, listed_etag);
          });
      for (size_t i = 0; i < n; ++i) {
        if (got[i].status().IsNotFound()) continue;  // deleted since it was listed
        if (!got[i].ok()) return got[i].status();
        last = rows[next + i].item->name;
        if (filter && !filter->Matches(*got[i])) continue;
        page.stale = page.stale || got[i]->stale();
        Project(q.select, *got[i]);
        page.entities.push_back(std::move(*got[i]));
      }
      next += n;
    }
    if (more || past_range) break;
    auto next = NextListPage(list, *listed, &pages);
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
