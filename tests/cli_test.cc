// SPDX-License-Identifier: Apache-2.0
// The blobtable CLI, run as a separate binary: output, JSON form and exit codes.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

#include <signal.h>
#include <sys/stat.h>

#include "tests/shell.h"
#include "tests/test_util.h"
#include "blobtable/leader.h"
#include "blobtable/lock.h"
#include "blobtable/store.h"
#include "coord/coord_names.h"
#include "tools/bulk.h"
#include "util/base64.h"
#include "tools/bulk.h"
#include "tools/cli.h"
#include "tools/entity_json.h"

namespace blobtable {
namespace {

using json = nlohmann::json;

using testing::Quote;
using CliRun = testing::ShellRun;

class CliTest : public ::testing::Test {
 protected:
  // Runs `blobtable --store <dir> args...` with `stdin_text` on stdin.
  CliRun Cli(const std::string& args, const std::string& stdin_text = "") {
    return testing::Shell(
        std::string(BLOBTABLE_CLI_PATH) + " --store " + Quote(dir_.path() + "/db") + " " + args,
        stdin_text);
  }
  testing::TempDir dir_;
};

TEST_F(CliTest, PutPrintsStoredEntityAndGetReadsItBack) {
  CliRun put =
      Cli("put orders",
          R"({"PartitionKey":"c 42","RowKey":"o.1","total":99.5,"items":3,"ok":true,"whole":12.0,
                    "big":"9007199254740993","big@odata.type":"Edm.Int64",
                    "raw":"AAEC","raw@odata.type":"Edm.Binary",
                    "id":"0f8fad5b-d9cb-469f-a165-70867728950e","id@odata.type":"Edm.Guid",
                    "at":"2024-05-01T12:00:00Z","at@odata.type":"Edm.DateTime"})");
  ASSERT_EQ(put.code, 0) << put.err;
  json stored = json::parse(put.out);
  EXPECT_FALSE(stored["odata.etag"].get<std::string>().empty());
  EXPECT_EQ(stored["Timestamp@odata.type"], "Edm.DateTime");
  EXPECT_EQ(stored["big"], "9007199254740993");
  EXPECT_EQ(stored["big@odata.type"], "Edm.Int64");
  EXPECT_EQ(stored["raw"], "AAEC");
  EXPECT_EQ(stored["at"], "2024-05-01T12:00:00.0000000Z");
  EXPECT_EQ(stored["items"], 3);
  EXPECT_EQ(stored["total"], 99.5);
  EXPECT_TRUE(stored["whole"].is_number_float());  // a Double, though integral
  EXPECT_EQ(stored["whole@odata.type"], "Edm.Double");
  EXPECT_EQ(stored["total@odata.type"], "Edm.Double");
  EXPECT_FALSE(stored.contains("items@odata.type"));  // Int32: the JSON integer says it
  CliRun get = Cli("get orders 'c 42' o.1");
  ASSERT_EQ(get.code, 0) << get.err;
  EXPECT_EQ(json::parse(get.out), stored);
}

// Issue 30: `get` printed an integral Double as 121.0 with no type; jq 1.6
// prints it back as 121, and `put` stored an Int32: the type changed
// silently and a filter on 100.0 stopped matching. Every Double is
// annotated now, so the value keeps its type through such a tool.
TEST_F(CliTest, ADoubleKeepsItsTypeThroughAToolThatDropsItsFraction) {
  ASSERT_EQ(Cli("put orders", R"({"PartitionKey":"p","RowKey":"r","total":121.0})").code, 0);
  CliRun got = Cli("get orders p r");
  ASSERT_EQ(got.code, 0) << got.err;
  json edited = json::parse(got.out);
  edited["total"] = 121;  // what jq 1.6 prints for 121.0
  edited.erase("odata.etag");
  ASSERT_EQ(Cli("put orders --mode replace", edited.dump()).code, 0);
  CliRun after = Cli("get orders p r");
  ASSERT_EQ(after.code, 0) << after.err;
  json stored = json::parse(after.out);
  EXPECT_EQ(stored["total@odata.type"], "Edm.Double") << after.out;
  CliRun matched = Cli("query orders --filter 'total ge 100.0'");
  ASSERT_EQ(matched.code, 0) << matched.err;
  EXPECT_NE(matched.out.find("\"RowKey\":\"r\""), std::string::npos) << matched.out;
}

TEST_F(CliTest, ExitCodesAreTheDocumentedOnes) {
  const std::string e = R"({"PartitionKey":"p","RowKey":"r","n":1})";
  EXPECT_EQ(Cli("put t1x", e).code, 0);
  CliRun dup = Cli("put t1x", e);
  EXPECT_EQ(dup.code, 4);
  EXPECT_NE(dup.err.find("already exists"), std::string::npos) << dup.err;
  EXPECT_NE(dup.err.find("RowKey 'r'"), std::string::npos) << dup.err;
  EXPECT_EQ(Cli("get t1x p missing").code, 3);
  EXPECT_EQ(Cli("delete t1x p missing").code, 3);
  EXPECT_EQ(Cli("put t1x --mode replace --if-match '\"0xstale\"'", e).code, 4);
  EXPECT_EQ(Cli("put t1x", "{not json").code, 2);
  EXPECT_EQ(Cli("put t1x", R"({"PartitionKey":"p","RowKey":"a/b"})").code, 2);
  EXPECT_EQ(Cli("put t1x", R"({"PartitionKey":"p","RowKey":"r2","n":4294967296})").code, 2);
  EXPECT_EQ(Cli("put t1x --mode sideways", e).code, 2);
  EXPECT_EQ(Cli("frobnicate").code, 2);
  EXPECT_EQ(Cli("get t1x p").code, 2);
  EXPECT_EQ(Cli("query t1x --top zero").code, 2);
  EXPECT_EQ(Cli("get bad-table p r").code, 2);
  EXPECT_EQ(Cli("--bogus get t1x p r").code, 2);
  CliRun big = Cli("put t1x",
                   R"({"PartitionKey":"p","RowKey":"big","s":")" + std::string(40000, 'x') + "\"}");
  EXPECT_EQ(big.code, 2);
  EXPECT_NE(big.err.find("32768"), std::string::npos) << big.err;
}

