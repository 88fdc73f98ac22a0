// SPDX-License-Identifier: Apache-2.0
// A query with a filter, walked with Scan: the rows of one partition whose
// total is at least 100.
//   filtered_query STORE
#include <blobtable/store.h>

#include <iostream>

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: filtered_query STORE\n";
    return 2;
  }
  auto store = blobtable::Store::Open(argv[1]);
  if (!store.ok()) {
    std::cerr << store.status().ToString() << "\n";
    return 1;
  }
  auto orders = *(*store)->OpenTable("orders");
  for (int i = 0; i < 30; ++i) {
    blobtable::Entity e("customer-42", "order-" + std::to_string(1000 + i));
    e.Set("total", 10.0 * i).Set("paid", i % 2 == 0);
    if (!orders.Upsert(e).ok()) return 1;
  }
  // [readme]
  blobtable::QueryOptions q;
  q.filter = "PartitionKey eq 'customer-42' and total ge 100.0 and paid eq true";
  q.select = {"total"};
  q.top = 5;  // the page size: the scan fetches pages of 5 as the loop needs them
  int rows = 0;
  auto scan = orders.Scan(q);
  for (const blobtable::Entity& e : scan) {
    std::cout << e.row_key() << " " << *e.GetAs<double>("total") << "\n";
    ++rows;
  }
  if (!scan.status().ok()) {  // the loop ended early on an error
    std::cerr << scan.status().ToString() << "\n";  // a bad filter says where
    return 1;
  }
  // [/readme]
  std::cout << rows << " rows\n";
  return rows == 10 ? 0 : 1;
}
