// SPDX-License-Identifier: Apache-2.0
// W6 (w6_indexes.h).
#include "bench/w6_indexes.h"

#include <chrono>
#include <memory>
#include <string>

#include "blobtable/store.h"
#include "blobtable/txn.h"
#include "testing/counting_blob_store.h"
#include "testing/hooks.h"
#include "util/macros.h"

namespace bench {
namespace {

using blobtable::Result;
using blobtable::Status;
using Steady = std::chrono::steady_clock;

double SecondsSince(Steady::time_point t0) {
  return std::chrono::duration<double>(Steady::now() - t0).count();
}

// Where one place's figures are measured: its storage, and the options of
// the store that builds indexes there (the definitions' times a tenth as
// long: this process is the storage's only client).
struct Place {
  std::string workload, location;
  blobtable::StoreOptions options;
  int64_t writes = 0, rows = 0;
};

Result<std::unique_ptr<blobtable::Store>> OpenBuilder(const Place& p) {
  blobtable::StoreOptions o = p.options;
  blobtable::internal::TestingHooks hooks;
  hooks.index_time_divisor = 10;
  o.testing = std::make_shared<const blobtable::internal::TestingHooks>(hooks);
  return blobtable::Store::Open(p.location, o);
}

Result<std::vector<Row>> Upserts(const Place& p, int rounds) {
  auto builder = OpenBuilder(p);
  if (!builder.ok()) return builder.status();
  for (const char* name : {"plain", "indexed"}) {
    auto t = (*builder)->OpenTable(name);
    if (!t.ok()) return t.status();
    BT_RETURN_IF_ERROR(LoadPeople(**builder, *t, p.writes));
  }
  BT_RETURN_IF_ERROR((*builder)->CreateIndex(
      "indexed", {.name = "byEmail", .properties = {"email"}, .unique = true}));
  BT_RETURN_IF_ERROR(
      (*builder)->CreateIndex("indexed", {.name = "byCity", .properties = {"city"}}));
  // The writes: a store with a user's definition times, requests counted.
  blobtable::StoreOptions o = p.options;
  RequestCounter counter = CountRequests(o);
  auto writer = blobtable::Store::Open(p.location, o);
  if (!writer.ok()) return writer.status();
  auto version = std::make_shared<int>(0);
  auto system = [&, version](const char* name) {
    return System{name, [&, name, version]() -> Result<Sample> {
                    auto table = (*writer)->OpenTable(name);
                    if (!table.ok()) return table.status();
                    const int v = ++*version;  // every upsert moves both values
                    Sample s;
                    const int64_t before = (*counter)->Total();
                    const double cpu0 = CpuSeconds();
                    const auto t0 = Steady::now();
                    for (int64_t i = 0; i < p.writes; ++i) {
                      const auto a = Steady::now();
                      auto done = table->Upsert(IndexedPerson(i, v));
                      if (!done.ok()) return done.status();
                      s.latencies_us.push_back(1e6 * SecondsSince(a));
                    }
                    s.seconds = SecondsSince(t0);
                    s.cpu_seconds = CpuSeconds() - cpu0;
                    s.ops = p.writes;
                    s.requests = (*counter)->Total() - before;
                    return s;
                  }};
  };
  return RunCell(p.workload, "upsert", 1, {system("plain"), system("indexed")}, rounds);
}

Result<std::vector<Row>> QueriesAndBackfill(const Place& p, int rounds) {
  auto store = OpenBuilder(p);
  if (!store.ok()) return store.status();
  auto table = (*store)->OpenTable("people");
  if (!table.ok()) return table.status();
  BT_RETURN_IF_ERROR(LoadPeople(**store, *table, p.rows));
  const auto t0 = Steady::now();
  BT_RETURN_IF_ERROR((*store)->CreateIndex(
      "people", {.name = "byCity", .properties = {"city"}, .covered = {"email"}}));
  const double built = SecondsSince(t0) - 1.0;  // the grace, a tenth of 10 s
  Row backfill;
  backfill.workload = p.workload;
  backfill.op = "backfill";
  backfill.system = "index";
  backfill.reference = "index";
  backfill.ops_per_s = static_cast<double>(p.rows) / built;
  std::vector<Row> rows{backfill};
  // Three cities an operation, each held by one entity in a thousand.
  auto city_number = [](int round, int k) { return int64_t{(100 + 3 * round + k) % 1000}; };
  auto city = [&](int round, int k) { return "c" + std::to_string(city_number(round, k)); };
  // Rows i with i % 1000 == c, of 0..rows-1 (version 0).
  auto holders = [&](int64_t c) { return c < p.rows ? (p.rows - c + 999) / 1000 : 0; };
  auto system = [&](const char* name, int how) {
    auto round_of = std::make_shared<int>(0);  // each system's own: the same cities
    return System{
        name, [&, name, how, round_of]() -> Result<Sample> {
          const int round = ++*round_of;
          Sample s;
          const double cpu0 = CpuSeconds();
          const auto t0 = Steady::now();
          for (int k = 0; k < 3; ++k) {
            const auto a = Steady::now();
            size_t found = 0;
            if (how == 0) {
              blobtable::QueryOptions filtered;
              filtered.filter = "city eq '" + city(round, k) + "'";
              auto scan = table->Scan(filtered);
              for ([[maybe_unused]] const blobtable::Entity& e : scan) ++found;
              BT_RETURN_IF_ERROR(scan.status());
            } else {
              blobtable::QueryOptions only;
              if (how == 2) only.select = {"city", "email"};
              auto read = table->QueryIndex(
                  "byCity", {.equal = {blobtable::PropertyValue(city(round, k))}}, only);
              if (!read.ok()) return read.status();
              found = read->entities.size();
            }
            if (found != static_cast<size_t>(holders(city_number(round, k))))
              return Status::Internal(std::string(name) + " found " + std::to_string(found));
            s.latencies_us.push_back(1e6 * SecondsSince(a));
          }
          s.seconds = SecondsSince(t0);
          s.cpu_seconds = CpuSeconds() - cpu0;
          s.ops = 3;
          return s;
        }};
  };
  auto queried =
      RunCell(p.workload, "query" + std::to_string(p.rows), 1,
              {system("filter-scan", 0), system("index", 1), system("index-covered", 2)}, rounds);
  if (!queried.ok()) return queried.status();
  rows.insert(rows.end(), queried->begin(), queried->end());
  return rows;
}

}  // namespace

blobtable::Entity IndexedPerson(int64_t i, int version) {
  blobtable::Entity e("p" + std::to_string(i % 16), "r" + std::to_string(i));
  e.Set("city", "c" + std::to_string((i + version) % 1000));
  e.Set("email", "e" + std::to_string(i) + "v" + std::to_string(version) + "@x");
  e.Set("pad", std::string(200, 'x'));
  return e;
}

Status LoadPeople(blobtable::Store& store, const blobtable::Table& table, int64_t n) {
  for (int64_t i = 0; i < n;) {
    auto txn = store.Begin();
    if (!txn.ok()) return txn.status();
    for (int j = 0; j < 100 && i < n; ++j, ++i)
      BT_RETURN_IF_ERROR(txn->Upsert(table, IndexedPerson(i, 0)));
    BT_RETURN_IF_ERROR(txn->Commit().status());
  }
  return Status::OK();
}

Result<std::vector<Row>> RunW6(const W6Options& o) {
  std::vector<Place> places;
  Scratch dir;
  if (dir.path().empty()) return Status::IOError("W6: no scratch directory");
  Place embedded{"W6-embedded", dir.path() + "/store", {}, o.writes, o.rows};
  embedded.options.local.map_size = uint64_t{2} << 30;
  places.push_back(embedded);
  for (const W2Endpoint& e : o.endpoints) {
    Place remote{"W6-" + std::to_string(e.added_rtt_ms) + "ms",
                 ConnectionTo(e.port),
                 {},
                 o.remote_writes,
                 o.remote_rows};
    remote.options.container = FreshName("w6");
    places.push_back(remote);
  }
  std::vector<Row> out;
  for (const Place& p : places) {
    auto upserts = Upserts(p, o.rounds);
    if (!upserts.ok()) return upserts.status().WithContext(p.workload + " upsert");
    out.insert(out.end(), upserts->begin(), upserts->end());
    auto queries = QueriesAndBackfill(p, o.rounds);
    if (!queries.ok()) return queries.status().WithContext(p.workload + " query");
    out.insert(out.end(), queries->begin(), queries->end());
  }
  return out;
}

}  // namespace bench