TEST_F(CliTest, ReplaceUsesTheInputETagAndModesBehave) {
  CliRun v1 = Cli("put t2x", R"({"PartitionKey":"p","RowKey":"r","a":1,"b":2})");
  ASSERT_EQ(v1.code, 0) << v1.err;
  json edited = json::parse(v1.out);
  edited["a"] = 10;
  edited.erase("b");
  // odata.etag from the input makes replace conditional...
  CliRun replaced = Cli("put t2x --mode replace", edited.dump());
  ASSERT_EQ(replaced.code, 0) << replaced.err;
  // ...so replaying the same edit now conflicts.
  EXPECT_EQ(Cli("put t2x --mode replace", edited.dump()).code, 4);
  CliRun merged = Cli("put t2x --mode merge", R"({"PartitionKey":"p","RowKey":"r","c":3})");
  ASSERT_EQ(merged.code, 0) << merged.err;
  json m = json::parse(merged.out);
  EXPECT_EQ(m["a"], 10);
  EXPECT_EQ(m["c"], 3);
  EXPECT_FALSE(m.contains("b"));
  EXPECT_EQ(Cli("put t2x --mode upsert", R"({"PartitionKey":"p","RowKey":"u"})").code, 0);
  EXPECT_EQ(Cli("put t2x --mode upsert-merge", R"({"PartitionKey":"p","RowKey":"u","x":1})").code,
            0);
  std::string etag = json::parse(Cli("get t2x p u").out)["odata.etag"];
  EXPECT_EQ(Cli("delete t2x p u --if-match '\"0xother\"'").code, 4);
  EXPECT_EQ(Cli("delete t2x p u --if-match " + Quote(etag)).code, 0);
}

TEST_F(CliTest, QueryPrintsOneEntityPerLineInOrder) {
  for (const char* rk : {"c", "a", "e", "b", "d"})
    ASSERT_EQ(Cli("put t3x", std::string(R"({"PartitionKey":"p","RowKey":")") + rk + "\"}").code,
              0);
  ASSERT_EQ(Cli("put t3x", R"({"PartitionKey":"q","RowKey":"a"})").code, 0);
  auto rows = [](const std::string& out) {
    std::vector<std::string> keys;
    std::istringstream lines(out);
    for (std::string line; std::getline(lines, line);) {
      json j = json::parse(line);
      keys.push_back(j["PartitionKey"].get<std::string>() + j["RowKey"].get<std::string>());
    }
    return keys;
  };
  EXPECT_EQ(rows(Cli("query t3x --pk p").out),
            (std::vector<std::string>{"pa", "pb", "pc", "pd", "pe"}));
  EXPECT_EQ(rows(Cli("query t3x --pk p --rk-from b --rk-to d").out),
            (std::vector<std::string>{"pb", "pc", "pd"}));
  EXPECT_EQ(rows(Cli("query t3x --limit 2").out), (std::vector<std::string>{"pa", "pb"}));
  // --top is the page size, as in the API: every row still comes, 2 a page.
  EXPECT_EQ(rows(Cli("query t3x --top 2").out).size(), 6u);
  EXPECT_EQ(rows(Cli("query t3x --top 2 --limit 3").out),
            (std::vector<std::string>{"pa", "pb", "pc"}));
  EXPECT_EQ(Cli("query t3x --top 1001").code, 2);
  EXPECT_EQ(rows(Cli("query t3x").out).size(), 6u);
  EXPECT_EQ(rows(Cli("query t3x --rk-prefix a").out), (std::vector<std::string>{"pa", "qa"}));
  EXPECT_EQ(Cli("query empty").out, "");
}

