// SPDX-License-Identifier: Apache-2.0
// blobtable-stress (docs/testing.md#randomized-stress-with-history-checking). Examples:
//   blobtable-stress --store /tmp/s --workload list-append --seconds 60
//       --faults 50 --kill-every 3 --clock-speed 10
//   blobtable-stress --store "UseDevelopmentStorage=true" --workload bank
//       --cache --faults 100 --kill-every 10 --seconds 120
#include <iostream>

#include <CLI/CLI.hpp>

#include "devtools/stress/sim/exhaustive.h"
#include "devtools/stress/sim/interleavings.h"
#include "devtools/stress/stress.h"

namespace {

// --mode sim --exhaustive: 0 if no scenario found a violation, 1 if one did.
// With `sample` > 0: that many random schedules of each (seeds `first`..).
int RunExhaustive(std::string names, const std::string& schedule,
                  const blobtable::sim::ExhaustiveOptions& o, uint64_t sample, uint64_t first) {
  if (names == "all") {
    names.clear();
    for (const auto& [name, about] : blobtable::sim::Scenarios())
      names += (names.empty() ? "" : ",") + name;
  }
  bool violated = false;
  size_t at = 0;
  while (at <= names.size()) {
    const size_t comma = std::min(names.find(',', at), names.size());
    const std::string name = names.substr(at, comma - at);
    at = comma + 1;
    if (!schedule.empty()) {
      violated |= !blobtable::sim::ReplaySchedule(name, schedule, o, std::cout).empty();
      continue;
    }
    if (sample > 0) {
      auto r = blobtable::sim::SampleScenario(name, first, sample, false, std::cout);
      if (r.violations) std::cout << r.first_violation;
      violated |= r.violations > 0;
      continue;
    }
    auto r = blobtable::sim::RunExhaustive(name, o, std::cout);
    if (r.violations) std::cout << r.first_violation;
    violated |= r.violations > 0;
  }
  return violated ? 1 : 0;
}

}  // namespace

