// SPDX-License-Identifier: Apache-2.0
// Secondary indexes (issue 34, docs/indexes.md#what-it-costs): on one store,
//   write    W upserts that move an indexed value, on a table with a unique
//            and a plain index, against the same upserts on a table with
//            none (rounds interleaved; the median of per-round ratios);
//   backfill CreateIndex over ROWS entities already written: entities a
//            second (the definitions' grace, cut to 1 s here, not counted);
//   query    an equality on the index (ten entities of ROWS, read; and
//            answered from the index alone) against a $filter scan of the
//            whole table finding the same ten (median of ratios).
//
// The suite's W6 (bench/w6_indexes.h) measures the same at one size each;
// this program, by hand, at the sizes of docs/indexes.md.
//   cmake --build build --target index_bench
//   build/bench/index_bench --store DIR|CONNECTION_STRING [--rows 10000,100000] [--writes 300]
//                           [--rounds 3]
// A directory is emptied first; on Azure each run uses a fresh container.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "bench/w6_indexes.h"
#include "blobtable/store.h"
#include "blobtable/txn.h"
#include "testing/counting_blob_store.h"
#include "testing/hooks.h"

namespace {

using Steady = std::chrono::steady_clock;
using blobtable::Entity;
using blobtable::Status;

double Seconds(Steady::time_point t0) {
  return std::chrono::duration<double>(Steady::now() - t0).count();
}
double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}
[[noreturn]] void Die(const std::string& what, const Status& s) {
  std::fprintf(stderr, "index_bench: %s: %s\n", what.c_str(), s.ToString().c_str());
  std::exit(1);
}
void Check(const std::string& what, const Status& s) {
  if (!s.ok()) Die(what, s);
}

using bench::IndexedPerson;

void Load(blobtable::Store& store, const blobtable::Table& table, int n) {
  Check("load", bench::LoadPeople(store, table, n));
}

// The writes go through a store of their own on the same storage, with the
// definitions' times a user's store has (the indexes are ready before it
// opens) and its requests counted.
void Writes(blobtable::Store& store, const std::string& location,
            const blobtable::StoreOptions& options, int writes, int rounds) {
  {
    auto plain = store.OpenTable("plain");
    auto indexed = store.OpenTable("indexed");
    Check("open", plain.status());
    Check("open", indexed.status());
    Load(store, *plain, writes);
    Load(store, *indexed, writes);
  }
  Check("index",
        store.CreateIndex("indexed", {.name = "byEmail", .properties = {"email"}, .unique = true}));
  Check("index", store.CreateIndex("indexed", {.name = "byCity", .properties = {"city"}}));
  blobtable::StoreOptions counted = options;
  counted.testing = nullptr;
  std::shared_ptr<blobtable::internal::CountingBlobStore> counter;
  counted.wrap_blob_store = [&counter](std::shared_ptr<blobtable::BlobStore> b) {
    counter = std::make_shared<blobtable::internal::CountingBlobStore>(std::move(b));
    return std::shared_ptr<blobtable::BlobStore>(counter);
  };
  auto writer = blobtable::Store::Open(location, counted);
  Check("open", writer.status());
  auto plain = (*writer)->OpenTable("plain");
  auto indexed = (*writer)->OpenTable("indexed");
  std::vector<double> ratios, plain_ms, indexed_ms;
  int requests[2] = {0, 0};
  for (int round = 1; round <= rounds; ++round) {
    double t[2];
    for (int k = 0; k < 2; ++k) {
      const blobtable::Table& table = k == 0 ? *plain : *indexed;
      counter->Clear();
      const auto t0 = Steady::now();
      for (int i = 0; i < writes; ++i)
        Check("upsert", table.Upsert(IndexedPerson(i, round)).status());
      t[k] = Seconds(t0);
      requests[k] += counter->Total();  // and the finishing the round's writes queued
    }
    plain_ms.push_back(1000 * t[0] / writes);
    indexed_ms.push_back(1000 * t[1] / writes);
    ratios.push_back(t[1] / t[0]);
  }
  std::printf(
      "write: plain %.3f ms, indexed (a unique and a plain index, both values moved) "
      "%.3f ms an upsert; indexed / plain %.2fx (median of %d rounds of %d); requests an "
      "upsert: plain %.1f, indexed %.1f (with the finishing sent by the round's end)\n",
      Median(plain_ms), Median(indexed_ms), Median(ratios), rounds, writes,
      static_cast<double>(requests[0]) / (rounds * writes),
      static_cast<double>(requests[1]) / (rounds * writes));
}