TEST_F(CliTest, GetAndQueryPrintJsonLinesJsonOrATable) {
  ASSERT_EQ(Cli("put fmt", R"({"PartitionKey":"p","RowKey":"a","n":5,"s":"two\nlines"})").code, 0);
  ASSERT_EQ(Cli("put fmt", R"({"PartitionKey":"p","RowKey":"b","x":1.5})").code, 0);
  CliRun array = Cli("query fmt --format json");
  ASSERT_EQ(array.code, 0) << array.err;
  json all = json::parse(array.out);
  ASSERT_TRUE(all.is_array());
  ASSERT_EQ(all.size(), 2u);
  EXPECT_EQ(all[1]["x"], 1.5);
  EXPECT_EQ(json::parse(Cli("query fmt --format json --filter \"n eq 7\"").out), json::array());
  CliRun table = Cli("query fmt --format table");
  ASSERT_EQ(table.code, 0) << table.err;
  EXPECT_EQ(table.out,
            "PartitionKey  RowKey  n  s           x\n"
            "p             a       5  two\\nlines\n"
            "p             b                      1.5\n");
  CliRun pretty = Cli("get fmt p a --format json");
  ASSERT_EQ(pretty.code, 0) << pretty.err;
  EXPECT_NE(pretty.out.find("\n  \"RowKey\": \"a\""), std::string::npos) << pretty.out;
  EXPECT_EQ(json::parse(pretty.out)["n"], 5);
  EXPECT_EQ(Cli("get fmt p a --format table").out,
            "PartitionKey  RowKey  n  s\n"
            "p             a       5  two\\nlines\n");
  EXPECT_EQ(Cli("get fmt p a --format yaml").code, 2);
}

TEST_F(CliTest, OnlyWritesCreateAStore) {
  const std::string db = dir_.path() + "/db";
  for (const char* read : {"get orders p r", "query orders", "export orders --quiet",
                           "delete orders p r", "locate orders p", "recover",
                           "check" /* made a store and said it clean (the review of issue 55) */}) {
    CliRun r = Cli(read);
    EXPECT_EQ(r.code, 3) << read << ": " << r.err;
    EXPECT_NE(r.err.find("no store at " + db), std::string::npos) << r.err;
    EXPECT_FALSE(std::filesystem::exists(db)) << read << " made the store";
  }
  EXPECT_EQ(Cli("delete orders p r --ignore-missing").code, 0);
  const std::string e = R"({"PartitionKey":"p","RowKey":"r"})";
  CliRun refused = Cli("put orders --no-create", e);
  EXPECT_EQ(refused.code, 3);
  EXPECT_NE(refused.err.find("--no-create"), std::string::npos) << refused.err;
  EXPECT_EQ(Cli("put bad/name", e).code, 2);
  EXPECT_FALSE(std::filesystem::exists(db));
  ASSERT_EQ(Cli("put orders", e).code, 0);  // a write makes it
  EXPECT_EQ(Cli("get orders p r").code, 0);
  EXPECT_EQ(Cli("put orders --no-create --mode upsert", e).code, 0);  // it exists now
  EXPECT_EQ(Cli("delete orders p r").code, 0);
  EXPECT_EQ(Cli("delete orders p r").code, 3);
  EXPECT_EQ(Cli("delete orders p r --ignore-missing").code, 0);
}

TEST_F(CliTest, LockRunsTheCommandHoldingTheLock) {
  CliRun first = Cli("lock nightly -- sh -c 'echo $BLOBTABLE_LOCK_TOKEN; exit 3'");
  EXPECT_EQ(first.code, 3) << first.err;  // the command's
  EXPECT_EQ(first.out, "1\n");
  EXPECT_EQ(Cli("lock nightly -- sh -c 'echo $BLOBTABLE_LOCK_TOKEN'").out, "2\n");
  CliRun missing = Cli("lock nightly -- /nonexistent/command");  // as a shell says it
  EXPECT_EQ(missing.code, 127);
  EXPECT_NE(missing.err.find("cannot run '/nonexistent/command': No such file"), std::string::npos)
      << missing.err;
  EXPECT_EQ(Cli("lock nightly").code, 2);  // no command
  // Held by another client: one try fails with exit 5, and the command never runs.
  auto store = Store::Open(dir_.path() + "/db");
  ASSERT_TRUE(store.ok());
  {
    auto held = Lock::Acquire(**store, "nightly");
    ASSERT_TRUE(held.ok());
    CliRun busy = Cli("lock nightly --timeout 0 -- echo ran");
    EXPECT_EQ(busy.code, 5);
    EXPECT_EQ(busy.out, "");
    EXPECT_NE(busy.err.find("LockTimeout"), std::string::npos) << busy.err;
    // Told apart from a command's own exit 5, as flock -E does.
    EXPECT_EQ(Cli("lock nightly --timeout 0 --conflict-exit-code 75 -- echo ran").code, 75);
  }
  EXPECT_EQ(Lock::Inspect(**store, "nightly")->token, 4);
}

