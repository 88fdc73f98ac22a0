// Randomized search for interleavings that break the transaction guarantees
// (README "Transactions"): the simulation of tools/stress/sim/interleavings.h
// over many seeds (also `blobtable-stress --mode sim`).
//
//   BLOBTABLE_SIM_SEEDS=N      seeds 1..N (default 2100: CI)
//   BLOBTABLE_SIM_FIRST=K      start at seed K (default 1)
//   BLOBTABLE_SIM_SEED=S       just seed S, printing its schedule
#include <gtest/gtest.h>

#include <cstdlib>
#include <iostream>

#include "tools/stress/sim/interleavings.h"
#include "txn/sync_point.h"

namespace blobtable::testing {
namespace {

int EnvInt(const char* name, int fallback) {
  const char* v = std::getenv(name);
  return v != nullptr && *v != '\0' ? std::atoi(v) : fallback;
}

TEST(TxnInterleavingTest, RandomInterleavingsKeepEveryGuarantee) {
  if (!SyncPoints::Enabled()) GTEST_SKIP() << "sync points are compiled out (Release build)";
  const int only = EnvInt("BLOBTABLE_SIM_SEED", 0);
  const int first = only ? only : EnvInt("BLOBTABLE_SIM_FIRST", 1);
  const int count = only ? 1 : EnvInt("BLOBTABLE_SIM_SEEDS", 2100);
  std::vector<uint64_t> failing;
  sim::RunSeeds(static_cast<uint64_t>(first), static_cast<uint64_t>(count),
                only ? std::optional<uint64_t>(only) : std::nullopt, std::cout, &failing);
  std::string seeds;
  for (uint64_t s : failing) seeds += " " + std::to_string(s);
  EXPECT_TRUE(failing.empty()) << "seeds with violations:" << seeds
                               << " (rerun one with BLOBTABLE_SIM_SEED=<seed>)";
}

}  // namespace
}  // namespace blobtable::testing
