// SPDX-License-Identifier: Apache-2.0
// Increments a counter with optimistic concurrency (Table::Update): read
// it, change it, write it If-Match the ETag read; a write that lost a race
// is retried. docs/api.md#examples shows the marked part.
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
  // Reads the counter, adds one, writes it If-Match the ETag it read (or
  // inserts it); a write that lost a race to another writer runs it all
  // again, after a backoff (RetryPolicy: 10 attempts by default).
  int attempts = 0;
  auto written = counters->Update(
      "site", "visits",
      [](blobtable::Entity& e, bool /*exists*/) {
        e.Set("n", e.GetAs<int64_t>("n").value_or(0) + 1);  // an Int32 reads as int64 too
      },
      blobtable::RetryPolicy{}, &attempts);
  if (!written.ok()) {
    std::cerr << written.status().ToString() << "\n";  // e.g. Conflict after 10 attempts
    return 1;
  }
  std::cout << "visits: " << *written->GetAs<int64_t>("n") << " (" << attempts
            << (attempts == 1 ? " attempt" : " attempts") << ")\n";
  return 0;
  // [/readme]
}
