// SPDX-License-Identifier: Apache-2.0
// Search for interleavings that break the transaction guarantees
// (docs/transactions.md#randomized-interleavings): the randomized simulation of
// devtools/stress/sim/
// interleavings.h over many seeds, and the bounded-exhaustive search of
// small scenarios (exhaustive.h); both also `blobtable-stress --mode sim`.
//
//   BLOBTABLE_SIM_SEEDS=N      seeds 1..N (default 2100: CI)
//   BLOBTABLE_SIM_FIRST=K      start at seed K (default 1)
//   BLOBTABLE_SIM_SEED=S       just seed S, printing its schedule
//   BLOBTABLE_SIM_CLASSIC=1    the random simulation without its extensions
//   BLOBTABLE_SIM_EXHAUSTIVE=name[,name...]|all   scenarios to search (default: none)
//   BLOBTABLE_SIM_PREEMPTIONS=P, BLOBTABLE_SIM_FAULTS=F   bounds (default: the scenario's)
//   BLOBTABLE_SIM_MAX_SCHEDULES=N   stop a scenario after N schedules
//   BLOBTABLE_SIM_STOP_AT_FIRST=1   stop a scenario at its first violation
//   BLOBTABLE_SIM_SCHEDULE=i=c,... replay one schedule of the (one) scenario
//   BLOBTABLE_SIM_SAMPLE=N     instead of searching: N random schedules of each
//                              scenario named (seeds BLOBTABLE_SIM_FIRST..),
//                              BLOBTABLE_SIM_VERBOSE=1 printing each
#include <gtest/gtest.h>

#include <cstdlib>
#include <iostream>
#include <sstream>

#include "devtools/stress/sim/exhaustive.h"
#include "devtools/stress/sim/history_checker.h"
#include "devtools/stress/sim/interleavings.h"
#include "devtools/stress/sim/protocol_monitor.h"
#include "devtools/stress/sim/sim_scheduler.h"
#include "util/stored_format.h"
#include "txn/intent_resolver.h"
#include "testing/sync_point.h"

