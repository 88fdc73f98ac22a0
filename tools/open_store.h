// SPDX-License-Identifier: Apache-2.0
// How a CLI command opens the store (and table) the global options name.
#ifndef BLOBTABLE_TOOLS_OPEN_STORE_H_
#define BLOBTABLE_TOOLS_OPEN_STORE_H_

#include <memory>
#include <string>

#include "blobtable/store.h"
#include "blobtable/table.h"
#include "tools/cli/command.h"

namespace blobtable::cli {

// --store's default: $BLOBTABLE_STORE, else $AZURE_STORAGE_CONNECTION_STRING,
// else ./blobtable-data.
std::string DefaultLocation();

// Opens the store. Only a command that writes makes one that is missing
// (unless --no-create): a mistyped --store must not answer "not found" from a
// new, empty one. A missing store is NotFound saying what to check.
Result<std::unique_ptr<Store>> OpenStore(const Context& context);

// A store and one of its tables (the table goes first).
struct OpenedTable {
  std::unique_ptr<Store> store;
  Table table;
};

// Refuses a bad table name before anything is made; then opens the store as
// OpenStore does, and the table.
Result<OpenedTable> OpenTable(const Context& context, const std::string& name);

// Asked when a read or a drop of `opened`'s table found nothing: OK if the
// table holds an entity (Store::ListTables lists it) or the run takes a
// missing table as empty (--missing-table-ok), or reads only the cache
// (--offline: its answers are the cache's); else NotFound naming the
// table, with the store's table nearest to it ("did you mean"). Only on an
// empty answer: one listing of one row, and the store's tables if there is
// none. With a `query` that has a filter,
// on a terminal or with -v: a note on stderr for each comparison the rows
// of the query's range (its first page, read again without the filter)
// say could match nothing (tools/filter_notes.h).
Status NothingFound(const Context& context, const OpenedTable& opened,
                    const QueryOptions* query = nullptr);

}  // namespace blobtable::cli

#endif  // BLOBTABLE_TOOLS_OPEN_STORE_H_
