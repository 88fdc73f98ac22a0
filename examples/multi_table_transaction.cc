// Moves stock between two warehouses and records the move, in two tables,
// atomically: all three writes or none, whoever else is writing.
//   multi_table_transaction STORE
#include <blobtable/store.h>
#include <blobtable/txn.h>

#include <iostream>

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: multi_table_transaction STORE\n";
    return 2;
  }
  auto store = blobtable::Store::Open(argv[1]);
  if (!store.ok()) {
    std::cerr << store.status().ToString() << "\n";
    return 1;
  }
  auto stock = *(*store)->OpenTable("stock");
  auto moves = *(*store)->OpenTable("moves");
  for (const char* warehouse : {"north", "south"}) {
    blobtable::Entity e(warehouse, "widget");
    e.Set("count", int64_t{10});
    if (!stock.Upsert(e).ok()) return 1;
  }
  // [readme]
  auto txn = (*store)->Begin();
  auto from = txn->Get(stock, "north", "widget");  // recorded: Commit fails if it changes
  auto to = txn->Get(stock, "south", "widget");
  if (!from.ok() || !to.ok()) return 1;
  blobtable::Entity from2 = *from, to2 = *to;
  from2.Set("count", *from->FindAs<int64_t>("count") - 3);
  to2.Set("count", *to->FindAs<int64_t>("count") + 3);
  blobtable::Entity move("widget", "move-0001");
  move.Set("from", std::string("north")).Set("to", std::string("south")).Set("count", int64_t{3});
  if (!txn->Replace(stock, from2, from->etag()).ok() ||
      !txn->Replace(stock, to2, to->etag()).ok() || !txn->Insert(moves, move).ok())
    return 1;
  auto committed = txn->Commit();
  if (!committed.ok()) {
    // Conflict: something it read changed (run it again); OutcomeUnknown:
    // read the entities to see whether it happened.
    std::cerr << committed.status().ToString() << "\n";
    return 1;
  }
  // [/readme]
  (*store)->WaitForFinishing();
  std::cout << "north " << *stock.Get("north", "widget")->FindAs<int64_t>("count") << ", south "
            << *stock.Get("south", "widget")->FindAs<int64_t>("count") << "\n";
  return 0;
}
