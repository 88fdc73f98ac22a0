// SPDX-License-Identifier: Apache-2.0
// Loads JSON lines into an embedded store one Table::Upsert a row, each its
// own commit, in the order given (bench/space_compare.sh shuffles them): the
// "random-order single puts" of issue 57's file sizes. Properties are typed
// as `import` types JSON values: true/false Boolean, an integer Int32 (Int64
// past its range), another number Double, a string String.
//
//   build/bench/single_puts STORE_DIR TABLE < rows.jsonl
#include <cstdio>
#include <iostream>
#include <string>

#include <nlohmann/json.hpp>

#include "blobtable/store.h"

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: single_puts STORE_DIR TABLE < rows.jsonl\n");
    return 2;
  }
  auto store = blobtable::Store::Open(argv[1]);
  if (!store.ok()) {
    std::fprintf(stderr, "single_puts: %s\n", store.status().ToString().c_str());
    return 1;
  }
  auto table = (*store)->OpenTable(argv[2]);
  if (!table.ok()) {
    std::fprintf(stderr, "single_puts: %s\n", table.status().ToString().c_str());
    return 1;
  }
  std::string line;
  long rows = 0;
  while (std::getline(std::cin, line)) {
    const auto j = nlohmann::json::parse(line);
    blobtable::Entity e(j.at("PartitionKey").get<std::string>(), j.at("RowKey").get<std::string>());
    for (const auto& [name, v] : j.items()) {
      if (name == "PartitionKey" || name == "RowKey") continue;
      if (v.is_boolean()) {
        e.Set(name, v.get<bool>());
      } else if (v.is_number_integer()) {
        const int64_t n = v.get<int64_t>();
        if (n >= INT32_MIN && n <= INT32_MAX)
          e.Set(name, static_cast<int32_t>(n));
        else
          e.Set(name, n);
      } else if (v.is_number()) {
        e.Set(name, v.get<double>());
      } else {
        e.Set(name, v.get<std::string>());
      }
    }
    auto put = table->Upsert(e);
    if (!put.ok()) {
      std::fprintf(stderr, "single_puts: row %ld: %s\n", rows + 1, put.status().ToString().c_str());
      return 1;
    }
    ++rows;
  }
  std::printf("%ld rows\n", rows);
  return 0;
}
