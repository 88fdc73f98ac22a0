// SPDX-License-Identifier: Apache-2.0
// blobtable-stress: several processes run a workload's random operations on
// one store, with faults injected and processes SIGKILLed and restarted at
// random; after each round every abandoned transaction is recovered and the
// workload's checker judges the whole history so far
// (docs/testing.md#randomized-stress-with-history-checking).
#ifndef BLOBTABLE_DEVTOOLS_STRESS_STRESS_H_
#define BLOBTABLE_DEVTOOLS_STRESS_STRESS_H_

#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

#include "blobtable/fault_injection.h"
#include "blobtable/options.h"

namespace blobtable::stress {

struct Config {
  // "processes" (the default: workers against a store) or "sim" (the
  // deterministic interleaving simulation, seeds first..first+seeds-1).
  std::string mode = "processes";
  uint64_t sim_first = 1, sim_seeds = 1000;
  std::string store;  // a directory or a connection string
  std::string container = "stress";
  std::string workload = "list-append";
  int processes = 3;
  double seconds = 30;        // the whole run
  double round_seconds = 10;  // a check after each round
  uint64_t seed = 0;          // 0: drawn, and printed
  int fault_rate = 0;         // about 1 call in this many meets a fault (0: none)
  // Azure stores on 127.0.0.1: workers reach storage through the fault
  // proxy (devtools/proxy), which gives about one request in this many a
  // network fault (0: no proxy).
  int proxy_fault_rate = 0;
  // How long the proxy holds a stalled request's answer (it was applied):
  // past a queue item's visibility (15 s), a held Complete outlives its lease.
  int proxy_stall_seconds = 3;
  double kill_every = 0;     // mean seconds between SIGKILLs (0: none)
  bool cache = false;        // Azure stores: read through the local cache
  bool short_lived = false;  // workers' stores are StoreOptions::short_lived
  std::string cache_dir;     // default: <work dir>/cache
  double clock_speed = 1;    // local stores: time runs this many times faster
  std::string work_dir;      // histories; default: a new temporary directory
  bool soak = false;         // no kills; resource figures must stay flat
  int lease_seconds = 15;    // transactions' leases
  // Local stores: how transactions commit. "atomic" (one LMDB write
  // transaction, the store's default), "coordinator" (the lease protocol),
  // or "mixed": even workers atomic, odd ones through the coordinator, on
  // the same entities at once.
  std::string commit = "mixed";
  // Operations per second per worker (0: as fast as they go). A run's
  // history (every list a read returns) is what the checkers hold in
  // memory: unpaced, workers on a local store write gigabytes of it.
  double rate = 100;
  // list-append: a fresh set of keys this often, so that no list grows long
  // (0: 5 s on a local store, 60 s on Azure, where operations are slower).
  double key_seconds = 0;
  double KeySeconds() const { return key_seconds > 0 ? key_seconds : azure() ? 60 : 5; }

  // Set for a worker process by the supervisor.
  int worker = -1, gen = 0;
  int64_t deadline_ns = 0;  // CLOCK_MONOTONIC
  int64_t clock_base_wall_ns = 0, clock_base_steady_ns = 0;

  bool azure() const;
  // The faults a worker injects (rates from fault_rate, its own seed).
  FaultOptions Faults() const;
  // The options every process opens the store with.
  StoreOptions Options(Clock* clock) const;
};

// The supervisor: runs the rounds, prints a summary line per round and one
// for the run; returns 0 when no violation was found, 1 when one was (the
// history is kept and its directory printed), 2 on a usage or setup error.
int RunSupervisor(const Config& config, const std::vector<std::string>& argv, std::ostream& out);

// A worker process: runs operations until its deadline or SIGTERM.
int RunWorker(const Config& config);

}  // namespace blobtable::stress

#endif  // BLOBTABLE_DEVTOOLS_STRESS_STRESS_H_
