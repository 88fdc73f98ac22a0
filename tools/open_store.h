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

}  // namespace blobtable::cli

#endif  // BLOBTABLE_TOOLS_OPEN_STORE_H_
