// Increments a counter with optimistic concurrency: read it, change it,
// write it If-Match the ETag read; a Conflict means someone wrote in
// between, so read again. The README's "Examples" shows the marked part.
//   read_modify_write STORE      (a directory, or an Azure connection string)
#include <blobtable/store.h>

#include <iostream>

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: read_modify_write STORE\n";
    return 2;
  }
  auto store = blobtable::Store::Open(argv[1]);
  if (!store.ok()) {
    std::cerr << store.status().ToString() << "\n";
    return 1;
  }
  // [readme]
  auto counters = (*store)->OpenTable("counters");
  if (!counters.ok()) return 1;
  for (int attempt = 1; attempt <= 10; ++attempt) {
    auto current = counters->Get("site", "visits");
    if (!current.ok() && !current.status().IsNotFound()) return 1;  // storage trouble
    blobtable::Entity next("site", "visits");
    const int64_t* n = current.ok() ? current->FindAs<int64_t>("n") : nullptr;
    next.Set("n", (n ? *n : 0) + 1);
    // Absent: insert (Conflict if another writer inserted first).
    auto written = current.ok() ? counters->Replace(next, current->etag())
                                : counters->Insert(next);
    if (written.ok()) {
      std::cout << "visits: " << *written->FindAs<int64_t>("n") << "\n";
      return 0;
    }
    if (!written.status().IsConflict()) return 1;
    // Conflict: someone wrote in between; read again and redo the change.
  }
  // [/readme]
  std::cerr << "gave up after 10 conflicts\n";
  return 1;
}
