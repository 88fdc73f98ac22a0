// SPDX-License-Identifier: Apache-2.0
// Reads an Azure store through the local cache, then offline: the second
// read sends no request and is flagged stale.
//   offline_cache CONNECTION_STRING CACHE_DIRECTORY
#include <blobtable/store.h>

#include <iostream>

int main(int argc, char** argv) {
  if (argc != 3) {
    std::cerr << "usage: offline_cache CONNECTION_STRING CACHE_DIRECTORY\n";
    return 2;
  }
  // [readme]
  blobtable::StoreOptions options;
  options.cache.enabled = true;        // the default for Azure stores
  options.cache.directory = argv[2];   // shared by the processes that use it
  auto store = blobtable::Store::Open(argv[1], options);
  if (!store.ok()) return 1;
  auto config = *(*store)->OpenTable("config");
  blobtable::Entity e("service", "limits");
  e.Set("max_users", int64_t{500});
  if (!config.Upsert(e).ok()) return 1;

  auto fresh = config.Get("service", "limits");  // revalidated: a 304 costs no body
  auto offline = config.Get("service", "limits", blobtable::ReadPolicy::Offline());
  if (!fresh.ok() || !offline.ok()) return 1;  // Offline and not cached: NotFound
  std::cout << "max_users " << *offline->FindAs<int64_t>("max_users")
            << (offline->stale() ? " (stale: from the cache, not checked)" : "") << "\n";
  // [/readme]
  return 0;
}