TEST_F(CliTest, LockStopsTheCommandWhenTheLockIsLost) {
  const std::string fifo = dir_.path() + "/started";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  CliRun run{};
  std::thread cli([&] {
    run = Cli("lock job --lease 15 -- sh -c 'echo started > " + fifo + "; exec sleep 60'");
  });
  {
    std::ifstream started(fifo);  // opens once the command holds the lock and writes
    std::string line;
    EXPECT_TRUE(std::getline(started, line));  // (no ASSERT: the thread must be joined)
    EXPECT_EQ(line, "started");
  }
  auto store = Store::Open(dir_.path() + "/db");
  EXPECT_TRUE(store.ok());
  // Someone breaks the lease: the next renewal (within 5 s) finds it gone.
  if (store.ok()) {
    EXPECT_TRUE(
        (*store)->blob_store().BreakLease(internal::coord::LockBlobName("job"), 0, {}).ok());
  }
  cli.join();
  EXPECT_EQ(run.code, 128 + SIGTERM) << run.err;
  EXPECT_NE(run.err.find("lock job lost"), std::string::npos) << run.err;
}

TEST_F(CliTest, LeaderRunsTheCommandOnlyWhileLeader) {
  CliRun first = Cli("leader sched -- sh -c 'echo $BLOBTABLE_LEADER_TERM; exit 4'");
  EXPECT_EQ(first.code, 4) << first.err;
  EXPECT_EQ(first.out, "1\n");
  EXPECT_EQ(Cli("leader sched -- sh -c 'echo $BLOBTABLE_LEADER_TERM'").out, "2\n");
  auto store = Store::Open(dir_.path() + "/db");
  ASSERT_TRUE(store.ok());
  {
    LeaderOptions o;
    o.identity = "the test";
    auto leading = LeaderElection::Start(**store, "sched", o);
    ASSERT_TRUE(leading.ok());
    ASSERT_TRUE((*leading)->WaitForLeadership(std::chrono::seconds(30)));
    CliRun waiting = Cli("leader sched --timeout 0.5 -- echo ran");
    EXPECT_EQ(waiting.code, 5);
    EXPECT_EQ(waiting.out, "");
  }  // resigned
  EXPECT_EQ(Cli("leader sched --timeout 30 -- sh -c 'echo $BLOBTABLE_LEADER_TERM'").out, "4\n");
  // The CLI's default identity, host:pid.
  EXPECT_NE(LeaderElection::Current(**store, "sched")->identity.find(':'), std::string::npos);
}

TEST_F(CliTest, QueuePutTakeDoneAbandonList) {
  EXPECT_EQ(Cli("queue list jobs").code, 3);  // no store: reads make none
  CliRun put = Cli("queue put jobs 'resize photo-1'");
  ASSERT_EQ(put.code, 0) << put.err;
  ASSERT_EQ(Cli("queue put jobs", "from stdin").code, 0);
  CliRun take = Cli("queue take jobs --visibility 20");
  ASSERT_EQ(take.code, 0) << take.err;
  json item = json::parse(take.out);
  EXPECT_EQ(item["dequeue_count"], 1);
  const std::string id = item["id"], lease = item["lease"];
  CliRun other = Cli("queue take jobs");
  ASSERT_EQ(other.code, 0);
  EXPECT_NE(json::parse(other.out)["id"], id);  // the taken one is invisible
  EXPECT_EQ(Cli("queue take jobs").code, 9);    // none visible now
  EXPECT_EQ(Cli("queue abandon jobs " + id + " " + lease).code, 0);
  std::string listed = Cli("queue list jobs").out;
  EXPECT_NE(listed.find("\"id\":\"" + id + "\",\"dequeue_count\":1,\"taken\":false"),
            std::string::npos)
      << listed;
  json again = json::parse(Cli("queue take jobs").out);
  EXPECT_EQ(again["id"], id);
  EXPECT_EQ(Cli("queue done jobs " + id + " " + lease).code, 1);  // the old delivery's lease
  EXPECT_EQ(Cli("queue done jobs " + id + " " + again["lease"].get<std::string>()).code, 0);
  EXPECT_EQ(Cli("queue list jobs --dead").out, "");
}

