// SPDX-License-Identifier: Apache-2.0
// Table::Count and Table::DeleteWhere: what the everyday tool asks of a
// table as a whole (tools/cli/count.cc, tools/cli/delete.cc).
#include <string>
#include <vector>

#include "blobtable/table.h"
#include "blobtable/txn.h"
#include "kv/query_plan.h"
#include "kv/store_core.h"
#include "model/blob_naming.h"
#include "txn/recovery.h"
#include "util/function_ref.h"
#include "util/macros.h"
#include "util/parallel.h"

namespace blobtable {
namespace {

constexpr int kDeleteBatch = 500;

// Counts the rows of `plan` from the in-place listing without decoding
// them; a row under a transaction's mark counts if `exists` says so.
Result<int64_t> CountListed(
    const internal::StoreCore& core, const std::string& table, internal::QueryPlan& plan,
    internal::FunctionRef<Result<bool>(const internal::naming::EntityKey&)> exists) {
  const QueryOptions& q = plan.q;
  const bool bounded = q.row_key_from || q.row_key_to || q.row_key_prefix;
  int64_t n = 0;
  bool past = false;
  std::vector<internal::naming::EntityKey> marked;
  // Whether the row named `name` is in the query's range; nullopt past it.
  auto place = [&](std::string_view name, internal::naming::EntityKey* key) -> Result<bool> {
    if (!bounded && key == nullptr) return true;
    auto parsed = internal::naming::ParseEntityBlobName(table, name);
    if (!parsed.ok())
      return Status::Corruption("blob '" + std::string(name) +
                                "' in the table's entity prefix is not an entity blob");
    const internal::RowPlace where = internal::PlaceRow(q, parsed->row_key);
    if (where == internal::RowPlace::kAfter) past = q.partition_key.has_value();
    if (key != nullptr) *key = std::move(*parsed);
    return where == internal::RowPlace::kIn;
  };
  plan.list.max_results = 5000;
  for (int pages = 0;;) {
    // Counted by name: the data is not read.
    const auto unread = internal::InPlaceData::kAsItLies;
    auto next_marker = core.in_place->ListInPlace(plan.list, unread, [&](const auto& b) {
      if (past || (!plan.after.empty() && b.name <= plan.after)) return Status::OK();
      const bool is_marked = internal::HasMark(*b.metadata);
      internal::naming::EntityKey key;
      auto in = place(b.name, is_marked ? &key : nullptr);
      if (!in.ok()) return in.status();
      if (*in && is_marked) marked.push_back(std::move(key));
      n += *in && !is_marked;
      return Status::OK();
    });
    if (!next_marker.ok()) return next_marker.status();
    if (past) break;
    ListPage page;
    page.next_marker = *std::move(next_marker);
    auto more = NextListPage(plan.list, page, &pages);
    if (!more.ok()) return more.status();
    if (!*more) break;
  }
  for (const auto& key : marked) {
    auto there = exists(key);
    if (!there.ok()) return there.status();
    n += *there;
  }
  return n;
}

struct Doomed {
  std::string partition_key, row_key, etag;
};

}  // namespace

Result<int64_t> Table::Count(const QueryOptions& options) const {
  return internal::AdminCall(core_.get(), "count", name_, [&]() -> Result<int64_t> {
    BT_RETURN_IF_ERROR(Usable());
    QueryOptions q = options;
    q.top = 1000;
    q.select.clear();
    const std::string ctx = "table " + name_ + ", count";
    if (core_->in_place != nullptr && q.filter.empty()) {
      auto plan = internal::PlanQuery(name_, true, core_->options.cache.read_policy, q);
      if (!plan.ok()) return plan.status();
      if (plan->nothing) return 0;
      auto n = CountListed(*core_, name_, *plan, [&](const internal::naming::EntityKey& k) {
        auto e = Read(k.partition_key, k.row_key, plan->policy, "");
        if (e.status().IsNotFound()) return Result<bool>(false);
        return e.ok() ? Result<bool>(true) : Result<bool>(e.status());
      });
      if (!n.ok()) return n.status().WithContext(ctx);
      return n;
    }
    int64_t n = 0;
    for (;;) {
      auto counted = [](const EntityView&) { return Status::OK(); };
      auto page = VisitRows(q, counted, /*check_values=*/true);  // filtered on what is stored
      if (!page.ok()) return page.status();
      n += page->rows;
      if (page->continuation.empty()) return n;
      q.continuation = std::move(page->continuation);
    }
  });
}

Result<DeleteWhereReport> Table::DeleteWhere(const QueryOptions& options,
                                             const DeleteWhereOptions& how) const {
  return internal::AdminCall(
      core_.get(), "delete_where", name_, [&]() -> Result<DeleteWhereReport> {
        BT_RETURN_IF_ERROR(Usable());
        DeleteWhereReport report;
        QueryOptions q = options;
        q.top = kDeleteBatch;
        // One by one, concurrently where the store is remote: a batch that is
        // not one atomic step, or that lost a race.
        auto one_by_one = [&](const std::vector<Doomed>& batch) -> Status {
          std::vector<Status> done(batch.size());
          internal::ParallelFor(
              batch.size(), static_cast<size_t>(core_->parallel_reads), [&](size_t i) {
                done[i] = Delete(batch[i].partition_key, batch[i].row_key, batch[i].etag);
              });
          for (const Status& s : done) {
            if (s.IsConflict() || s.IsNotFound()) {
              ++report.changed;
            } else if (!s.ok()) {
              return s;
            } else {
              ++report.deleted;
            }
          }
          return Status::OK();
        };
        auto atomically = [&](const std::vector<Doomed>& batch) -> Result<bool> {
          Transaction txn(core_, TransactionOptions{});
          for (const Doomed& d : batch)
            BT_RETURN_IF_ERROR(txn.Delete(*this, d.partition_key, d.row_key, d.etag));
          auto committed = txn.Commit();
          if (committed.ok()) report.deleted += static_cast<int64_t>(batch.size());
          if (committed.ok() || committed.status().IsConflict() || committed.status().IsNotFound())
            return committed.ok();  // false: another writer got there first; one by one then
          return committed.status();
        };
        for (;;) {
          std::vector<Doomed> batch;
          // Checked values: what is deleted is decided on what is stored.
          auto page = VisitRows(
              q,
              [&](const EntityView& row) {
                batch.push_back({std::string(row.partition_key()), std::string(row.row_key()),
                                 std::string(row.etag())});
                return Status::OK();
              },
              /*check_values=*/true);
          if (!page.ok()) return page.status();
          report.matched += static_cast<int64_t>(batch.size());
          if (!how.dry_run && !batch.empty()) {
            bool done = false;
            if (core_->blobs->traits().atomic_batch && batch.size() > 1) {
              auto all = atomically(batch);
              if (!all.ok()) return all.status();
              done = *all;
            }
            if (!done) BT_RETURN_IF_ERROR(one_by_one(batch));
          }
          if (how.progress) {
            internal::UserCode user;  // its calls are the user's own
            how.progress(report);
          }
          if (page->continuation.empty()) return report;
          q.continuation = std::move(page->continuation);
        }
      });
}

}  // namespace blobtable
