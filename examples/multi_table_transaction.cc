// SPDX-License-Identifier: Apache-2.0
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
  // The function buffers the transaction; RunTransaction commits it, and
  // runs it again in a new transaction if what it read changed before the
  // commit (Conflict), or a lock stayed busy (Busy, LockTimeout).
  auto committed = (*store)->RunTransaction([&](blobtable::Transaction& txn) {
    auto from = txn.Get(stock, "north", "widget");  // recorded: Commit fails if it changes
    auto to = txn.Get(stock, "south", "widget");
    if (!from.ok()) return from.status();
    if (!to.ok()) return to.status();
    from->Set("count", *from->GetAs<int64_t>("count") - 3);
    to->Set("count", *to->GetAs<int64_t>("count") + 3);
    blobtable::Entity move("widget", "move-0001");
    move.Set("from", "north").Set("to", "south").Set("count", 3);
    if (auto s = txn.Replace(stock, *from); !s.ok()) return s;  // at the ETag it read
    if (auto s = txn.Replace(stock, *to); !s.ok()) return s;
    return txn.Insert(moves, move);
  });
  if (!committed.ok()) {
    // OutcomeUnknown (never rerun): read the entities to see whether it
    // happened. Anything else: nothing was committed.
    std::cerr << committed.status().ToString() << "\n";
    return 1;
  }
  // [/readme]
  (*store)->WaitForFinishing();
  std::cout << "north " << *stock.Get("north", "widget")->FindAs<int64_t>("count") << ", south "
            << *stock.Get("south", "widget")->FindAs<int64_t>("count") << "\n";
  return 0;
}
