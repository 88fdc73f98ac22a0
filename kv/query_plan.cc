// SPDX-License-Identifier: Apache-2.0
#include "kv/query_plan.h"

#include <algorithm>

#include "model/blob_naming.h"
#include "model/inline_body.h"
#include "model/key_rules.h"
#include "txn/recovery.h"
#include "util/macros.h"

namespace blobtable::internal {
namespace {

// Narrows the query's key range to the filter's (PartitionKey eq, RowKey
// bounds in its top-level conjunction); false if nothing can match.
bool NarrowToFilter(const Filter& filter, QueryOptions& q) {
  const FilterKeyRange r = filter.KeyRange();
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

}  // namespace

Result<QueryPlan> PlanQuery(const std::string& table, bool list_data,
                            const ReadPolicy& default_policy, const QueryOptions& options) {
  const std::string ctx = "table " + table + ", query";
  QueryPlan plan;
  QueryOptions& q = plan.q;
  q = options;
  if (!q.filter.empty()) {
    auto parsed = Filter::Parse(q.filter);
    if (!parsed.ok()) return parsed.status().WithContext(ctx);
    plan.filter = std::move(*parsed);
    plan.filter_properties = plan.filter->Properties();
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
  if (plan.filter && !NarrowToFilter(*plan.filter, q)) {
    plan.nothing = true;
    return plan;
  }

  plan.entity_prefix = naming::EntityPrefix(table);
  ListOptions& list = plan.list;
  if (q.partition_key) plan.partition_prefix = naming::PartitionPrefix(table, *q.partition_key);
  list.prefix = q.partition_key ? plan.partition_prefix : plan.entity_prefix;
  list.include_data = list_data;
  if (q.partition_key && q.row_key_from)
    list.start_from = list.prefix + "-" + naming::EncodeKey(*q.row_key_from);
  // Keys are escaped byte by byte, so a RowKey prefix is a name prefix.
  if (q.partition_key && q.row_key_prefix)
    list.prefix += "-" + naming::EncodeKey(*q.row_key_prefix);

  // The continuation token is "1." and the last returned name after the
  // table's entity prefix; listing resumes there.
  if (!q.continuation.empty()) {
    if (q.continuation.substr(0, 2) != "1.")
      return Status::InvalidArgument(ctx + ": continuation token is not from blobtable");
    plan.after = plan.entity_prefix + q.continuation.substr(2);
    if (plan.after.substr(0, list.prefix.size()) != list.prefix)
      return Status::InvalidArgument(ctx + ": continuation token belongs to another query");
    list.start_from = std::max(list.start_from, plan.after);
  }
  // A page's rows, one more to tell whether more follow, and on a
  // continuation the last row of the page before (listing starts at it): one
  // listing a page (without that slot, every continued full page took two).
  list.max_results = std::min(5000, q.top + 1 + (plan.after.empty() ? 0 : 1));
  plan.policy = q.policy.value_or(default_policy);
  return plan;
}

RowPlace PlaceRow(const QueryOptions& q, std::string_view rk) {
  if (q.row_key_from && rk < *q.row_key_from) return RowPlace::kBefore;
  if ((q.row_key_to && rk > *q.row_key_to) ||
      (q.row_key_prefix && !rk.starts_with(*q.row_key_prefix)))
    return RowPlace::kAfter;
  return RowPlace::kIn;
}

bool IsBlobOfRow(const QueryPlan& plan, std::string_view name, std::string_view pk,
                 std::string_view rk) {
  if (!plan.q.partition_key) return naming::IsEntityBlobNameOf(name, plan.entity_prefix, pk, rk);
  return pk == *plan.q.partition_key && naming::IsRowBlobNameOf(name, plan.partition_prefix, rk);
}

std::string ContinuationAfter(const QueryPlan& plan, std::string_view last) {
  return "1." + std::string(last.substr(plan.entity_prefix.size()));
}

void ProjectSelected(const std::vector<std::string>& select, Entity& e) {
  if (select.empty()) return;
  auto& props = e.mutable_properties();
  for (auto it = props.begin(); it != props.end();)
    it = std::find(select.begin(), select.end(), it->first) == select.end() ? props.erase(it)
                                                                            : std::next(it);
}

const std::string* ListedBody(const BlobItem& item, std::optional<std::string>& copy) {
  if (!MarkingTransaction(item.properties).empty()) return nullptr;
  if (item.data) return &*item.data;
  copy = InlineBody(item.properties);
  return copy ? &*copy : nullptr;
}

}  // namespace blobtable::internal
