// SPDX-License-Identifier: Apache-2.0
// What Table::Query and Table::Visit share: a query's options checked and
// turned into the listing that answers it, and where a row's key lies
// against the query's range.
#ifndef BLOBTABLE_KV_QUERY_PLAN_H_
#define BLOBTABLE_KV_QUERY_PLAN_H_

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "blobtable/blob_store.h"
#include "blobtable/table.h"
#include "model/filter.h"

namespace blobtable::internal {

struct QueryPlan {
  QueryOptions q;  // the options, narrowed by the filter's key range
  std::optional<Filter> filter;
  std::vector<std::string> filter_properties;  // what the filter reads, sorted
  std::string entity_prefix;                   // the table's entity blobs' prefix
  std::string partition_prefix;                // q.partition_key's PartitionPrefix, if set
  ListOptions list;                            // the first listing
  std::string after;                           // from the continuation: rows after this name
  ReadPolicy policy;
  bool nothing = false;  // nothing can match: answer an empty page, no request
};

// Checks `options` (InvalidArgument naming `table` and what is wrong) and
// plans the listing that answers it: one listing a page.
Result<QueryPlan> PlanQuery(const std::string& table, bool list_data,
                            const ReadPolicy& default_policy, const QueryOptions& options);

enum class RowPlace { kBefore, kIn, kAfter };
// Where RowKey `rk` lies against the query's row key bounds and prefix.
RowPlace PlaceRow(const QueryOptions& q, std::string_view rk);

// Keeps only the selected properties of `e` (the keys, Timestamp and ETag
// stay); all of them if `select` is empty.
void ProjectSelected(const std::vector<std::string>& select, Entity& e);

// The body a listed blob's entity may be answered from without a read: its
// listed data or its inline copy (kept in `copy`), if no transaction's mark
// is on it; else null.
const std::string* ListedBody(const BlobItem& item, std::optional<std::string>& copy);

// True if `name`, a blob this plan listed, is the blob of the entity (pk,
// rk): naming::IsEntityBlobNameOf, with the partition's part compared once
// as a key when the query names the partition.
bool IsBlobOfRow(const QueryPlan& plan, std::string_view name, std::string_view pk,
                 std::string_view rk);

// The continuation token of a page whose last row is the blob `last`.
std::string ContinuationAfter(const QueryPlan& plan, std::string_view last);

}  // namespace blobtable::internal

#endif  // BLOBTABLE_KV_QUERY_PLAN_H_
