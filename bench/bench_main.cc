// SPDX-License-Identifier: Apache-2.0
// blobtable-bench: the benchmark suite (docs/performance.md#the-benchmark-suite). Prints a
// table and writes a CSV; scripts/bench builds it in Release, starts what
// the remote workloads need, and draws the plot.
//
//   build-release/bench/blobtable-bench [--quick] [--rounds N] [--remote-rounds N] [--ops N]
//   [--threads T...]
//       [--op OP...] [--system S...] [--proxy MS:PORT...] [--table-proxy MS:PORT...]
//       [--remote-ops N] [--workload W...] [--csv FILE]
//
// W1 (embedded) runs alone; W2 (remote), W3 (cached reads), W4 (queries)
// and W5 (transactions) for each --proxy: a blobtable-proxy adding MS ms to
// a round trip in front of Azurite's blob service, listening on PORT. W4
// and W5 compare with Azurite's Table service through each --table-proxy.
#include <CLI/CLI.hpp>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <iostream>

#include "bench/w1_embedded.h"
#include "bench/w2_remote.h"
#include "bench/w3_cached.h"
#include "bench/w4_queries.h"
#include "bench/w5_transactions.h"
#include "bench/w6_indexes.h"

namespace {

// "MS:PORT" each; false (said on stderr) for anything else.
bool ParseEndpoints(const std::vector<std::string>& specs, std::vector<bench::W2Endpoint>& out) {
  for (const std::string& p : specs) {
    int ms = 0, port = 0;
    char tail = 0;
    if (std::sscanf(p.c_str(), "%d:%d%c", &ms, &port, &tail) != 2 || ms < 0 || port <= 0 ||
        port > 65535) {
      std::cerr << "blobtable-bench: a proxy is MS:PORT, not " << p << "\n";
      return false;
    }
    out.push_back({ms, port});
  }
  return true;
}

// Appends a workload's rows; false (said on stderr) if it failed.
bool Append(blobtable::Result<std::vector<bench::Row>> got, std::vector<bench::Row>& rows) {
  if (!got.ok()) {
    std::cerr << "blobtable-bench: " << got.status().ToString() << "\n";
    return false;
  }
  rows.insert(rows.end(), got->begin(), got->end());
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"blobtable-bench: blobtable against the systems users would pick instead"};
  bool quick = false;
  int rounds = 3;  // 5 until 2026-11-30 (docs/performance.md#the-benchmark-suite: its time)
  int remote_rounds = 3;
  int64_t ops = 1500;
  std::string csv = "bench/results/latest.csv";
  std::vector<int> threads = {1, 2, 4, 8};
  std::vector<std::string> only_ops, systems, proxies, table_proxies;
  std::vector<std::string> workloads = {"W1", "W2", "W3", "W4", "W5", "W6"};
  int64_t remote_ops = 120;
  std::vector<int> hot_workers = bench::W5Options{}.hot_workers;
  app.add_flag("--quick", quick,
               "a sanity run: 1 round, few operations, 1 and 2 threads (every path runs; no figure "
               "means anything)");
  app.add_option("--rounds", rounds, "rounds of W1, systems rotated each round")
      ->check(CLI::Range(1, 100))
      ->capture_default_str();
  app.add_option("--remote-rounds", remote_rounds,
                 "rounds of the remote workloads (W2-W5), each round a few seconds of Azurite "
                 "at 0 and 10 ms added (3 keeps the whole suite under 15 minutes)")
      ->check(CLI::Range(1, 100))
      ->capture_default_str();
  app.add_option("--ops", ops, "operations per thread and round")
      ->check(CLI::Range(int64_t{200}, int64_t{10'000'000}))
      ->capture_default_str();
  app.add_option("--threads", threads, "thread counts")->capture_default_str();
  app.add_option("--op", only_ops,
                 "only these operations: W1's (insert, get, replace, range100; get-value, a get "
                 "that reads every byte of the value, only when asked), W5's (commit, "
                 "hot-partition, transfer)");
  app.add_option("--system", systems, "only these systems (blobtable, lmdb-raw, ...)");
  app.add_option("--proxy", proxies, "W2: MS:PORT, a proxy adding MS ms in front of Azurite");
  app.add_option("--table-proxy", table_proxies,
                 "W4, W5: MS:PORT, a proxy adding MS ms in front of Azurite's Table service");
  app.add_option("--remote-ops", remote_ops, "W2: operations a round, shared by the workers")
      ->check(CLI::Range(int64_t{16}, int64_t{1'000'000}))
      ->capture_default_str();
  app.add_option("--hot-workers", hot_workers, "W5 hot-partition: worker counts")
      ->capture_default_str();
  app.add_option("--workload", workloads, "only these workloads (W1 ... W5)")
      ->capture_default_str();
  app.add_option("--csv", csv, "where the results go")->capture_default_str();
  CLI11_PARSE(app, argc, argv);
  auto wanted = [&](const char* w) {
    return std::find(workloads.begin(), workloads.end(), w) != workloads.end();
  };

