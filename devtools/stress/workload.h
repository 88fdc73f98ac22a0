// SPDX-License-Identifier: Apache-2.0
// A stress workload: the operations worker processes run at random, and the
// checker that judges their history (docs/testing.md#randomized-stress-with-history-checking).
#ifndef BLOBTABLE_DEVTOOLS_STRESS_WORKLOAD_H_
#define BLOBTABLE_DEVTOOLS_STRESS_WORKLOAD_H_

#include <memory>
#include <random>
#include <string>
#include <vector>

#include "blobtable/store.h"
#include "devtools/stress/history.h"

namespace blobtable::stress {

// The clock `store` was opened with (the real one if none).
inline const Clock& ClockOf(const Store& store) {
  return store.options().clock ? *store.options().clock : *Clock::Real();
}

struct WorkerContext {
  Store& store;
  std::mt19937_64& rng;
  HistoryWriter& history;
  int worker = 0, gen = 0;
  TransactionOptions txn;
  // list-append: how long a set of keys is written before the next one.
  uint64_t key_era_ns = 5'000'000'000;
  // The store's clock (scaled with --clock-speed), for a workload's pauses.
  Clock* clock = nullptr;
};

class Workload {
 public:
  virtual ~Workload() = default;
  virtual std::string name() const = 0;
  // Creates the initial state: run once, before any worker, without faults.
  virtual Status Setup(Store& store) = 0;
  // Runs one operation chosen at random, recording its invocation and
  // completion in ctx.history.
  virtual void RunOne(WorkerContext& ctx) = 0;
  // Judges a history against the store's state (after every abandoned
  // transaction was recovered): empty if it breaks no guarantee, else the
  // first violation found, with the operations that show it.
  virtual std::string Check(const std::vector<Op>& history, Store& store) = 0;
  // A line of the workload's own figures for the run's summary (after a
  // Check; empty: none).
  virtual std::string Summary(const std::vector<Op>& /*history*/) const { return ""; }
};

// "bank", "list-append", "queue", "lock", "leader", "index" or
// "unique-race"; null for another name.
std::unique_ptr<Workload> MakeWorkload(const std::string& name);
std::unique_ptr<Workload> MakeBankWorkload();
std::unique_ptr<Workload> MakeListAppendWorkload();
std::unique_ptr<Workload> MakeQueueWorkload();
std::unique_ptr<Workload> MakeLockWorkload();
std::unique_ptr<Workload> MakeLeaderWorkload();
std::unique_ptr<Workload> MakeIndexWorkload();
std::unique_ptr<Workload> MakeUniqueRaceWorkload();

}  // namespace blobtable::stress

#endif  // BLOBTABLE_DEVTOOLS_STRESS_WORKLOAD_H_