void Queries(blobtable::Store& store, int rows, int rounds) {
  const std::string name = "t" + std::to_string(rows);
  auto table = store.OpenTable(name);
  Check("open", table.status());
  Load(store, *table, rows);
  blobtable::CreateIndexOptions how;
  const auto t0 = Steady::now();
  Check("backfill",
        store.CreateIndex(name, {.name = "byCity", .properties = {"city"}, .covered = {"email"}},
                          how));
  const double backfill = Seconds(t0) - 1.0;  // the grace, a tenth of 10 s here
  std::printf("backfill: %d entities in %.2f s: %.0f entities a second\n", rows, backfill,
              rows / backfill);
  std::vector<double> scan_ms, index_ms, covered_ms, ratio, covered_ratio;
  for (int round = 1; round <= rounds; ++round) {
    const std::string city = "c" + std::to_string(100 + round);
    size_t found[3] = {0, 0, 0};
    auto a = Steady::now();
    blobtable::QueryOptions filtered;
    filtered.filter = "city eq '" + city + "'";
    auto scan = table->Scan(filtered);
    for ([[maybe_unused]] const Entity& e : scan) ++found[0];
    Check("scan", scan.status());
    const double s = Seconds(a);
    a = Steady::now();
    auto read = table->QueryIndex("byCity", {.equal = {blobtable::PropertyValue(city)}});
    Check("index query", read.status());
    found[1] = read->entities.size();
    const double q = Seconds(a);
    blobtable::QueryOptions only;
    only.select = {"city", "email"};
    a = Steady::now();
    auto covered = table->QueryIndex("byCity", {.equal = {blobtable::PropertyValue(city)}}, only);
    Check("covered query", covered.status());
    found[2] = covered->entities.size();
    const double c = Seconds(a);
    if (found[0] != found[1] || found[0] != found[2])
      Die("query", Status::Internal("the scan found " + std::to_string(found[0]) + ", the index " +
                                    std::to_string(found[1])));
    scan_ms.push_back(1000 * s);
    index_ms.push_back(1000 * q);
    covered_ms.push_back(1000 * c);
    ratio.push_back(s / q);
    covered_ratio.push_back(s / c);
  }
  std::printf(
      "query of %d entities (%zu match): $filter scan %.2f ms, index %.2f ms (%.0fx "
      "faster), covered %.2f ms (%.0fx)\n",
      rows, static_cast<size_t>(rows / 1000), Median(scan_ms), Median(index_ms), Median(ratio),
      Median(covered_ms), Median(covered_ratio));
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app("index_bench: secondary indexes against plain writes and $filter scans");
  std::string location;
  std::vector<int> rows = {10000, 100000};
  int writes = 300, rounds = 3;
  app.add_option("--store", location, "a directory (emptied) or a connection string")->required();
  app.add_option("--rows", rows, "table sizes for the query and backfill figures")->delimiter(',');
  app.add_option("--writes", writes, "upserts a round");
  app.add_option("--rounds", rounds, "rounds");
  CLI11_PARSE(app, argc, argv);
  const bool local = location.find('=') == std::string::npos;
  if (local) std::filesystem::remove_all(location);
  blobtable::StoreOptions options;
  options.container = "indexbench" + std::to_string(getpid());
  options.local.map_size = uint64_t{8} << 30;
  // The definitions' grace a tenth as long (this process is the only client).
  blobtable::internal::TestingHooks hooks;
  hooks.index_time_divisor = 10;
  options.testing = std::make_shared<const blobtable::internal::TestingHooks>(hooks);
  auto store = blobtable::Store::Open(location, options);
  Check("open", store.status());
  Writes(**store, location, options, writes, rounds);
  for (int n : rows) Queries(**store, n, rounds);
  return 0;
}