TEST_F(CliTest, CounterAddsAndGets) {
  EXPECT_EQ(Cli("counter get visits").code, 3);  // no store yet: reads make none
  EXPECT_EQ(Cli("counter add visits").out, "1\n");
  EXPECT_EQ(Cli("counter add visits 5").out, "6\n");
  EXPECT_EQ(Cli("counter add visits -- -2").out, "4\n");
  EXPECT_EQ(Cli("counter add visits 10 --shards 4").out, "14\n");  // the total, all shards
  EXPECT_EQ(Cli("counter get visits").out, "14\n");
  EXPECT_EQ(Cli("counter get other").out, "0\n");
  // An add without --shards on a counter with more prints the total too,
  // not the shard it went to.
  EXPECT_EQ(Cli("counter add visits 1").out, "15\n");
  EXPECT_EQ(Cli("counter add visits -1").out, "14\n");
  EXPECT_EQ(Cli("counter add visits x").code, 2);
  EXPECT_EQ(Cli("counter add visits 1 --shards 65").code, 2);
  CliRun too_big = Cli("counter add visits 99999999999999999999");  // not clamped to int64
  EXPECT_EQ(too_big.code, 2);
  EXPECT_NE(too_big.err.find("out of range"), std::string::npos) << too_big.err;
  EXPECT_EQ(Cli("counter get visits").out, "14\n");
}

TEST_F(CliTest, HelpAfterAnyCommandShowsThatCommandsHelp) {
  for (const char* command : {"put", "get", "delete", "query", "export", "import", "locate", "txn",
                              "recover", "check", "cache", "lock", "leader", "counter", "queue", "count", "tables", "drop", "stats",
                              "backup", "restore", "compact"}) {
    for (const std::string& args :
         {std::string(command) + " --help", std::string(command) + " orders --help"}) {
      CliRun r = Cli(args);
      EXPECT_EQ(r.code, 0) << args << ": " << r.err;
      EXPECT_NE(r.out.find(std::string("Usage: blobtable ") + command), std::string::npos)
          << args << ": " << r.out;
    }
  }
}

TEST_F(CliTest, QueryFiltersAndSelects) {
  for (int n = 1; n <= 5; ++n)
    ASSERT_EQ(Cli("put f1x", R"({"PartitionKey":"p","RowKey":"r)" + std::to_string(n) +
                                 R"(","n":)" + std::to_string(n) + R"(,"s":"x"})")
                  .code,
              0);
  CliRun r = Cli("query f1x --filter \"n ge 2 and n lt 4 or RowKey eq 'r5'\" --select n");
  ASSERT_EQ(r.code, 0) << r.err;
  std::vector<int> ns;
  std::istringstream lines(r.out);
  for (std::string line; std::getline(lines, line);) {
    json j = json::parse(line);
    EXPECT_FALSE(j.contains("s")) << line;
    ns.push_back(j["n"].get<int>());
  }
  EXPECT_EQ(ns, (std::vector<int>{2, 3, 5}));
  CliRun bad = Cli("query f1x --filter \"n gt\"");
  EXPECT_EQ(bad.code, 2) << bad.err;
  EXPECT_NE(bad.err.find("at 5"), std::string::npos) << bad.err;
}

// export prints every row in the form `get` prints; import reads it back.
TEST_F(CliTest, ExportThenImportCopiesATable) {
  std::string lines;
  for (int n = 0; n < 40; ++n)
    lines += R"({"PartitionKey":"p)" + std::to_string(n % 3) + R"(","RowKey":"r)" +
             std::to_string(100 + n) + R"(","n":)" + std::to_string(n) +
             R"(,"Big":"9007199254740993","Big@odata.type":"Edm.Int64"})" + "\n";
  CliRun in = Cli("import src", lines);
  ASSERT_EQ(in.code, 0) << in.err;
  EXPECT_NE(in.err.find("import: 40 rows"), std::string::npos) << in.err;
  EXPECT_NE(in.err.find("40 written, 0 skipped (existing), 0 failed"), std::string::npos) << in.err;

  CliRun out = Cli("export src");
  ASSERT_EQ(out.code, 0) << out.err;
  EXPECT_NE(out.err.find("export: 40 rows"), std::string::npos) << out.err;
  CliRun copy = Cli("import dst --quiet", out.out);
  ASSERT_EQ(copy.code, 0) << copy.err;
  EXPECT_EQ(copy.err, "") << "--quiet: no summary";
  CliRun again = Cli("export dst --quiet");
  EXPECT_EQ(again.err, "");
  // The same rows, the same properties (ETags and Timestamps are the new store's).
  auto strip = [](const std::string& jsonl) {
    std::vector<json> rows;
    std::istringstream ls(jsonl);
    for (std::string l; std::getline(ls, l);) {
      json j = json::parse(l);
      j.erase("odata.etag");
      j.erase("Timestamp");
      rows.push_back(j);
    }
    return rows;
  };
  EXPECT_EQ(strip(again.out), strip(out.out));
  EXPECT_EQ(strip(out.out).size(), 40u);

  CliRun some = Cli("export src --pk p1 --filter \"n ge 30\"");
  ASSERT_EQ(some.code, 0) << some.err;
  EXPECT_EQ(strip(some.out).size(), 3u);  // n = 31, 34, 37
}

