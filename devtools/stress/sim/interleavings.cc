// SPDX-License-Identifier: Apache-2.0
// The randomized interleaving simulation
// (docs/transactions.md#randomized-interleavings), as a mode of the stress tool and as a test.
// Each seed runs a few actors on the embedded store, one request at a time
// under the deterministic scheduler (sim_scheduler.h): transactions with
// short and long lock timeouts (read-write, with entities only read, and
// read-only), some committed as one atomic batch on a second store on the
// same directory, beside plain gets, inserts, replaces, upserts and
// deletes, conditional and not, while actors stall (past their leases; aimed
// at the commit point, a decider's abort create and a reader between an
// intent and its record), are killed at requests and sync points, lose the
// answers to applied writes, and see the wall clock step, while `Recover`
// runs now and then in a process whose wall clock is skewed. Afterwards the
// leases run out, `Recover` runs, every key is read, and the history
// checker looks for one serial order, consistent with real time, that
// explains every answer; a protocol monitor flags any write around a
// committed transaction.
#include "devtools/stress/sim/interleavings.h"

#include <iostream>
#include <memory>
#include <random>

#include "devtools/stress/sim/history_checker.h"
#include "devtools/stress/sim/sim_actor.h"
#include "devtools/stress/sim/sim_scheduler.h"
#include "devtools/stress/sim/sim_world.h"
#include "testing/fake_clock.h"
#include "testing/sync_point.h"