namespace blobtable::testing {
namespace {
using namespace internal;

int EnvInt(const char* name, int fallback) {
  const char* v = std::getenv(name);
  return v != nullptr && *v != '\0' ? std::atoi(v) : fallback;
}

std::string EnvString(const char* name) {
  const char* v = std::getenv(name);
  return v != nullptr ? v : "";
}

TEST(TxnInterleavingTest, RandomInterleavingsKeepEveryGuarantee) {
  if (!SyncPoints::Enabled()) GTEST_SKIP() << "sync points are compiled out (Release build)";
  const int only = EnvInt("BLOBTABLE_SIM_SEED", 0);
  const int first = only ? only : EnvInt("BLOBTABLE_SIM_FIRST", 1);
  const int count = only ? 1 : EnvInt("BLOBTABLE_SIM_SEEDS", 2100);
  if (count == 0) GTEST_SKIP() << "BLOBTABLE_SIM_SEEDS=0";
  sim::SimConfig config;
  config.classic = EnvInt("BLOBTABLE_SIM_CLASSIC", 0) != 0;
  std::vector<uint64_t> failing;
  sim::RunSeeds(static_cast<uint64_t>(first), static_cast<uint64_t>(count),
                only ? std::optional<uint64_t>(only) : std::nullopt, std::cout, &failing, config);
  std::string seeds;
  for (uint64_t s : failing) seeds += " " + std::to_string(s);
  EXPECT_TRUE(failing.empty()) << "seeds with violations:" << seeds
                               << " (rerun one with BLOBTABLE_SIM_SEED=<seed>)";
}

TEST(TxnInterleavingTest, ExhaustiveScenariosKeepEveryGuarantee) {
  std::string names = EnvString("BLOBTABLE_SIM_EXHAUSTIVE");
  if (names.empty()) GTEST_SKIP() << "set BLOBTABLE_SIM_EXHAUSTIVE=<scenario>[,...]|all";
  if (names == "all") {
    names.clear();
    for (const auto& [name, about] : sim::Scenarios()) names += (names.empty() ? "" : ",") + name;
  }
  sim::ExhaustiveOptions o;
  o.preemptions = EnvInt("BLOBTABLE_SIM_PREEMPTIONS", -1);
  o.faults = EnvInt("BLOBTABLE_SIM_FAULTS", -1);
  o.max_schedules = static_cast<uint64_t>(EnvInt("BLOBTABLE_SIM_MAX_SCHEDULES", 0));
  o.stop_at_first = EnvInt("BLOBTABLE_SIM_STOP_AT_FIRST", 0) != 0;
  const std::string replay = EnvString("BLOBTABLE_SIM_SCHEDULE");
  const int sampled = EnvInt("BLOBTABLE_SIM_SAMPLE", 0);
  std::stringstream list(names);
  std::string name;
  while (std::getline(list, name, ',')) {
    if (sampled > 0) {
      const int first = EnvInt("BLOBTABLE_SIM_FIRST", 1);
      sim::SampleResult r = sim::SampleScenario(
          name, first, sampled, EnvInt("BLOBTABLE_SIM_VERBOSE", 0) != 0, std::cout);
      EXPECT_EQ(r.violations, 0u) << name << ": the first failing seed, " << r.first_seed
                                  << " (again with BLOBTABLE_SIM_FIRST=" << r.first_seed
                                  << " BLOBTABLE_SIM_SAMPLE=1 BLOBTABLE_SIM_VERBOSE=1):\n"
                                  << r.first_violation;
      continue;
    }
    if (!replay.empty()) {
      EXPECT_EQ(sim::ReplaySchedule(name, replay, o, std::cout), "");
      continue;
    }
    sim::ExhaustiveResult r = sim::RunExhaustive(name, o, std::cout);
    EXPECT_EQ(r.violations, 0u) << name << ": the first failing schedule, " << r.first_schedule
                                << " (replay with BLOBTABLE_SIM_EXHAUSTIVE=" << name
                                << " BLOBTABLE_SIM_SCHEDULE=" << r.first_schedule << "):\n"
                                << r.first_violation;
  }
}

// The checker itself: what the simulation relies on it to see.
sim::HistEntry Entry(std::string who, uint64_t start, uint64_t end, std::vector<sim::HistOp> ops,
                     bool txn = false) {
  sim::HistEntry e;
  e.who = std::move(who);
  e.start = start;
  e.end = end;
  e.ops = std::move(ops);
  e.txn = txn;
  e.outcome = sim::HistEntry::Outcome::kOk;
  return e;
}

sim::HistOp Read(std::string key, sim::Version v) {
  sim::HistOp o;
  o.kind = sim::HistOp::Kind::kGet;
  o.key = std::move(key);
  o.observed = std::move(v);
  return o;
}

sim::HistOp Write(std::string key, std::string v) {
  sim::HistOp o;
  o.kind = sim::HistOp::Kind::kUpsert;
  o.key = std::move(key);
  o.value = std::move(v);
  return o;
}

TEST(HistoryCheckerTest, AReadThatGoesBackInRealTimeIsCaught) {
  sim::History h;
  h.SetInitial("b", "old");
  h.Add(Entry("writer", 1, 10, {Write("b", "new")}, true));
  h.Add(Entry("reader 1", 2, 5, {Read("b", "new")}));
  h.Add(Entry("reader 2", 6, 12, {Read("b", "old")}));  // began after reader 1 ended
  EXPECT_NE(h.Check(), "");
  h.at(2).start = 4;  // overlapping: either order
  EXPECT_EQ(h.Check(), "");
}

TEST(HistoryCheckerTest, ATornReadOnlyTransactionIsCaught) {
  sim::History h;
  h.SetInitial("a", "a0");
  h.SetInitial("b", "b0");
  h.Add(Entry("T1", 1, 10, {Write("a", "a1"), Write("b", "b1")}, true));
  h.Add(Entry("read-only", 2, 12, {Read("b", "b0"), Read("a", "a1")}, true));
  EXPECT_NE(h.Check(), "");
}

TEST(HistoryCheckerTest, AReadOnlyCycleIsCaught) {
  // T reads x, writes y; W writes x; R reads new x and old y; all overlap.
  sim::History h;
  h.SetInitial("x", "x0");
  h.SetInitial("y", "y0");
  h.Add(Entry("T", 1, 20, {Read("x", "x0"), Write("y", "y1")}, true));
  h.Add(Entry("W", 2, 5, {Write("x", "x1")}));
  h.Add(Entry("R", 6, 9, {Read("x", "x1"), Read("y", "y0")}, true));
  EXPECT_NE(h.Check(), "");
}

// The monitor accepts a finishing rewrite whose btsame is a list naming the
// intent (a write) or, for an intent that only reads, the version before it
// (H1 of docs/protocol.md); handle lists match any of their members.
TEST(ProtocolMonitorTest, AFinishingRewriteNamesItsVersionInAList) {
  EntityIntent i;
  i.txn_id = "t1";
  i.prev_exists = i.next_exists = true;
  i.prev_body = i.next_body = "body";
  i.prev_etag = "E0";
  BlobProperties cur;
  cur.etag = "E1";  // the intent's own ETag
  auto finishes = [&](const std::string& same, const std::string& stamp) {
    Metadata m{{kTxnMetadata, stamp}, {kSameAsMetadata, same}};
    return sim::ProtocolMonitor::FinishesCommitted(i, cur, "body", m);
  };
  EXPECT_TRUE(finishes("E1", "t1"));
  EXPECT_TRUE(finishes("E1 X", "t1"));
  EXPECT_FALSE(finishes("X E0", "t1")) << "a write's new version is named by the intent";
  EXPECT_FALSE(finishes("X Y", "t1"));
  EXPECT_FALSE(finishes("E1", "t2"));
  EXPECT_FALSE(finishes("E10", "t1"));
  i.reads_only = true;
  EXPECT_TRUE(finishes("E0 X", "t1"));
  EXPECT_FALSE(finishes("E1", "t1")) << "an entity only read keeps its version's handles";
  BlobProperties p;
  p.etag = "E2";
  p.metadata[kSameAsMetadata] = "E0 E1";
  EXPECT_TRUE(SameVersion(p, "E1"));
  EXPECT_TRUE(SameVersion(p, "E0"));
  EXPECT_FALSE(SameVersion(p, "E"));
  EXPECT_EQ(ContinuedHandles("E3", "E2 E0 E1 E9"), "E3 E2 E0 E1") << "at most four, newest first";
}

}  // namespace
}  // namespace blobtable::testing
