// SPDX-License-Identifier: Apache-2.0
// The benchmark suite's harness (docs/performance.md#the-benchmark-suite): every system of a
// cell runs once per round, in an order rotated each round, and the figures
// reported are medians over rounds, ratios as the median of per-round
// ratios against the cell's reference system (this machine is noisy, fsync
// most of all, and a round's systems share its noise).
#ifndef BLOBTABLE_BENCH_HARNESS_H_
#define BLOBTABLE_BENCH_HARNESS_H_

#include <stdlib.h>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <ostream>
#include <string>
#include <vector>

#include "blobtable/status.h"

namespace bench {

// What one system did in one round of one cell.
struct Sample {
  int64_t ops = 0;
  double seconds = 0;                // wall time of all threads
  double cpu_seconds = 0;            // this process's user + system time
  std::vector<double> latencies_us;  // one per operation
  int64_t requests = -1;             // storage requests, where counted
  // Figures a workload reports beside those, by name (W5: conflicts per
  // commit attempt, ...), each already a rate.
  std::map<std::string, double> rates;
};

// This process's user + system CPU time, in seconds.
double CpuSeconds();
// The value at quantile q (0..1) of v; 0 for none.
double Quantile(std::vector<double> v, double q);

// Runs op(thread, i) for i in [0, ops_per_thread) on `threads` threads at
// once; any error stops that thread and is returned.
blobtable::Result<Sample> RunThreads(int threads, int64_t ops_per_thread,
                                     const std::function<blobtable::Status(int, int64_t)>& op);

// Times one operation of a workload that times only part of what it does:
// started before the operation, stopped at its end; CPU and requests may be
// counted further (a commit's finishing), up to AddTo.
class Stopwatch {
 public:
  explicit Stopwatch(int64_t requests_before);
  // The end of the timed part; returns the requests sent so far.
  int64_t Stop(int64_t requests_now);
  // Adds the operation to `s`: its time to Stop, the CPU and requests to now.
  void AddTo(Sample& s, int64_t requests_now) const;

 private:
  int64_t requests0_;
  double cpu0_;
  std::chrono::steady_clock::time_point t0_, t1_;
};

struct System {
  std::string name;
  // One round's measurement (called once per round, in rotated order).
  std::function<blobtable::Result<Sample>()> run;
};

// A cell's result for one system: medians over rounds.
struct Row {
  std::string workload, op, system;
  int threads = 1;
  double ops_per_s = 0, p50_us = 0, p99_us = 0, cpu_us_per_op = 0, requests_per_op = -1;
  // The reference's ops/s over this system's (above 1: the reference is
  // faster), median of per-round ratios.
  double ratio = 1;
  std::string reference;
  // Sample::rates, medians over rounds: "name=value;name=value".
  std::string rates;
};

// Runs every system `rounds` times, rotating the order each round. The
// first system is the reference of the ratios.
blobtable::Result<std::vector<Row>> RunCell(const std::string& workload, const std::string& op,
                                            int threads, const std::vector<System>& systems,
                                            int rounds);

// A system whose round measures several operations on one store (loaded
// once): one Sample per operation, in the order of RunCells' `ops`.
struct MultiSystem {
  std::string name;
  std::function<blobtable::Result<std::vector<Sample>>()> run;
};

// RunCell for several operations measured in the same rounds: the rows of
// each operation in turn.
blobtable::Result<std::vector<Row>> RunCells(const std::string& workload,
                                             const std::vector<std::string>& ops, int threads,
                                             const std::vector<MultiSystem>& systems, int rounds);

// A new directory under $TMPDIR, removed with everything in it.
class Scratch {
 public:
  Scratch() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "blobtable-bench-XXXXXX").string();
    if (mkdtemp(tmpl.data()) != nullptr) path_ = tmpl;
  }
  ~Scratch() {
    std::error_code ec;
    if (!path_.empty()) std::filesystem::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// The key of operation `i` of thread (or worker) `thread`:
// "<stem>TT-IIIIIIII", sorting as each thread writes them.
std::string ThreadKey(char stem, int thread, int64_t i);
// The key of row `i` of a workload's rows: "rIIIIIIII" (as
// bench/tables_peer.mjs names them).
std::string RowKey(int64_t i);
// The value every system writes: `bytes` bytes, the same everywhere.
std::string ValueBytes(size_t bytes);

void PrintRows(const std::vector<Row>& rows, std::ostream& out);
void WriteCsv(const std::vector<Row>& rows, std::ostream& out);

}  // namespace bench

#endif  // BLOBTABLE_BENCH_HARNESS_H_
