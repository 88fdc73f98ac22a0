// SPDX-License-Identifier: Apache-2.0
// Short runs of blobtable-stress in CI, on each backend, with faults
// injected and workers killed: the tool reports no violation. Longer runs
// are the command in docs/testing.md#randomized-stress-with-history-checking.
#include <gtest/gtest.h>

#include "tests/azurite.h"
#include "tests/backend.h"
#include "tests/shell.h"
#include "tests/test_util.h"

namespace blobtable::testing {
namespace {

ShellRun Stress(const std::string& store, const std::string& args) {
  return Shell(std::string(BLOBTABLE_STRESS_PATH) + " --store " + Quote(store) + " " + args);
}

void ExpectClean(const ShellRun& run) {
  EXPECT_EQ(run.code, 0) << run.out << run.err;
  EXPECT_NE(run.out.find("violations: 0"), std::string::npos) << run.out << run.err;
  EXPECT_EQ(run.out.find(" 0 operations"), std::string::npos) << "it did nothing: " << run.out;
}

// A run on a fresh local store that finds no violation and whose summary
// never says `none_of` (e.g. " 0 claims lost": the workload did what it is
// there to do).
void ExpectCleanLocalRun(const std::string& args, const std::string& none_of) {
  TempDir dir;
  ShellRun run = Stress(dir.path(), args);
  ExpectClean(run);
  EXPECT_EQ(run.out.find(none_of), std::string::npos) << run.out;
}

TEST(StressTest, ListAppendOnTheLocalStoreWithFaultsAndKills) {
  TempDir dir;
  ExpectClean(Stress(dir.path(),
                     "--workload list-append --seconds 12 --round-seconds 6 "
                     "--faults 50 --kill-every 1.5 --clock-speed 10 --seed 1"));
}

TEST(StressTest, BankOnTheLocalStoreWithFaultsAndKills) {
  TempDir dir;
  ExpectClean(Stress(dir.path(),
                     "--workload bank --seconds 12 --round-seconds 6 --faults 100 "
                     "--kill-every 1.5 --clock-speed 10 --seed 2"));
}

// The coordination primitives under faults and kills: exactly one Complete
// of a queue item says OK and none is lost; lock tokens only go up and no
// fenced increment is lost.
TEST(StressTest, QueueOnTheLocalStoreWithFaultsAndKills) {
  ExpectCleanLocalRun(
      "--workload queue --seconds 6 --round-seconds 6 --faults 50 "
      "--kill-every 1.5 --clock-speed 10 --seed 6",
      "completes 0 ok");
}

TEST(StressTest, LockOnTheLocalStoreWithFaultsAndKills) {
  ExpectCleanLocalRun(
      "--workload lock --seconds 6 --round-seconds 6 --faults 50 "
      "--kill-every 1.5 --clock-speed 10 --seed 7",
      "; increments 0 ok");
}

// The same with a LeaderElection, its term the token (a planted term that
// stops rising is found in the first 20 s run: two acquisitions, one term).
TEST(StressTest, LeaderOnTheLocalStoreWithFaultsAndKills) {
  ExpectCleanLocalRun(
      "--workload leader --seconds 6 --round-seconds 6 --faults 50 "
      "--kill-every 1.5 --clock-speed 10 --seed 10",
      "; increments 0 ok");
}

// Secondary indexes under faults and kills (docs/indexes.md): at the end
// every entity has exactly its entries and no unique value is held twice.
// Six processes at full rate, so that claims of one value race (a unique
// claim left unchecked at commit is found in 4 of 4 seeds this way).
TEST(StressTest, IndexOnTheLocalStoreWithFaultsAndKills) {
  ExpectCleanLocalRun(
      "--workload index --seconds 12 --round-seconds 6 --faults 50 "
      "--kill-every 1.5 --clock-speed 10 --processes 6 --rate 0 --seed 8",
      " 0 refused as duplicate");
}

// Issue 55, item 10: six processes claim one value of a unique index each
// second, every commit through the protocol; each contest ends with one
// holder and the losers told whom they lost to (a plain write that lost
// the race itself runs again). Planted: with the rule before (only a
// changed read ran again) a loser said "written by another client during
// the commit" in the first round.
TEST(StressTest, SixWritersRacingForOneUniqueValueThroughTheProtocol) {
  ExpectCleanLocalRun(
      "--workload unique-race --commit coordinator --processes 6 "
      "--seconds 8 --round-seconds 8 --seed 9",
      " 0 claims lost with Conflict");
}

// Soak: no kills; every worker's resident memory and open descriptors after
// warm-up and at the end are reported, and must not grow.
TEST(StressTest, SoakKeepsMemoryAndDescriptorsFlat) {
  TempDir dir;
  ShellRun run = Stress(dir.path(),
                        "--workload list-append --seconds 10 --round-seconds 10 "
                        "--faults 100 --soak --clock-speed 10 --seed 5");
  ExpectClean(run);
  EXPECT_NE(run.out.find("stress: soak: worker 0/0: rss "), std::string::npos) << run.out;
  EXPECT_EQ(run.out.find("GREW"), std::string::npos) << run.out;
}

TEST(StressTest, ListAppendOnAzuriteWithTheCacheFaultsAndKills) {
  Azurite* a = Azurite::Get();
  ASSERT_NE(a, nullptr);
  ExpectClean(Stress(a->ConnectionString(), "--container " + FreshContainer("stress") +
                                                " --workload list-append --cache --seconds 15 "
                                                "--round-seconds 15 --faults 100 --kill-every 6 "
                                                "--seed 3"));
}

// Faults in the network too: the workers reach Azurite through the fault
// proxy (answers lost, connections reset mid-request and mid-response,
// stalls), so the Azure backend's retries and write ids are under test.
TEST(StressTest, BankOnAzuriteThroughTheFaultProxyWithKills) {
  Azurite* a = Azurite::Get();
  ASSERT_NE(a, nullptr);
  ExpectClean(Stress(a->ConnectionString(), "--container " + FreshContainer("stress") +
                                                " --workload bank --seconds 15 --round-seconds 15 "
                                                "--faults 200 --proxy-faults 40 --kill-every 6 "
                                                "--seed 4"));
}

TEST(StressTest, IndexOnAzuriteWithTheCacheFaultsAndKills) {
  Azurite* a = Azurite::Get();
  ASSERT_NE(a, nullptr);
  ExpectClean(Stress(a->ConnectionString(), "--container " + FreshContainer("stress") +
                                                " --workload index --cache --seconds 15 "
                                                "--round-seconds 15 --faults 100 --proxy-faults 40 "
                                                "--kill-every 6 --processes 4 --seed 9"));
}

}  // namespace
}  // namespace blobtable::testing