int main(int argc, char** argv) {
  using blobtable::stress::Config;
  Config c;
  CLI::App app(
      "blobtable-stress: processes run random operations on one store while faults are "
      "injected and processes are killed; the history is checked after every round. Exit 0: "
      "no violation; 1: a violation (printed, with the history kept); 2: usage or setup.",
      "blobtable-stress");
  app.option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  app.add_option("--mode", c.mode,
                 "processes (default): workers against --store; sim: the deterministic "
                 "interleaving simulation of transactions on an embedded store (one process, "
                 "every choice from the seed, checked for a serial order), seeds --first.."
                 "--first+--seeds-1, or just --seed S with its schedule printed")
      ->check(CLI::IsMember({"processes", "sim"}));
  app.add_option("--first", c.sim_first, "sim: the first seed (default 1)");
  app.add_option("--seeds", c.sim_seeds, "sim: how many seeds (default 1000)");
  std::string exhaustive, schedule;
  blobtable::sim::ExhaustiveOptions explore;
  bool classic = false;
  app.add_flag("--classic", classic, "sim: the random simulation without its extensions");
  app.add_option(
      "--exhaustive", exhaustive,
      "sim: search every schedule of these scenarios (comma-separated, or all: "
      "late-abort, read-fence, clock-step, atomic-stamp, reader-settle) instead of seeds");
  app.add_option("--preemptions", explore.preemptions, "sim --exhaustive: preemption bound");
  app.add_option("--fault-bound", explore.faults, "sim --exhaustive: fault bound");
  app.add_option("--max-schedules", explore.max_schedules, "sim --exhaustive: stop after N");
  app.add_flag("--stop-at-first", explore.stop_at_first, "sim --exhaustive: stop at a violation");
  uint64_t sample = 0;
  app.add_option("--sample", sample,
                 "sim --exhaustive: N random schedules of each scenario (seeds --first..; "
                 "starts, stalls in the protocol's windows and request times drawn) instead "
                 "of every one");
  app.add_option("--schedule", schedule,
                 "sim --exhaustive: replay this schedule (i=c,... as printed) of one scenario");
  app.add_option("--store", c.store, "a directory, or an Azure Storage connection string");
  app.add_option("--container", c.container, "default: stress");
  app.add_option("--workload", c.workload,
                 "list-append (default), bank, queue (a WorkQueue: exactly one Complete says "
                 "OK, nothing lost) or lock (a Lock and fenced increments: tokens only go up, "
                 "no increment lost) or leader (the same with a LeaderElection, its term the "
                 "token) or index (secondary indexes: every entity has exactly its "
                 "entries, no unique value held twice) or unique-race (every worker claims "
                 "one value of a unique index each second: one holder a contest, never all "
                 "lost)")
      ->check(CLI::IsMember(
          {"list-append", "bank", "queue", "lock", "leader", "index", "unique-race"}));
  app.add_option("--processes", c.processes, "worker processes (default 3)")
      ->check(CLI::Range(1, 64));
  app.add_option("--seconds", c.seconds, "the whole run (default 30)")->check(CLI::PositiveNumber);
  app.add_option("--round-seconds", c.round_seconds,
                 "the history is checked after each round of this long (default 10)")
      ->check(CLI::PositiveNumber);
  app.add_option("--seed", c.seed, "replays a run's choices and faults (default: drawn, printed)");
  app.add_option("--faults", c.fault_rate,
                 "N: about 4 calls in N meet an injected fault (503, 500, timeout, reset before "
                 "or after the request was applied, a lost lease); 0: none (default)")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--proxy-faults", c.proxy_fault_rate,
                 "N: Azurite only: workers go through the fault proxy, where about 1 request in "
                 "N meets each network fault (503, answer lost, reset mid-request or "
                 "mid-response; stalls a quarter as often); 0: no proxy (default)")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--proxy-stall-seconds", c.proxy_stall_seconds,
                 "S: how long the proxy holds a stalled answer (default 3; over 15 holds a "
                 "queue item's Complete past its visibility)")
      ->check(CLI::Range(1, 120));
  app.add_option("--kill-every", c.kill_every,
                 "SECONDS: mean time between SIGKILLs of a random worker, which is restarted "
                 "(0: none, default)")
      ->check(CLI::NonNegativeNumber);
  app.add_flag("--cache", c.cache, "Azure stores: read through the local cache");
  app.add_option("--cache-dir", c.cache_dir, "default: in the work directory");
  app.add_option("--clock-speed", c.clock_speed,
                 "local stores: time (leases, waits) runs this many times faster (default 1)")
      ->check(CLI::Range(1.0, 100.0));
  app.add_option("--work-dir", c.work_dir,
                 "where the history goes (default: a temporary directory, removed unless a "
                 "violation was found)");
  app.add_flag("--soak", c.soak,
               "no kills; every worker reports resident memory and open descriptors, which "
               "must stay flat from after warm-up to the end");
  app.add_option("--lease-seconds", c.lease_seconds, "transactions' leases (15..60, default 15)")
      ->check(CLI::Range(15, 60));
  app.add_option("--rate", c.rate,
                 "operations per second per worker (default 100; 0: as fast as they go, which "
                 "on a local store writes histories of gigabytes in minutes)")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--key-seconds", c.key_seconds,
                 "list-append: a fresh set of keys this often (default 5 on a local store, 60 "
                 "on Azure), so that no list grows long")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--commit", c.commit,
                 "local stores: how transactions commit: atomic (one LMDB write transaction, "
                 "the store's default), coordinator (the lease protocol, as on Azure), or mixed "
                 "(default: even workers atomic, odd ones through the coordinator, at once)")
      ->check(CLI::IsMember({"atomic", "coordinator", "mixed"}));
  app.add_flag("--short-lived", c.short_lived,
               "the workers' stores are short-lived (StoreOptions::short_lived): every "
               "transaction starts at its partition's first lock stripe");
  // Set by the supervisor for its workers.
  app.add_option("--worker", c.worker)->group("");
  app.add_option("--gen", c.gen)->group("");
  app.add_option("--deadline-ns", c.deadline_ns)->group("");
  app.add_option("--clock-base-wall-ns", c.clock_base_wall_ns)->group("");
  app.add_option("--clock-base-steady-ns", c.clock_base_steady_ns)->group("");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
  if (c.mode == "sim" && !exhaustive.empty())
    return RunExhaustive(exhaustive, schedule, explore, sample, c.sim_first);
  if (c.mode == "sim") {
    std::vector<uint64_t> failing;
    const bool one = c.seed != 0;
    blobtable::sim::RunSeeds(one ? c.seed : c.sim_first, one ? 1 : c.sim_seeds,
                             one ? std::optional<uint64_t>(c.seed) : std::nullopt, std::cout,
                             &failing, blobtable::sim::SimConfig{classic});
    return failing.empty() ? 0 : 1;
  }
  if (c.store.empty()) {
    std::cerr << "blobtable-stress: --store is required\n";
    return 2;
  }
  if (c.worker >= 0) return blobtable::stress::RunWorker(c);
  return blobtable::stress::RunSupervisor(c, std::vector<std::string>(argv, argv + argc),
                                          std::cout);
}
