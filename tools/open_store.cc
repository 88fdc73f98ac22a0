// SPDX-License-Identifier: Apache-2.0
#include "tools/open_store.h"

#include <algorithm>
#include <cstdlib>
#include <utility>

#include "tools/bulk.h"
#include "tools/cli/suggest.h"
#include "tools/filter_notes.h"
#include "tools/metrics_output.h"

namespace blobtable::cli {

std::string DefaultLocation() {
  if (const char* s = std::getenv("BLOBTABLE_STORE"); s && *s) return s;
  if (const char* s = std::getenv("AZURE_STORAGE_CONNECTION_STRING"); s && *s) return s;
  return "./blobtable-data";
}

Result<std::unique_ptr<Store>> OpenStore(const Context& context) {
  StoreOptions options = context.global.store;
  options.create_if_missing = context.writes && !context.global.no_create;
  // One command a process: its transactions lease each partition's first
  // lock stripe, which the command's earlier runs made (options.h).
  options.short_lived = true;
  auto opened = Store::Open(context.global.location, options);
  if (opened.ok()) NoteStoreOpened(**opened);  // --metrics, SIGUSR1
  if (opened.ok() || !opened.status().IsNotFound()) return opened;
  return Status::NotFound(opened.status().message() +
                          (context.writes ? "; --no-create refuses to make one"
                                          : "; check --store (put, import and txn create "
                                            "a store)"));
}

Result<OpenedTable> OpenTable(const Context& context, const std::string& name) {
  if (!name.empty()) {  // an empty one is refused by Store::OpenTable, once the store is open
    Status valid = ValidateTableName(name);
    if (!valid.ok()) return valid;
  }
  OpenedTable opened;
  auto store = OpenStore(context);
  if (!store.ok()) return store.status();
  opened.store = std::move(*store);
  auto table = opened.store->OpenTable(name);
  if (!table.ok()) return table.status();
  opened.table = std::move(*table);
  return opened;
}

namespace {

void NoteFilterMisses(const Context& context, const OpenedTable& opened, QueryOptions q) {
  if (q.filter.empty() || !(context.global.verbose || ShowsProgress(context.err))) return;
  const std::string filter = q.filter;
  q.filter.clear();
  q.select.clear();
  q.continuation.clear();
  q.top = 1000;
  auto page = opened.table.Query(q);
  if (!page.ok()) return;  // a note, not an answer: nothing to say
  for (const std::string& note : FilterMisses(filter, page->entities))
    context.err << "blobtable: note: the filter matched nothing: " << note << "\n";
}

Status TableMustExist(const Context& context, const OpenedTable& opened) {
  // --offline answers say what the cache holds, never what storage does.
  if (context.global.missing_table_ok ||
      context.global.store.cache.read_policy.mode == ReadPolicy::Mode::kOffline)
    return Status::OK();
  // Does it hold a row? One listing of one blob (more only past blobs that
  // are not rows); the tables' names only when it does not.
  QueryOptions any;
  any.top = 1;
  for (int pages = 0; pages < 100; ++pages) {
    auto page = opened.table.Query(any);
    if (!page.ok()) return page.status();
    if (!page->entities.empty()) return Status::OK();
    if (page->continuation.empty()) break;
    any.continuation = page->continuation;
  }
  auto tables = opened.store->ListTables();
  if (!tables.ok()) return tables.status();
  const std::string& name = opened.table.name();
  if (std::find(tables->begin(), tables->end(), name) != tables->end()) return Status::OK();
  const std::string nearest = Nearest(name, *tables);
  return Status::NotFound(
      "table '" + name + "' does not exist (it holds no entity)" +
      (tables->empty() ? "; the store holds no table at all (check --store" +
                             std::string(context.global.location.find('=') != std::string::npos ||
                                                 context.global.store.container != kDefaultContainer
                                             ? " and --container)"
                                             : ")")
       : nearest.empty() ? std::string()
                         : "; did you mean '" + nearest + "'?") +
      " (--missing-table-ok reads a missing table as empty)");
}

}  // namespace

Status NothingFound(const Context& context, const OpenedTable& opened, const QueryOptions* query) {
  Status exists = TableMustExist(context, opened);
  if (exists.ok() && query != nullptr) NoteFilterMisses(context, opened, *query);
  return exists;
}

}  // namespace blobtable::cli
