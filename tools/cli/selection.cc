// SPDX-License-Identifier: Apache-2.0
#include "tools/cli/command.h"

namespace blobtable::cli {

void DefineSelection(CLI::App& command, QueryOptions& q) {
  command.add_option("--pk", q.partition_key, "PK: only this partition");
  command.add_option("--rk-from", q.row_key_from, "RK: RowKeys from this one (inclusive)");
  command.add_option("--rk-to", q.row_key_to, "RK: RowKeys up to this one (inclusive)");
  command.add_option("--rk-prefix", q.row_key_prefix, "P: only RowKeys starting with P");
  command.add_option("--filter", q.filter,
                     "EXPR: an Azure Tables $filter, e.g. \"Price ge 10.0 and Active eq true\" "
                     "(docs/api.md#filters)");
}

bool SelectsRows(const QueryOptions& q) {
  return q.partition_key || q.row_key_from || q.row_key_to || q.row_key_prefix || !q.filter.empty();
}

}  // namespace blobtable::cli
