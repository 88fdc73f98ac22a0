// blobtable-bench: the benchmark suite (README "Performance"). Prints a
// table and writes a CSV; scripts/bench builds it in Release, starts what
// the remote workloads need, and draws the plot.
//
//   build-release/bench/blobtable-bench [--quick] [--rounds N] [--ops N] [--threads T...]
//       [--op OP...] [--system S...] [--proxy MS:PORT...] [--remote-ops N] [--csv FILE]
//
// W1 (embedded) always runs; W2 (remote) and W3 (cached reads) for each
// --proxy: a blobtable-proxy adding MS ms to a round trip in front of
// Azurite, listening on PORT.
#include <CLI/CLI.hpp>

#include <algorithm>
#include <fstream>
#include <iostream>

#include "bench/w1_embedded.h"
#include "bench/w2_remote.h"
#include "bench/w3_cached.h"

int main(int argc, char** argv) {
  CLI::App app{"blobtable-bench: blobtable against the systems users would pick instead"};
  bool quick = false;
  int rounds = 5;
  int64_t ops = 2000;
  std::string csv = "bench/results/latest.csv";
  std::vector<int> threads = {1, 2, 4, 8};
  std::vector<std::string> only_ops, systems, proxies, workloads = {"W1", "W2", "W3"};
  int64_t remote_ops = 200;
  app.add_flag("--quick", quick, "a sanity run: 2 rounds, few operations, 1 and 2 threads");
  app.add_option("--rounds", rounds, "rounds, systems rotated each round")
      ->check(CLI::Range(1, 100))->capture_default_str();
  app.add_option("--ops", ops, "operations per thread and round")
      ->check(CLI::Range(int64_t{200}, int64_t{10'000'000}))->capture_default_str();
  app.add_option("--threads", threads, "thread counts")->capture_default_str();
  app.add_option("--op", only_ops, "only these W1 operations (insert, get, replace, range100)");
  app.add_option("--system", systems, "only these systems (blobtable, lmdb-raw, ...)");
  app.add_option("--proxy", proxies, "W2: MS:PORT, a proxy adding MS ms in front of Azurite");
  app.add_option("--remote-ops", remote_ops, "W2: operations a round, shared by the workers")
      ->check(CLI::Range(int64_t{16}, int64_t{1'000'000}))->capture_default_str();
  app.add_option("--workload", workloads, "only these workloads (W1, W2, W3)")->capture_default_str();
  app.add_option("--csv", csv, "where the results go")->capture_default_str();
  CLI11_PARSE(app, argc, argv);
  auto wanted = [&](const char* w) {
    return std::find(workloads.begin(), workloads.end(), w) != workloads.end();
  };

  bench::W1Options w1;
  w1.rounds = quick ? 2 : rounds;
  w1.ops_per_thread = quick ? 300 : ops;
  w1.threads = quick ? std::vector<int>{1, 2} : threads;
  if (!only_ops.empty()) w1.ops = only_ops;
  w1.systems = systems;
  std::vector<bench::Row> rows;
  if (wanted("W1")) {
    auto w1_rows = bench::RunW1(w1);
    if (!w1_rows.ok()) {
      std::cerr << "blobtable-bench: " << w1_rows.status().ToString() << "\n";
      return 1;
    }
    rows = std::move(*w1_rows);
  }
  bench::W2Options w2;
  w2.rounds = w1.rounds;
  w2.systems = systems;
  for (const std::string& p : proxies) {
    const size_t colon = p.find(':');
    if (colon == std::string::npos) {
      std::cerr << "blobtable-bench: --proxy wants MS:PORT, not " << p << "\n";
      return 2;
    }
    w2.endpoints.push_back({std::stoi(p.substr(0, colon)), std::stoi(p.substr(colon + 1))});
  }
  if (wanted("W2") && !w2.endpoints.empty()) {
    w2.ops_per_round = quick ? 32 : remote_ops;
    auto w2_rows = bench::RunW2(w2);
    if (!w2_rows.ok()) {
      std::cerr << "blobtable-bench: " << w2_rows.status().ToString() << "\n";
      return 1;
    }
    rows.insert(rows.end(), w2_rows->begin(), w2_rows->end());
  }
  if (wanted("W3") && !w2.endpoints.empty()) {
    bench::W3Options w3;
    w3.rounds = w1.rounds;
    w3.systems = systems;
    w3.endpoints = w2.endpoints;
    if (quick) w3.remote_ops = 20, w3.local_ops = 2000;
    auto w3_rows = bench::RunW3(w3);
    if (!w3_rows.ok()) {
      std::cerr << "blobtable-bench: " << w3_rows.status().ToString() << "\n";
      return 1;
    }
    rows.insert(rows.end(), w3_rows->begin(), w3_rows->end());
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
