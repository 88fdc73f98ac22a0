// SPDX-License-Identifier: Apache-2.0
// Bounded-exhaustive search of small scenarios (exhaustive.cc): instead of
// sampling schedules from seeds, every schedule of a scenario's scheduling
// points is run, up to a bound on preemptions (switching away from an
// actor that could go on) and on faults (a stall past the leases, a kill,
// a lost answer, a wall-clock step), depth first: each run replays a prefix
// of choices and records how many alternatives every later point had
// (ChoiceLog, sim_scheduler.h). A failing schedule prints as "i=c,..." and
// replays with ReplaySchedule.
#ifndef BLOBTABLE_DEVTOOLS_STRESS_SIM_EXHAUSTIVE_H_
#define BLOBTABLE_DEVTOOLS_STRESS_SIM_EXHAUSTIVE_H_

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

namespace blobtable::sim {

struct ExhaustiveOptions {
  int preemptions = -1;  // -1: the scenario's own bound
  int faults = -1;
  uint64_t max_schedules = 0;  // 0: all of them
  bool stop_at_first = false;  // stop at the first violation
};

struct ExhaustiveResult {
  std::string scenario;
  uint64_t schedules = 0, violations = 0;
  double seconds = 0;
  bool complete = true;         // false: stopped before every schedule ran
  std::string first_schedule;   // the first failing one ("i=c,...")
  std::string first_violation;  // what it broke, with its choices in words
};

// The named scenarios, with a line each on what they are.
std::vector<std::pair<std::string, std::string>> Scenarios();

// Every schedule of `scenario` within the bounds. Prints a summary line.
ExhaustiveResult RunExhaustive(const std::string& scenario, const ExhaustiveOptions& options,
                               std::ostream& out);

// Random schedules of `scenario` instead of every one, seeds `first` to
// `first + count - 1`: each draws who runs at every point, when each actor
// starts (within 20 s), stalls of 1-40 s only in the protocol's windows
// (ExploreBounds::aimed), by chance, and how long each request takes (up to
// a second). `verbose`: each run's history and trace. Prints a summary line.
struct SampleResult {
  uint64_t seeds = 0, violations = 0, first_seed = 0;
  std::string first_violation;
};
SampleResult SampleScenario(const std::string& scenario, uint64_t first, uint64_t count,
                            bool verbose, std::ostream& out);

// One schedule of `scenario` ("i=c,..." as printed, "-" for the default),
// with its history and trace; returns its violation ("" if none).
std::string ReplaySchedule(const std::string& scenario, const std::string& schedule,
                           const ExhaustiveOptions& options, std::ostream& out);

}  // namespace blobtable::sim

#endif  // BLOBTABLE_DEVTOOLS_STRESS_SIM_EXHAUSTIVE_H_
