// A query with a filter, page by page: the rows of one partition whose
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
  q.top = 5;  // at most 5 a page; a filtered page may hold fewer
  int rows = 0;
  do {
    auto page = orders.Query(q);
    if (!page.ok()) {
      std::cerr << page.status().ToString() << "\n";  // a bad filter says where
      return 1;
    }
    for (const blobtable::Entity& e : page->entities) {
      std::cout << e.row_key() << " " << *e.FindAs<double>("total") << "\n";
      ++rows;
    }
    q.continuation = page->continuation;
  } while (!q.continuation.empty());
  // [/readme]
  std::cout << rows << " rows\n";
  return rows == 10 ? 0 : 1;
}
