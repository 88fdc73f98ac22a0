// SPDX-License-Identifier: Apache-2.0
// The randomized interleaving simulation of transactions and plain
// operations on the embedded store (interleavings.cc): a mode of
// blobtable-stress (--mode sim) and tests/txn_interleaving_test.cc. Needs
// the sync points, so it runs in programs linked with blobtable_testing.
#ifndef BLOBTABLE_DEVTOOLS_STRESS_SIM_INTERLEAVINGS_H_
#define BLOBTABLE_DEVTOOLS_STRESS_SIM_INTERLEAVINGS_H_

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

namespace blobtable::sim {

struct RunStats {
  std::string violation;  // empty: none (for RunSeeds, the first seed's)
  int ops = 0, txns = 0, committed = 0, kills = 0, stalls = 0, lost = 0, jumps = 0, breaks = 0;
};

// What a random run may do. `classic`: the simulation as it was before the
// extensions (protocol commits only; kills, stalls and lost answers, no
// aimed stalls, no clock steps), for comparison.
struct SimConfig {
  bool classic = false;
};

// One seed: the same seed, the same schedule. Prints the history and what
// broke when it finds a violation, and with `verbose` the schedule too.
RunStats RunSeed(uint64_t seed, bool verbose, std::ostream& out, const SimConfig& config = {});

// Seeds first..first+count-1 (verbose for `verbose_seed`); the seeds with a
// violation go to `failing`. Prints a summary line ("interleavings: seeds
// ..., violations N").
RunStats RunSeeds(uint64_t first, uint64_t count, std::optional<uint64_t> verbose_seed,
                  std::ostream& out, std::vector<uint64_t>* failing, const SimConfig& config = {});

}  // namespace blobtable::sim

#endif  // BLOBTABLE_DEVTOOLS_STRESS_SIM_INTERLEAVINGS_H_
