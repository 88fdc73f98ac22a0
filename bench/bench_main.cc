// blobtable-bench: the benchmark suite (README "Performance"). Prints a
// table and writes a CSV; scripts/bench builds it in Release, starts what
// the remote workloads need, and draws the plot.
//
//   build-release/bench/blobtable-bench [--quick] [--rounds N] [--ops N] [--threads T...]
//       [--op OP...] [--system S...] [--csv FILE]
#include <CLI/CLI.hpp>

#include <fstream>
#include <iostream>

#include "bench/w1_embedded.h"

int main(int argc, char** argv) {
  CLI::App app{"blobtable-bench: blobtable against the systems users would pick instead"};
  bool quick = false;
  int rounds = 5;
  int64_t ops = 2000;
  std::string csv = "bench/results/latest.csv";
  std::vector<int> threads = {1, 2, 4, 8};
  std::vector<std::string> only_ops, systems;
  app.add_flag("--quick", quick, "a sanity run: 2 rounds, few operations, 1 and 2 threads");
  app.add_option("--rounds", rounds, "rounds, systems rotated each round")
      ->check(CLI::Range(1, 100))->capture_default_str();
  app.add_option("--ops", ops, "operations per thread and round")
      ->check(CLI::Range(int64_t{200}, int64_t{10'000'000}))->capture_default_str();
  app.add_option("--threads", threads, "thread counts")->capture_default_str();
  app.add_option("--op", only_ops, "only these W1 operations (insert, get, replace, range100)");
  app.add_option("--system", systems, "only these systems (blobtable, lmdb-raw, ...)");
  app.add_option("--csv", csv, "where the results go")->capture_default_str();
  CLI11_PARSE(app, argc, argv);

  bench::W1Options w1;
  w1.rounds = quick ? 2 : rounds;
  w1.ops_per_thread = quick ? 300 : ops;
  w1.threads = quick ? std::vector<int>{1, 2} : threads;
  if (!only_ops.empty()) w1.ops = only_ops;
  w1.systems = systems;
  auto rows = bench::RunW1(w1);
  if (!rows.ok()) {
    std::cerr << "blobtable-bench: " << rows.status().ToString() << "\n";
    return 1;
  }
  bench::PrintRows(*rows, std::cout);
  std::ofstream out(csv);
  if (!out) {
    std::cerr << "blobtable-bench: cannot write " << csv << "\n";
    return 1;
  }
  bench::WriteCsv(*rows, out);
  return 0;
}
