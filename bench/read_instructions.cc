// SPDX-License-Identifier: Apache-2.0
// What an embedded read executes, counted by callgrind (docs/performance.md,
// "Where embedded reads stand"): N Table::Get, or N queries of one
// partition's 100 rows, over 10,000 entities of a 1,000-byte Binary in 100
// partitions (`getview`: Table::GetView). Run it for two N and divide the difference by the reads
// (or rows) between them, so that opening and loading cancel out:
//
//   cmake --build build --target read_instructions
//   valgrind --tool=callgrind build/bench/read_instructions DIR get 10000   # and 30000
//   valgrind --tool=callgrind build/bench/read_instructions DIR getview 10000   # and 30000
//   valgrind --tool=callgrind build/bench/read_instructions DIR range 200   # and 600
//   valgrind --tool=callgrind build/bench/read_instructions DIR visit 200   # and 600
//   (instructions of the larger - the smaller) / 20,000 gets, or / 40,000 rows
//
// DIR is emptied first.
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "blobtable/store.h"
#include "blobtable/txn.h"

namespace {

int Fail(const blobtable::Status& s) {
  std::fprintf(stderr, "read_instructions: %s\n", s.ToString().c_str());
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: read_instructions DIR get|getview|range|visit N\n");
    return 2;
  }
  const std::string dir = argv[1], mode = argv[2];
  const int n = std::atoi(argv[3]);
  std::filesystem::remove_all(dir);
  blobtable::StoreOptions options;
  options.local.map_size = uint64_t{512} << 20;  // not 64 GiB: valgrind cannot map that
  auto store = blobtable::Store::Open(dir, options);
  if (!store.ok()) return Fail(store.status());
  auto table = (*store)->OpenTable("bench");
  if (!table.ok()) return Fail(table.status());
  const std::string body(1000, 'b');
  for (int i = 0; i < 10000;) {
    auto txn = (*store)->Begin();
    if (!txn.ok()) return Fail(txn.status());
    for (int j = 0; j < 1000; ++j, ++i) {
      blobtable::Entity e("p" + std::to_string(i % 100), "r" + std::to_string(100000 + i));
      e.Set("v", blobtable::Binary{body});
      if (blobtable::Status s = txn->Insert(*table, e); !s.ok()) return Fail(s);
    }
    if (auto c = txn->Commit(); !c.ok()) return Fail(c.status());
  }
  size_t read = 0;
  for (int i = 0; i < n; ++i) {
    if (mode == "get" || mode == "getview") {
      const int k = (i * 7919) % 10000;  // every entity, in no order
      const std::string pk = "p" + std::to_string(k % 100), rk = "r" + std::to_string(100000 + k);
      if (mode == "getview") {  // the entity as a view, as W1's get reads it
        blobtable::Status s = table->GetView(pk, rk, [&](const blobtable::EntityView& row) {
          if (const blobtable::PropertyView* v = row.Find("v")) read += !v->bytes().empty();
          return blobtable::Status::OK();
        });
        if (!s.ok()) return Fail(s);
        continue;
      }
      auto e = table->Get(pk, rk);
      if (!e.ok()) return Fail(e.status());
      ++read;
    } else {
      blobtable::QueryOptions q;
      q.partition_key = "p" + std::to_string(i % 100);
      q.top = 100;
      if (mode == "visit") {  // rows as views, as W1's range100 reads them
        auto page = table->Visit(q, [&](const blobtable::EntityView& row) {
          if (const blobtable::PropertyView* v = row.Find("v")) read += !v->bytes().empty();
        });
        if (!page.ok()) return Fail(page.status());
        continue;
      }
      auto page = table->Query(q);
      if (!page.ok()) return Fail(page.status());
      read += page->entities.size();
    }
  }
  std::printf("%zu read\n", read);
  return 0;
}