// An export of a known RowKey range estimates its progress by key.
TEST(BulkTest, RangeFractionPlacesAKeyInItsRange) {
  using cli::RangeFraction;
  EXPECT_DOUBLE_EQ(RangeFraction("order-0000", "order-9999", "order-0000"), 0.0);
  EXPECT_DOUBLE_EQ(RangeFraction("order-0000", "order-9999", "order-9999"), 1.0);
  const double mid = RangeFraction("order-0000", "order-9999", "order-5000");
  EXPECT_GT(mid, 0.5);
  EXPECT_LT(mid, 0.6);
  EXPECT_LT(RangeFraction("a", "z", "c"), RangeFraction("a", "z", "m"));
  EXPECT_DOUBLE_EQ(RangeFraction("b", "y", "a"), 0.0) << "before the range";
  EXPECT_DOUBLE_EQ(RangeFraction("b", "y", "zz"), 1.0) << "after it";
  EXPECT_DOUBLE_EQ(RangeFraction("same", "same", "same"), 0.0);
}

// On a terminal (script(1) gives the CLI one), export shows its progress,
// with how far through a known RowKey range it is.
TEST_F(CliTest, ExportShowsProgressOnATerminal) {
  std::string lines;
  for (int n = 0; n < 20; ++n)
    lines += R"({"PartitionKey":"p","RowKey":"r)" + std::to_string(10 + n) +
             R"("})"
             "\n";
  ASSERT_EQ(Cli("import prg --quiet", lines).code, 0);
  const std::string cli = std::string(BLOBTABLE_CLI_PATH) + " --store " +
                          Quote(dir_.path() + "/db") +
                          " export prg --pk p --rk-from r10 --rk-to r29 >/dev/null";
  testing::ShellRun r = testing::Shell("script -qec " + Quote(cli) + " /dev/null");
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("% of the range"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("export: 20 rows"), std::string::npos) << r.out;
  EXPECT_EQ(Cli("export prg --pk p --rk-from r10 --rk-to r29").err.find("% of the range"),
            std::string::npos)
      << "not a terminal: the summary only";
}

