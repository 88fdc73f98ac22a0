// SPDX-License-Identifier: Apache-2.0
// The scenarios of the bounded-exhaustive search (exhaustive.h) and its
// depth-first driver. Each scenario is a few scripted actors over keys of
// sim_world.h (a = p0/a, b = p0/b, c = p1/c), with the faults that may
// happen and the bounds; the four named after the holes they were made to
// reach are the smallest workloads in which each can happen at all.
#include "devtools/stress/sim/exhaustive.h"

#include <chrono>
#include <functional>
#include <iostream>
#include <memory>
#include <random>

#include "devtools/stress/sim/sim_actor.h"
#include "devtools/stress/sim/sim_scheduler.h"
#include "devtools/stress/sim/sim_world.h"
#include "testing/fake_clock.h"

namespace blobtable::sim {
namespace {

using std::chrono::milliseconds;
using Plan = Actor::Plan;
constexpr int kA = 0, kB = 1, kC = 2;

struct ActorScript {
  std::string name;
  std::function<void(Actor&)> body;
};

struct Scenario {
  std::string name, about;
  bool atomic = false;                        // a second store committing as one batch
  std::vector<std::pair<int, bool>> initial;  // keys set up (true: by an atomic batch)
  ExploreBounds bounds;
  std::vector<ActorScript> actors;
};

// T reads a and writes c; W replaces a (as it read it); R reads a and c in
// a read-only transaction: a transaction that only read a must not commit
// after a was replaced under it (holes 2 and 3).
std::vector<ActorScript> ReadFenceActors() {
  return {
      {"T",
       [](Actor& a) {
         a.Txn(0, {{kA, Plan::kReadOnly}, {kC, Plan::kReadWrite}}, false);
       }},
      {"W",
       [](Actor& a) {
         a.Get(0, kA);
         a.Replace(1, kA);
       }},
      {"R",
       [](Actor& a) {
         a.Txn(0, {{kA, Plan::kReadOnly}, {kC, Plan::kReadOnly}}, false);
       }},
  };
}

std::vector<Scenario> AllScenarios() {
  std::vector<Scenario> all;
  {
    Scenario s;
    s.name = "late-abort";
    s.about = "hole 1: T writes b; W replaces b (any version); R reads b twice";
    s.initial = {{kB, false}};
    s.bounds.long_stall = true;
    s.bounds.preemptions = 2;
    s.bounds.faults = 3;
    s.actors = {
        {"T",
         [](Actor& a) {
           a.Txn(0, {{kB, Plan::kReadWrite}}, false);
         }},
        {"W", [](Actor& a) { a.Replace(0, kB); }},
        {"R",
         [](Actor& a) {
           a.Get(0, kB);
           a.Get(1, kB);
         }},
    };
    all.push_back(std::move(s));
  }
  {
    Scenario s;
    s.name = "read-fence";
    s.about = "hole 2: T reads a, writes c; W replaces a; R reads a and c; stalls";
    s.initial = {{kA, false}, {kC, false}};
    s.bounds.long_stall = true;
    s.bounds.preemptions = 1;
    s.bounds.faults = 2;
    s.actors = ReadFenceActors();
    all.push_back(std::move(s));
  }
  {
    Scenario s;
    s.name = "clock-step";
    s.about = "hole 3: as read-fence, with wall-clock steps instead of stalls";
    s.initial = {{kA, false}, {kC, false}};
    s.bounds.stall = false;
    s.bounds.jump = true;
    s.bounds.preemptions = 2;
    s.bounds.faults = 1;
    s.actors = ReadFenceActors();
    all.push_back(std::move(s));
  }
  {
    Scenario s;
    s.name = "own-rewrite";
    s.about =
        "issue 32: T reads b and a, writes b; U reads and writes b; one store, whose "
        "finishing's rewrites a commit holds only for the version it read";
    s.initial = {{kA, false}, {kB, false}};
    s.bounds.preemptions = 2;
    s.bounds.faults = 1;
    s.actors = {
        {"T",
         [](Actor& a) {
           a.Txn(0, {{kB, Plan::kReadWrite}, {kA, Plan::kReadOnly}}, false);
         }},
        {"U",
         [](Actor& a) {
           a.Txn(0, {{kB, Plan::kReadWrite}}, false);
         }},
    };
    all.push_back(std::move(s));
  }
  {
    Scenario s;
    s.name = "atomic-stamp";
    s.about =
        "hole 4: a written by an atomic batch; T reads a, writes c; U reads and writes a; "
        "W replaces a";
    s.atomic = true;
    s.initial = {{kA, true}, {kC, false}};
    s.bounds.preemptions = 2;
    s.bounds.faults = 1;
    s.actors = {
        {"T",
         [](Actor& a) {
           a.Txn(0, {{kA, Plan::kReadOnly}, {kC, Plan::kReadWrite}}, false);
         }},
        {"U",
         [](Actor& a) {
           a.Txn(0, {{kA, Plan::kReadWrite}}, false);
         }},
        {"W",
         [](Actor& a) {
           a.Get(0, kA);
           a.Replace(1, kA);
         }},
    };
    all.push_back(std::move(s));
  }
  {
    Scenario s;
    s.name = "reader-settle";
    s.about =
        "issue 29's false Conflict: T writes a, then writes it again; R reads a (and "
        "rewrites the decided intent it meets)";
    s.initial = {{kA, false}};
    s.bounds.preemptions = 3;
    s.bounds.faults = 0;
    s.actors = {
        {"T",
         [](Actor& a) {
           a.Txn(0, {{kA, Plan::kReadWrite}}, false);
           a.Txn(1, {{kA, Plan::kReadWrite}}, false);
         }},
        {"R", [](Actor& a) { a.Get(0, kA); }},
    };
    all.push_back(std::move(s));
  }
  {
    Scenario s;
    s.name = "marker";
    s.about =
        "issue 32 goal 4 (P1): T reads and writes a and c, killed anywhere; U writes a; "
        "Recover, which lists markers and not entities, must leave no leased intent";
    s.initial = {{kA, false}, {kC, false}};
    s.bounds.preemptions = 1;
    s.bounds.faults = 1;
    s.bounds.stall = false;
    s.bounds.kill = true;
    s.actors = {
        {"T",
         [](Actor& a) {
           a.Txn(0, {{kA, Plan::kReadWrite}, {kC, Plan::kReadWrite}}, false);
         }},
        {"U",
         [](Actor& a) {
           a.Txn(0, {{kA, Plan::kReadWrite}}, false);
         }},
    };
    all.push_back(std::move(s));
  }
  {
    Scenario s;
    s.name = "stripes";
    s.about =
        "issue 32 goal 1 (L2): T writes a, U writes b, both in partition p0 (one store: two "
        "lock stripes at once); W replaces a, then b; stalls past the leases";
    s.initial = {{kA, false}, {kB, false}};
    s.bounds.long_stall = true;
    s.bounds.preemptions = 1;
    s.bounds.faults = 1;
    s.actors = {
        {"T",
         [](Actor& a) {
           a.Txn(0, {{kA, Plan::kReadWrite}}, false);
         }},
        {"U",
         [](Actor& a) {
           a.Txn(0, {{kB, Plan::kReadWrite}}, false);
         }},
        {"W",
         [](Actor& a) {
           a.Replace(0, kA);
           a.Replace(1, kB);
         }},
    };
    all.push_back(std::move(s));
  }
  {
    Scenario s;
    s.name = "lease-break";
    s.about =
        "T writes b; W reads b and replaces it as read; R reads b twice; the lease a "
        "finishing presents may be found broken (a writer's undo decided before T's commit "
        "point must not land after it)";
    s.initial = {{kB, false}};
    s.bounds.stall = false;
    s.bounds.lease_break = true;
    s.bounds.preemptions = 2;
    s.bounds.faults = 1;
    s.actors = {
        {"T",
         [](Actor& a) {
           a.Txn(0, {{kB, Plan::kReadWrite}}, false);
         }},
        {"W",
         [](Actor& a) {
           a.Get(0, kB);
           a.Replace(1, kB);
         }},
        {"R",
         [](Actor& a) {
           a.Get(0, kB);
           a.Get(1, kB);
         }},
    };
    all.push_back(std::move(s));
  }
  {
    Scenario s;
    s.name = "retake";
    s.about =
        "issue 54, violation 1 (X1): T upserts a and merges into b, not read; U reads and "
        "writes a (busy in T's round 1, so T lets go of b and takes it again); W replaces b; "
        "R reads b: a version no history holds must never be read";
    s.initial = {{kA, false}, {kB, false}};
    s.bounds.aimed = true;
    s.bounds.preemptions = 2;
    s.bounds.faults = 2;
    s.actors = {
        {"U",
         [](Actor& a) {
           a.Txn(0, {{kA, Plan::kReadWrite}}, false);
         }},
        {"T",
         [](Actor& a) {
           a.Txn(0, {{kA, Plan::kBlindWrite}, {kB, Plan::kBlindMerge}}, false);
         }},
        {"W", [](Actor& a) { a.Replace(0, kB); }},
        {"R", [](Actor& a) { a.Get(0, kB); }},
    };
    all.push_back(std::move(s));
  }
  {
    Scenario s;
    s.name = "round1-recover";
    s.about =
        "issue 54, violation 3 (L2): T writes a and b; U reads and writes b (busy in T's round "
        "1, so T waits with its intent on a kept); Recover runs: it must leave a live "
        "coordinator alone (a Conflict naming an entity nobody wrote is flagged)";
    s.initial = {{kA, false}, {kB, false}};
    s.bounds.stall = false;
    s.bounds.preemptions = 2;
    s.bounds.faults = 0;
    s.actors = {
        {"U",
         [](Actor& a) {
           a.Txn(0, {{kB, Plan::kReadWrite}}, false);
         }},
        {"T",
         [](Actor& a) {
           a.Txn(0, {{kA, Plan::kReadWrite}, {kB, Plan::kReadWrite}}, false);
         }},
        {"Rec", [](Actor& a) { a.Recover(); }},
    };
    all.push_back(std::move(s));
  }
  return all;
}

const Scenario* Find(const std::vector<Scenario>& all, const std::string& name) {
  for (const Scenario& s : all)
    if (s.name == name) return &s;
  return nullptr;
}

ExploreBounds BoundsOf(const Scenario& s, const ExhaustiveOptions& o) {
  ExploreBounds b = s.bounds;
  if (o.preemptions >= 0) b.preemptions = o.preemptions;
  if (o.faults >= 0) b.faults = o.faults;
  return b;
}

// One run of `s` under `sched` (explored or random); its violation ("" if
// none). `start_after(i)`: how long actor i waits before it starts (the
// sampled runs spread the actors' starts; the explored ones start all at
// once). `heading` names the run's choices, for `verbose`.
std::string RunScenario(const Scenario& s, internal::FakeClock& clock, SimScheduler& sched,
                        const std::function<milliseconds(size_t)>& start_after,
                        const std::function<std::string()>& heading, std::ostream* verbose) {
  World world(clock, sched);
  // Reads go through Get and List: the scenarios' schedule counts, and the
  // holes and planted bugs they were shown to find (docs/transactions.md),
  // were measured so; reading in place adds points and moves them. The
  // random seeds read in place.
  if (Status st = world.Open(s.atomic, /*in_place_reads=*/false); !st.ok())
    return "opening the store: " + st.ToString();
  std::string violation;
  for (const auto& [k, by_batch] : s.initial) {
    Store& by = by_batch ? *world.atomic() : world.protocol();
    // Through transactions: the lock blobs exist from the start (fewer
    // points to search, none of them about the protocol).
    if (!world.SetInitial(k, "init" + std::to_string(k), by, /*via_txn=*/true).ok())
      violation += "setting up " + KeyName(k) + " failed\n";
  }
  std::vector<std::unique_ptr<Actor>> actors;
  for (size_t i = 0; i < s.actors.size(); ++i) {
    actors.push_back(std::make_unique<Actor>(static_cast<int>(i), 0, world, sched, world.atomic()));
    Actor* actor = actors.back().get();
    const auto& body = s.actors[i].body;
    const milliseconds start = start_after(i);
    sched.Spawn(s.actors[i].name, /*killable=*/true, [actor, &body, &sched, start] {
      if (start.count() > 0) sched.Sleep(start);
      body(*actor);
    });
  }
  sched.Run();
  violation += world.Finish();
  for (const auto& a : actors)
    violation += a->buffer_errors() + a->fenced_at_work() + a->recover_errors();
  if (verbose != nullptr) {
    *verbose << "scenario " << s.name << ", " << heading()
             << (violation.empty() ? world.Describe() : violation) << "trace (last events):\n"
             << sched.Trace();
  }
  return violation;
}

// One explored run of `s` under the choices of `log`.
std::string RunOnce(const Scenario& s, ChoiceLog& log, const ExploreBounds& bounds,
                    std::ostream* verbose) {
  internal::FakeClock clock;
  SimScheduler sched(log, clock, bounds);
  return RunScenario(
      s, clock, sched, [](size_t) { return milliseconds(0); },
      [&] { return "schedule " + log.Compact() + ":\n" + log.Describe(); }, verbose);
}

// The faults of a sampled run: stalls only in the protocol's windows (as
// ExploreBounds::aimed), each by chance, of 1 to 40 s (past the leases or
// not: a reader that must wake between a commit point and the end of the
// finishing waits less than a lease), and requests that take up to a
// second, so a stalled actor can wake between two requests of another.
SimFaults SampledFaults() {
  SimFaults f;
  f.stall_commit_point = 0.3;
  f.stall_abort_create = 0.3;
  f.stall_after_intent_read = 0.3;
  f.min_aimed = milliseconds(1'000);
  f.max_stall = milliseconds(40'000);
  f.latency = milliseconds(1'000);
  return f;
}

}  // namespace

std::vector<std::pair<std::string, std::string>> Scenarios() {
  std::vector<std::pair<std::string, std::string>> out;
  for (const Scenario& s : AllScenarios()) out.emplace_back(s.name, s.about);
  return out;
}

ExhaustiveResult RunExhaustive(const std::string& name, const ExhaustiveOptions& options,
                               std::ostream& out) {
  ExhaustiveResult r;
  r.scenario = name;
  const auto all = AllScenarios();
  const Scenario* s = Find(all, name);
  if (s == nullptr) {
    r.violations = 1;
    r.first_violation = "no scenario named " + name;
    out << r.first_violation << "\n";
    return r;
  }
  const ExploreBounds bounds = BoundsOf(*s, options);
  const auto started = std::chrono::steady_clock::now();
  std::vector<int> prefix;
  for (;;) {
    ChoiceLog log(prefix);
    std::string violation = RunOnce(*s, log, bounds, nullptr);
    ++r.schedules;
    if (!violation.empty()) {
      if (r.violations++ == 0) {
        r.first_schedule = log.Compact();
        r.first_violation = log.Describe() + violation;
      }
      if (options.stop_at_first) {
        r.complete = !log.Next().has_value();
        break;
      }
    }
    auto next = log.Next();
    if (!next) break;
    if (options.max_schedules != 0 && r.schedules >= options.max_schedules) {
      r.complete = false;
      break;
    }
    prefix = std::move(*next);
  }
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  out << "exhaustive " << name << " (preemptions " << bounds.preemptions << ", faults "
      << bounds.faults << "): schedules " << r.schedules << (r.complete ? "" : " (stopped)") << ", "
      << r.seconds << " s, violations " << r.violations;
  if (r.violations) out << ", first at schedule " << r.first_schedule;
  out << "\n";
  return r;
}

SampleResult SampleScenario(const std::string& name, uint64_t first, uint64_t count,
                            bool verbose, std::ostream& out) {
  SampleResult r;
  const auto all = AllScenarios();
  const Scenario* s = Find(all, name);
  if (s == nullptr) {
    r.violations = 1;
    r.first_violation = "no scenario named " + name;
    return r;
  }
  for (uint64_t seed = first; seed < first + count; ++seed) {
    internal::FakeClock clock;
    SimScheduler sched(seed, clock, SampledFaults());
    std::mt19937_64 starts(seed * 7919 + 1);
    std::string violation = RunScenario(
        *s, clock, sched, [&](size_t) { return milliseconds(starts() % 20'001); },
        [seed] { return "seed " + std::to_string(seed) + ":\n"; }, verbose ? &out : nullptr);
    ++r.seeds;
    if (!violation.empty() && r.violations++ == 0) {
      r.first_seed = seed;
      r.first_violation = violation;
    }
  }
  out << "sampled " << name << ": seeds " << first << ".." << first + count - 1 << ", violations "
      << r.violations;
  if (r.violations) out << ", the first at seed " << r.first_seed;
  out << "\n";
  return r;
}

std::string ReplaySchedule(const std::string& name, const std::string& schedule,
                           const ExhaustiveOptions& options, std::ostream& out) {
  const auto all = AllScenarios();
  const Scenario* s = Find(all, name);
  if (s == nullptr) return "no scenario named " + name;
  ChoiceLog log(schedule == "-" ? std::vector<int>{} : ChoiceLog::ParseSchedule(schedule));
  return RunOnce(*s, log, BoundsOf(*s, options), &out);
}

}  // namespace blobtable::sim
