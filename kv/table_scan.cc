// SPDX-License-Identifier: Apache-2.0
// TableScan: a query walked entity by entity, its pages fetched as the walk
// reaches them.
#include "blobtable/table.h"
#include "kv/store_core.h"

namespace blobtable {

TableScan Table::Scan(QueryOptions options) const { return TableScan(*this, std::move(options)); }

TableScan Table::ScanIndex(std::string_view index, IndexQuery query, QueryOptions options) const {
  return TableScan(*this, index, std::move(query), std::move(options));
}

TableScan::TableScan(Table table, QueryOptions options)
    : table_(std::move(table)), options_(std::move(options)) {}

TableScan::TableScan(Table table, std::string_view index, IndexQuery query, QueryOptions options)
    : table_(std::move(table)),
      options_(std::move(options)),
      index_name_(index),
      index_query_(std::move(query)) {}

TableScan::TableScan(TableScan&& other) noexcept = default;
TableScan& TableScan::operator=(TableScan&& other) noexcept = default;

TableScan::~TableScan() {
  // An error that ended a loop early and that nobody looked at would make
  // a partial result look whole: say so.
  if (!status_.ok() && !status_checked_ && table_.core_ != nullptr)
    table_.core_->Warn("blobtable: a scan of table " + table_.name() +
                       " ended early and its status() was never checked: " + status_.ToString());
}

TableScan::iterator TableScan::begin() {
  if (!started_) {
    started_ = true;
    Fetch();
  }
  return iterator(this);
}

void TableScan::Advance() {
  if (done_) return;
  if (++index_ < page_.entities.size()) return;
  if (options_.continuation.empty()) {
    done_ = true;
    return;
  }
  Fetch();
}

// Fetches pages until one holds an entity (a filtered page may hold none
// while more follow), the query ends, or a page fails.
void TableScan::Fetch() {
  for (;;) {
    auto page = index_name_.empty() ? table_.Query(options_)
                                    : table_.QueryIndex(index_name_, index_query_, options_);
    ++pages_;
    if (!page.ok()) {
      status_ = page.status();
      done_ = true;
      return;
    }
    stale_ = stale_ || page->stale;
    page_ = std::move(*page);
    index_ = 0;
    options_.continuation = page_.continuation;
    if (!page_.entities.empty()) return;
    if (options_.continuation.empty()) {
      done_ = true;
      return;
    }
  }
}

}  // namespace blobtable
