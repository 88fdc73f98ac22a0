// SPDX-License-Identifier: Apache-2.0
// Uses only the installed public headers and library.
#include <blobtable/store.h>

#include <cstdio>

int main(int argc, char** argv) {
  if (argc != 2) return 2;
  auto store = blobtable::Store::Open(argv[1]);
  if (!store.ok()) return std::puts(store.status().ToString().c_str()), 1;
  auto table = (*store)->OpenTable("installed");
  blobtable::Entity e("p", "r");
  e.Set("works", true);
  auto stored = table->Upsert(e);
  if (!stored.ok()) return std::puts(stored.status().ToString().c_str()), 1;
  auto got = table->Get("p", "r");
  if (!got.ok() || !*got->FindAs<bool>("works")) return 1;
  std::puts("consumer ok");
  return 0;
}
