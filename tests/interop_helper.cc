// SPDX-License-Identifier: Apache-2.0
// The C++ side of the Python interoperability test (python/tests/test_interop.py):
//   interop_helper dump LOCATION TABLE PK RK      prints the entity, a property a line:
//                                                 NAME TYPE VALUE (DateTime as ticks since
//                                                 1970, Binary as hex, Double exactly)
//   interop_helper write LOCATION TABLE PK RK     upserts an entity of every type (the values
//                                                 test_interop.py expects)
//   interop_helper bank LOCATION TRANSFERS SEED   moves amounts between the accounts a0..a9 of
//                                                 table "bank" in transactions, retried
#include <cinttypes>
#include <cstdlib>
#include <cstdio>
#include <iostream>
#include <random>
#include <string>

#include "blobtable/store.h"

namespace {

using blobtable::Entity;

int Fail(const blobtable::Status& s) {
  std::cerr << s.ToString() << "\n";
  return 1;
}

std::string Hex(const std::string& bytes) {
  static const char* digits = "0123456789abcdef";
  std::string out;
  for (unsigned char c : bytes) {
    out += digits[c >> 4];
    out += digits[c & 15];
  }
  return out;
}

void Print(const std::string& name, const blobtable::PropertyValue& v) {
  std::cout << name << " " << blobtable::EdmTypeName(blobtable::TypeOf(v)) << " ";
  std::visit(
      [](const auto& x) {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, std::string>)
          std::cout << Hex(x);
        else if constexpr (std::is_same_v<T, blobtable::Binary>)
          std::cout << Hex(x.bytes);
        else if constexpr (std::is_same_v<T, bool>)
          std::cout << (x ? "true" : "false");
        else if constexpr (std::is_same_v<T, blobtable::DateTime>)
          std::cout << x.time_since_epoch().count();
        else if constexpr (std::is_same_v<T, double>)
          std::printf("%a", x), std::fflush(stdout);
        else if constexpr (std::is_same_v<T, blobtable::Guid>)
          std::cout << x.value;
        else
          std::cout << x;
      },
      v);
  std::cout << "\n";
}

int Bank(blobtable::Store& store, int transfers, unsigned seed) {
  auto bank = store.OpenTable("bank");
  if (!bank.ok()) return Fail(bank.status());
  std::mt19937 rng(seed);
  blobtable::RetryPolicy retry;
  retry.max_attempts = 1000;
  retry.max_total = std::chrono::milliseconds(300'000);
  for (int i = 0; i < transfers; ++i) {
    int from = static_cast<int>(rng() % 10), to = static_cast<int>((from + 1 + rng() % 9) % 10);
    int64_t amount = 1 + static_cast<int64_t>(rng() % 5);
    auto done = store.RunTransaction(
        [&](blobtable::Transaction& txn) -> blobtable::Status {
          auto a = txn.Get(*bank, "acct", "a" + std::to_string(from));
          auto b = txn.Get(*bank, "acct", "a" + std::to_string(to));
          if (!a.ok()) return a.status();
          if (!b.ok()) return b.status();
          a->Set("balance", a->GetAs<int64_t>("balance").value_or(0) - amount);
          b->Set("balance", b->GetAs<int64_t>("balance").value_or(0) + amount);
          if (auto s = txn.Replace(*bank, *a); !s.ok()) return s;
          return txn.Replace(*bank, *b);
        },
        retry);
    if (!done.ok()) return Fail(done.status());
  }
  std::cout << "transfers: " << transfers << "\n";
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::cerr << "usage: interop_helper dump|write|bank LOCATION ...\n";
    return 2;
  }
  const std::string mode = argv[1];
  blobtable::StoreOptions options;  // $INTEROP_CONTAINER: the test's container on Azurite
  if (const char* container = std::getenv("INTEROP_CONTAINER")) options.container = container;
  if (const char* cache = std::getenv("INTEROP_CACHE")) options.cache.directory = cache;
  auto store = blobtable::Store::Open(argv[2], options);
  if (!store.ok()) return Fail(store.status());
  if (mode == "bank" && argc == 5) return Bank(**store, std::stoi(argv[3]), std::stoul(argv[4]));
  if (argc != 6) return 2;
  auto table = (*store)->OpenTable(argv[3]);
  if (!table.ok()) return Fail(table.status());
  if (mode == "dump") {
    auto e = table->Get(argv[4], argv[5]);
    if (!e.ok()) return Fail(e.status());
    for (const auto& [name, value] : e->properties()) Print(name, value);
    return 0;
  }
  if (mode == "write") {
    Entity e(argv[4], argv[5]);
    e.Set("s", std::string("caf\xc3\xa9 \0 nul", 11))
        .Set("b", blobtable::PropertyValue(blobtable::Binary{std::string("\0\x01\xff", 3)}))
        .Set("t", true)
        .Set("d",
             blobtable::PropertyValue(blobtable::DateTime(blobtable::Ticks(16094592001234567))))
        .Set("x", -0.1)
        .Set("g", blobtable::PropertyValue(blobtable::Guid{"3F2504E0-4F89-11D3-9A0C-0305E82C3301"}))
        .Set("i", int32_t{-7})
        .Set("l", int64_t{1} << 40);
    auto stored = table->Upsert(e);
    return stored.ok() ? 0 : Fail(stored.status());
  }
  return 2;
}