  bench::W1Options w1;
  w1.rounds = quick ? 1 : rounds;
  w1.ops_per_thread = quick ? 100 : ops;
  w1.threads = quick ? std::vector<int>{1, 2} : threads;
  if (!only_ops.empty()) {
    w1.ops.clear();
    for (const std::string& op : only_ops)
      if (std::find(w1.ops.begin(), w1.ops.end(), op) == w1.ops.end() &&
          (op == "insert" || op == "get" || op == "get-value" || op == "replace" ||
           op == "range100"))
        w1.ops.push_back(op);
  }
  w1.systems = systems;
  std::vector<bench::Row> rows;
  if (wanted("W1") && !Append(bench::RunW1(w1), rows)) return 1;
  bench::W2Options w2;
  w2.rounds = quick ? 1 : remote_rounds;
  w2.systems = systems;
  std::vector<bench::W2Endpoint> table_endpoints;
  if (!ParseEndpoints(proxies, w2.endpoints) || !ParseEndpoints(table_proxies, table_endpoints))
    return 2;
  if (wanted("W2") && !w2.endpoints.empty()) {
    w2.ops_per_round = quick ? 16 : remote_ops;
    if (!Append(bench::RunW2(w2), rows)) return 1;
  }
  if (wanted("W3") && !w2.endpoints.empty()) {
    bench::W3Options w3;
    w3.rounds = quick ? 1 : remote_rounds;
    w3.systems = systems;
    w3.endpoints = w2.endpoints;
    if (quick) w3.remote_ops = 10, w3.local_ops = 500;
    if (!Append(bench::RunW3(w3), rows)) return 1;
  }
  if (wanted("W4") && !w2.endpoints.empty()) {
    bench::W4Options w4;
    w4.rounds = quick ? 1 : remote_rounds;
    w4.systems = systems;
    w4.endpoints = w2.endpoints;
    w4.table_endpoints = table_endpoints;
    if (quick) w4.rows = {100}, w4.value_bytes = {1000};
    if (!Append(bench::RunW4(w4), rows)) return 1;
  }
  if (wanted("W5") && !w2.endpoints.empty()) {
    bench::W5Options w5;
    w5.rounds = quick ? 1 : remote_rounds;
    w5.systems = systems;
    w5.endpoints = w2.endpoints;
    w5.table_endpoints = table_endpoints;
    w5.hot_workers = hot_workers;
    w5.ops = only_ops;
    if (quick) w5.partitions = {1, 2}, w5.commits = 2, w5.attempts = 2;
    if (quick) w5.hot_workers = {1, 4}, w5.hot_commits = 2;
    if (!Append(bench::RunW5(w5), rows)) return 1;
  }
  if (wanted("W6")) {  // the embedded store, and Azure through each proxy
    bench::W6Options w6;
    w6.rounds = quick ? 1 : remote_rounds;
    w6.endpoints = w2.endpoints;
    if (quick) w6.writes = 20, w6.remote_writes = 3, w6.rows = 1000, w6.remote_rows = 100;
    if (!Append(bench::RunW6(w6), rows)) return 1;
  }
  bench::PrintRows(rows, std::cout);
  std::ofstream out(csv);
  if (!out) {
    std::cerr << "blobtable-bench: cannot write " << csv << "\n";
    return 1;
  }
  bench::WriteCsv(rows, out);
  return 0;
}