TEST_F(CliTest, ImportReportsEachBadLineAndGoesOn) {
  const std::string input = R"({"PartitionKey":"p","RowKey":"a"})"
                            "\n"
                            "not json\n"
                            "\n"
                            R"({"PartitionKey":"p"})"
                            "\n"
                            R"({"PartitionKey":"p","RowKey":"b"})"
                            "\n";
  CliRun r = Cli("import imp --parallel 2", input);
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_NE(r.err.find("line 2: "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("line 4: "), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("line 1: "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("2 written, 0 skipped (existing), 2 failed"), std::string::npos) << r.err;
  EXPECT_EQ(Cli("get imp p b").code, 0) << "the good rows after a bad one are written";

  // insert: rows already there are skipped, not failures (a rerun).
  CliRun rerun = Cli("import imp --mode insert", input);
  EXPECT_NE(rerun.err.find("0 written, 2 skipped (existing), 2 failed"), std::string::npos)
      << rerun.err;
  CliRun clean = Cli("import imp --mode insert", R"({"PartitionKey":"p","RowKey":"a"})"
                                                 "\n"
                                                 R"({"PartitionKey":"p","RowKey":"c"})"
                                                 "\n");
  EXPECT_EQ(clean.code, 0) << clean.err;
  EXPECT_NE(clean.err.find("1 written, 1 skipped (existing), 0 failed"), std::string::npos)
      << clean.err;

  // replace needs the row; --stop-on-error stops after the first failure.
  CliRun missing = Cli("import imp --mode replace --stop-on-error --parallel 1",
                       R"({"PartitionKey":"p","RowKey":"zz"})"
                       "\n"
                       "bad\n");
  EXPECT_EQ(missing.code, 3) << missing.err;  // NotFound, the first failure's code
  EXPECT_NE(missing.err.find("line 1: "), std::string::npos) << missing.err;
  EXPECT_EQ(missing.err.find("line 2: "), std::string::npos) << "stopped before line 2";
  EXPECT_NE(missing.err.find("stopped at the first failure"), std::string::npos) << missing.err;
  EXPECT_EQ(Cli("import imp --mode sideways", "").code, 2);
}

TEST_F(CliTest, LocateNamesContainerAndBlobs) {
  ASSERT_EQ(Cli("put other", R"({"PartitionKey":"p","RowKey":"r"})").code, 0);  // a store
  CliRun r = Cli("--container my-tables locate Orders 'customer 42' order-1");
  ASSERT_EQ(r.code, 0) << r.err;
  json j = json::parse(r.out);
  EXPECT_EQ(j["container"], "my-tables");
  EXPECT_EQ(j["entity_blob"], "t/orders/e/-customer02042/-order02D1");
  EXPECT_EQ(j["lock_blob"], "t/orders/l/-customer02042");
  EXPECT_FALSE(json::parse(Cli("locate Orders p").out).contains("entity_blob"));
}

TEST_F(CliTest, VerboseLogsEachRequestAndHelpDocumentsCommands) {
  ASSERT_EQ(Cli("put other", R"({"PartitionKey":"p","RowKey":"r"})").code, 0);  // a store
  CliRun r = Cli("-v get orders p r");
  EXPECT_EQ(r.code, 3);
  EXPECT_NE(r.err.find("GET t/orders/e/-p/-r -> NotFound BlobNotFound"), std::string::npos)
      << r.err;
  CliRun help = Cli("--help");
  EXPECT_EQ(help.code, 0);
  for (const char* word : {"put TABLE", "get TABLE", "delete TABLE", "query TABLE", "locate TABLE",
                           "Exit codes", "--container", "BLOBTABLE_STORE"})
    EXPECT_NE(help.out.find(word), std::string::npos) << word;
}

// Global options may come before or after the command; values are checked
// by the parser (exit 2, naming the option).
TEST_F(CliTest, GlobalOptionsGoBeforeOrAfterTheCommand) {
  const std::string e = R"({"PartitionKey":"p","RowKey":"r"})";
  ASSERT_EQ(Cli("put orders --container elsewhere", e).code, 0);
  EXPECT_EQ(Cli("get orders p r").code, 3);  // not in the default container
  EXPECT_EQ(Cli("get orders p r --container elsewhere").code, 0);
  EXPECT_EQ(Cli("--container elsewhere get orders p r").code, 0);
  CliRun negative = Cli("get orders p r --lock-timeout -1");
  EXPECT_EQ(negative.code, 2);
  EXPECT_NE(negative.err.find("--lock-timeout"), std::string::npos) << negative.err;
  CliRun version = Cli("--version");
  EXPECT_EQ(version.code, 0);
  EXPECT_EQ(version.out.rfind("blobtable ", 0), 0u) << version.out;
}

TEST_F(CliTest, TxnCommitsAtomicallyAndReportsConflictsAndLockTimeouts) {
  ASSERT_EQ(Cli("put accounts", R"({"PartitionKey":"eu","RowKey":"alice","balance":100})").code, 0);
  std::string etag = json::parse(Cli("get accounts eu alice").out)["odata.etag"];
  std::string ops = R"([
    {"op": "replace", "table": "accounts", "entity": {"PartitionKey":"eu","RowKey":"alice","balance":90},
     "if_match": )" +
                    json(etag).dump() + R"(},
    {"op": "insert", "table": "accounts", "entity": {"PartitionKey":"us","RowKey":"carol","balance":10}},
    {"op": "insert", "table": "ledger", "entity": {"PartitionKey":"2026","RowKey":"t1","amount":10}},
    {"op": "check", "table": "accounts", "entity": {"PartitionKey":"us","RowKey":"nobody"}, "if_match": ""}
  ])";
  CliRun ok = Cli("txn", ops);
  ASSERT_EQ(ok.code, 0) << ok.err;
  json done = json::parse(ok.out);
  ASSERT_EQ(done["committed"].size(), 3u);
  EXPECT_EQ(done["committed"][1]["RowKey"], "carol");
  EXPECT_EQ(done["committed"][1]["odata.etag"],
            json::parse(Cli("get accounts us carol").out)["odata.etag"]);
  EXPECT_EQ(json::parse(Cli("get accounts eu alice").out)["balance"], 90);
  // The same again: alice's ETag is stale, so nothing happens (exit 4).
  CliRun stale = Cli("txn", ops);
  EXPECT_EQ(stale.code, 4) << stale.err;
  EXPECT_EQ(Cli("query ledger").out.find("t1"), Cli("query ledger").out.rfind("t1"));  // one line
  EXPECT_EQ(Cli("txn", "[{\"op\": \"frob\", \"table\": \"t1x\", \"entity\": {}}]").code, 2);
  EXPECT_EQ(Cli("txn", "not json").code, 2);
  EXPECT_EQ(Cli("txn accounts", "[]").code, 2);
  // Someone holds the entity (a lease on its blob, as another client or a
  // coordinator's transaction would): the transaction gives up (exit 5).
  ASSERT_EQ(Cli("put accounts", R"({"PartitionKey":"eu","RowKey":"x"})").code, 0);
  {
    auto store = Store::Open(dir_.path() + "/db");
    ASSERT_TRUE(store.ok());
    auto blob = (*store)->OpenTable("accounts")->EntityBlobName("eu", "x");
    ASSERT_TRUE((*store)->blob_store().AcquireLease(*blob, 60, "", {}).ok());
  }
  CliRun timeout =
      Cli("txn --lock-timeout 0.3",
          R"([{"op":"upsert","table":"accounts","entity":{"PartitionKey":"eu","RowKey":"x"}}])");
  EXPECT_EQ(timeout.code, 5) << timeout.err;
  EXPECT_NE(timeout.err.find("LockTimeout"), std::string::npos) << timeout.err;
  CliRun recovered = Cli("recover");
  EXPECT_EQ(recovered.code, 0);
  EXPECT_EQ(json::parse(recovered.out)["resolved"], 0);
  EXPECT_EQ(json::parse(recovered.out)["in_flight"], json::array());
}

