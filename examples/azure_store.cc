// SPDX-License-Identifier: Apache-2.0
// Opens an Azure Storage account (or Azurite) from a connection string and
// writes and reads an entity; the same API as the embedded store.
//   azure_store [CONNECTION_STRING]   (default: $AZURE_STORAGE_CONNECTION_STRING)
#include <blobtable/store.h>

#include <cstdlib>
#include <iostream>

int main(int argc, char** argv) {
  const char* env = std::getenv("AZURE_STORAGE_CONNECTION_STRING");
  if (argc > 2 || (argc == 1 && env == nullptr)) {
    std::cerr << "usage: azure_store [CONNECTION_STRING]\n";
    return 2;
  }
  const std::string connection = argc == 2 ? argv[1] : env;
  // [readme]
  blobtable::StoreOptions options;
  options.container = "myapp";  // every table of the store lives in this container
  auto store = blobtable::Store::Open(connection, options);  // sends nothing yet
  if (!store.ok()) {
    std::cerr << store.status().ToString() << "\n";  // e.g. a malformed connection string
    return 1;
  }
  auto users = *(*store)->OpenTable("users");
  blobtable::Entity user("tenant-1", "alice");
  user.Set("email", std::string("alice@example.com"));
  auto put = users.Upsert(user);  // the first write creates the container
  if (!put.ok()) {
    std::cerr << put.status().ToString() << "\n";  // Unavailable: storage unreachable
    return 1;
  }
  auto read = users.Get("tenant-1", "alice");
  // [/readme]
  if (!read.ok()) return 1;
  std::cout << *read->FindAs<std::string>("email") << "\n";
  return 0;
}