namespace blobtable::sim {
namespace {

using std::chrono::milliseconds;

const char* const kSyncPoints[] = {
    "txn.locks_acquired", "txn.prewritten",   "txn.committed",
    "txn.finished_one",   "txn.finished",     "txn.record_deleted",
    "txn.renewed",        "recovery.decided", "recovery.settled_one"};

SimFaults FaultsFor(uint64_t seed, const SimConfig& config) {
  SimFaults faults;
  faults.kill = 0.005;
  faults.kill_at_step = 0.1;
  faults.max_kills = 2;
  faults.stall = 0.03;
  faults.stall_at_step = 0.25;
  faults.max_stall = milliseconds(40'000);
  faults.lost_response = 0.01;
  // Each run focuses its kills on one protocol step.
  faults.focus_step = kSyncPoints[seed % std::size(kSyncPoints)];
  faults.kill_at_focus = 0.5;
  if (config.classic) return faults;
  // Aimed at the windows the holes of the protocol live in: past the
  // leases (15 s) at the commit point, a decider's abort create landing
  // late, a reader paused between an intent and its record.
  faults.stall_commit_point = 0.3;
  faults.stall_abort_create = 0.5;
  faults.stall_after_intent_read = 0.2;
  faults.min_aimed = milliseconds(16'000);
  // A third of the runs see the wall clock step past a lease, either way.
  if (seed % 3 == 0) {
    faults.clock_jump = 0.01;
    faults.max_jumps = 1;
  }
  // A fifth find a lease they present broken now and then (the stress
  // tool's lease-lost fault): an intent's infinite lease fences nothing then.
  if (seed % 5 == 4) faults.lease_break = 0.3;
  return faults;
}

}  // namespace

RunStats RunSeed(uint64_t seed, bool verbose, std::ostream& out, const SimConfig& config) {
  RunStats stats;
  internal::FakeClock clock;
  SimScheduler sched(seed, clock, FaultsFor(seed, config));
  for (const char* p : kSyncPoints) internal::SyncPoints::Set(p, [&sched, p] { sched.Point(p); });
  World world(clock, sched);
  // Odd seeds mix commits as one batch (a second store on the directory)
  // with commits through the protocol.
  const bool mixed = !config.classic && seed % 2 == 1;
  if (Status s = world.Open(mixed); !s.ok()) {
    internal::SyncPoints::ClearAll();
    stats.violation = "opening the store: " + s.ToString();
    return stats;
  }
  std::mt19937_64 rng(seed);
  for (int k = 0; k < kNumKeys; ++k) {
    Version v;
    if (rng() % 2) v = "init" + std::to_string(k);
    // In mixed runs, some start as an atomic batch left them (stamped).
    Store& by = mixed && rng() % 2 ? *world.atomic() : world.protocol();
    if (!world.SetInitial(k, v, by).ok())
      stats.violation += "setting up " + KeyName(k) + " failed\n";
  }
  // Half the extended runs work on two keys only (one a partition): the
  // holes need several actors on the same entities at once.
  const bool hot = !config.classic && seed % 4 < 2;
  const int actors = 4, ops = config.classic ? 3 : 4;
  std::vector<std::unique_ptr<Actor>> all;
  ActorStats counts;
  for (int a = 0; a < actors; ++a) {
    all.push_back(std::make_unique<Actor>(a, seed, world, sched, world.atomic()));
    if (hot) all.back()->set_keys({0, 2});
    // Extended runs give each actor a role drawn from the seed: a reader
    // (a witness that settles nothing), a plain client, or anything.
    if (!config.classic) {
      static const Actor::Role kRoles[] = {Actor::Role::kMixed, Actor::Role::kMixed,
                                           Actor::Role::kReader, Actor::Role::kPlain};
      all.back()->set_role(kRoles[rng() % 4]);
      all.back()->set_think(milliseconds(20'000));
    }
    Actor* actor = all.back().get();
    sched.Spawn("actor" + std::to_string(a), /*killable=*/true,
                [actor, &counts, ops] { actor->Run(ops, counts); });
  }
  // A third of the extended runs have `Recover` run now and then, killable,
  // in another process whose wall clock is two hours ahead of the actors',
  // two hours behind, or the same (issue 54: a decision Recover took by its
  // own wall clock, and one it took while a coordinator waited in its first
  // round).
  std::unique_ptr<Actor> recoverer;
  if (!config.classic && seed % 3 == 1) {
    static const int kSkewHours[] = {2, -2, 0};
    const milliseconds skew = std::chrono::hours(kSkewHours[rng() % 3]);
    if (Status s = world.OpenRecoverer(skew); !s.ok())
      stats.violation += "opening the recoverer: " + s.ToString() + "\n";
    recoverer = std::make_unique<Actor>(actors, seed, world, sched, nullptr);
    Actor* r = recoverer.get();
    sched.Spawn("recover", /*killable=*/true, [r, &sched, seed] {
      std::mt19937_64 pauses(seed * 7919);
      for (int i = 0; i < 3; ++i) {
        sched.Sleep(milliseconds(static_cast<int64_t>(pauses() % 20'001)));
        r->Recover();
      }
    });
  }
  sched.Run();
  internal::SyncPoints::ClearAll();
  if (recoverer) stats.violation += recoverer->recover_errors();
  stats.ops = counts.ops;
  stats.txns = counts.txns;
  stats.violation += world.Finish();
  for (const HistEntry& e : world.history().entries())
    if (e.txn && e.outcome == HistEntry::Outcome::kOk) ++stats.committed;
  for (const auto& actor : all) stats.violation += actor->buffer_errors() + actor->fenced_at_work();
  stats.kills = sched.kills();
  stats.stalls = sched.stalls();
  stats.lost = sched.lost_responses();
  stats.jumps = sched.jumps();
  stats.breaks = sched.lease_breaks();
  if (verbose || !stats.violation.empty()) {
    out << "seed " << seed << ":\n"
        << (stats.violation.empty() ? world.Describe() : stats.violation);
    if (verbose) out << "schedule (last events):\n" << sched.Trace();
  }
  return stats;
}

RunStats RunSeeds(uint64_t first, uint64_t count, std::optional<uint64_t> verbose_seed,
                  std::ostream& out, std::vector<uint64_t>* failing, const SimConfig& config) {
  RunStats total;
  for (uint64_t seed = first; seed < first + count; ++seed) {
    RunStats s = RunSeed(seed, verbose_seed == seed, out, config);
    total.ops += s.ops;
    total.txns += s.txns;
    total.committed += s.committed;
    total.kills += s.kills;
    total.stalls += s.stalls;
    total.lost += s.lost;
    total.jumps += s.jumps;
    total.breaks += s.breaks;
    if (!s.violation.empty()) {
      failing->push_back(seed);
      if (total.violation.empty()) total.violation = s.violation;
    }
  }
  std::string seeds;
  for (uint64_t s : *failing) seeds += " " + std::to_string(s);
  out << "interleavings" << (config.classic ? " (classic)" : "") << ": seeds " << first << ".."
      << first + count - 1 << ", operations " << total.ops << " (transactions " << total.txns
      << ", committed " << total.committed << "), kills " << total.kills << ", stalls "
      << total.stalls << ", lost answers " << total.lost << ", clock steps " << total.jumps
      << ", leases broken " << total.breaks << ", violations " << failing->size()
      << (failing->empty() ? "" : ":") << seeds << "\n";
  return total;
}

}  // namespace blobtable::sim
