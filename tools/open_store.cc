// SPDX-License-Identifier: Apache-2.0
#include "tools/open_store.h"

#include <cstdlib>
#include <utility>

namespace blobtable::cli {

std::string DefaultLocation() {
  if (const char* s = std::getenv("BLOBTABLE_STORE"); s && *s) return s;
  if (const char* s = std::getenv("AZURE_STORAGE_CONNECTION_STRING"); s && *s) return s;
  return "./blobtable-data";
}

Result<std::unique_ptr<Store>> OpenStore(const Context& context) {
  StoreOptions options = context.global.store;
  options.create_if_missing = context.writes && !context.global.no_create;
  auto opened = Store::Open(context.global.location, options);
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

}  // namespace blobtable::cli