TEST(EntityJson, RejectsWhatCannotBeStored) {
  auto bad = [](const char* text) {
    return cli::EntityFromJson(json::parse(text), nullptr).status().code();
  };
  EXPECT_EQ(bad(R"({"RowKey":"r"})"), Code::kInvalidArgument);
  EXPECT_EQ(bad(R"({"PartitionKey":"p","RowKey":"r","x":null})"), Code::kInvalidArgument);
  EXPECT_EQ(bad(R"({"PartitionKey":"p","RowKey":"r","x":[1]})"), Code::kInvalidArgument);
  EXPECT_EQ(bad(R"({"PartitionKey":"p","RowKey":"r","x":"zz","x@odata.type":"Edm.Binary"})"),
            Code::kInvalidArgument);
  EXPECT_EQ(bad(R"({"PartitionKey":"p","RowKey":"r","x@odata.type":"Edm.Int64"})"),
            Code::kInvalidArgument);
  EXPECT_EQ(bad(R"({"PartitionKey":"p","RowKey":"r","x":"1","x@odata.type":"Edm.Nope"})"),
            Code::kInvalidArgument);
  for (const char* lenient : {" 5", "+5", "5 ", "5abc", "", "99999999999999999999"})
    EXPECT_EQ(bad((std::string(R"({"PartitionKey":"p","RowKey":"r","x":")") + lenient +
                   R"(","x@odata.type":"Edm.Int64"})")
                      .c_str()),
              Code::kInvalidArgument)
        << lenient;
  EXPECT_EQ(internal::Base64Encode(std::string("\0\x01\x02\xff", 4)), "AAEC/w==");
  EXPECT_EQ(*internal::Base64Decode("AAEC/w=="), std::string("\0\x01\x02\xff", 4));
  EXPECT_FALSE(internal::Base64Decode("AAE").ok());
  EXPECT_FALSE(internal::Base64Decode("AA=C").ok());
}

TEST(EntityJson, NonFiniteDoublesRoundTrip) {
  Entity e("p", "r");
  e.Set("inf", INFINITY);
  auto j = cli::EntityToJson(e);
  EXPECT_EQ(j["inf"], "Infinity");
  EXPECT_EQ(j["inf@odata.type"], "Edm.Double");
  auto back = cli::EntityFromJson(json::parse(j.dump()), nullptr);
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(*back->FindAs<double>("inf"), INFINITY);
}

// Every code has its documented exit code; an unknown commit outcome has its
// own, so a script that retries on "unreachable" (6) never retries it blindly.
TEST(ExitCodes, FollowTheStatusCode) {
  EXPECT_EQ(cli::ExitCodeFor(Status::OK()), 0);
  EXPECT_EQ(cli::ExitCodeFor(Status::InvalidArgument("x")), 2);
  EXPECT_EQ(cli::ExitCodeFor(Status::NotFound("x")), 3);
  EXPECT_EQ(cli::ExitCodeFor(Status::Conflict("x")), 4);
  EXPECT_EQ(cli::ExitCodeFor(Status::LockTimeout("x")), 5);
  EXPECT_EQ(cli::ExitCodeFor(Status::Busy("x")), 5);
  EXPECT_EQ(cli::ExitCodeFor(Status::Unavailable("x")), 6);
  EXPECT_EQ(cli::ExitCodeFor(Status::OutcomeUnknown("x")), 7);
  EXPECT_EQ(cli::ExitCodeFor(Status::LeaseLost("x")), 1);
  EXPECT_EQ(CodeName(Code::kOutcomeUnknown), "OutcomeUnknown");
}

}  // namespace
}  // namespace blobtable
