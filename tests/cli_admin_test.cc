// SPDX-License-Identifier: Apache-2.0
// The CLI's commands for a table as a whole, run as a separate binary:
// tables, count, delete with a selection, drop.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "blobtable/store.h"
#include "tests/dead_intent.h"
#include "tests/shell.h"
#include "tests/test_util.h"

namespace blobtable {
namespace {

using testing::Quote;

class CliAdminTest : public ::testing::Test {
 protected:
  // Runs `blobtable --store <dir> args...` with `stdin_text` on stdin.
  testing::ShellRun Cli(const std::string& args, const std::string& stdin_text = "") {
    return testing::Shell(
        std::string(BLOBTABLE_CLI_PATH) + " --store " + Quote(store_dir()) + " " + args,
        stdin_text);
  }
  std::string store_dir() const { return dir_.path() + "/db"; }
  // `rows` entities (p<i % 2>, r<i>) with n = i, imported into `table`.
  void Import(const std::string& table, int rows) {
    std::string lines;
    for (int i = 0; i < rows; ++i)
      lines += "{\"PartitionKey\":\"p" + std::to_string(i % 2) + "\",\"RowKey\":\"r" +
               std::to_string(1000 + i) + "\",\"n\":" + std::to_string(i) + "}\n";
    auto imported = Cli("import " + table + " --quiet", lines);
    ASSERT_EQ(imported.code, 0) << imported.err;
  }
  testing::TempDir dir_;
};

TEST_F(CliAdminTest, TablesListsThemWithCountsAndCountCountsASelection) {
  Import("orders", 30);
  Import("Audit", 3);
  auto tables = Cli("tables");
  ASSERT_EQ(tables.code, 0) << tables.err;
  EXPECT_EQ(tables.out, "audit\norders\n");
  tables = Cli("tables --counts");
  ASSERT_EQ(tables.code, 0) << tables.err;
  EXPECT_EQ(tables.out, "audit\t3\norders\t30\n");
  EXPECT_EQ(Cli("count orders").out, "30\n");
  EXPECT_EQ(Cli("count orders --pk p1").out, "15\n");
  EXPECT_EQ(Cli("count orders --filter 'n ge 10 and n lt 20'").out, "10\n");
  EXPECT_EQ(Cli("count orders --pk p0 --rk-prefix r101").out, "5\n");
  EXPECT_EQ(Cli("count nothing").code, 3);  // a table that holds no entity does not exist
  EXPECT_EQ(Cli("--missing-table-ok count nothing").out, "0\n");
  auto bad = Cli("count orders --filter 'n eq'");
  EXPECT_EQ(bad.code, 2);
  EXPECT_NE(bad.err.find("filter"), std::string::npos) << bad.err;
  // Reading commands make no store where there is none.
  auto none = testing::Shell(std::string(BLOBTABLE_CLI_PATH) + " --store " +
                             Quote(dir_.path() + "/none") + " tables");
  EXPECT_EQ(none.code, 3) << none.err;
}

TEST_F(CliAdminTest, DeleteWithASelectionTakesWhatMatchesAfterADryRun) {
  Import("orders", 40);
  auto dry = Cli("delete orders --filter 'n lt 25' --dry-run");
  ASSERT_EQ(dry.code, 0) << dry.err;
  EXPECT_NE(dry.err.find("25 matched, none deleted (dry run)"), std::string::npos) << dry.err;
  EXPECT_EQ(Cli("count orders").out, "40\n");
  auto done = Cli("delete orders --filter 'n lt 25'");
  ASSERT_EQ(done.code, 0) << done.err;
  EXPECT_NE(done.err.find("25 matched, 25 deleted"), std::string::npos) << done.err;
  EXPECT_EQ(Cli("count orders").out, "15\n");
  auto partition = Cli("delete orders --pk p0 --quiet");
  ASSERT_EQ(partition.code, 0) << partition.err;
  EXPECT_EQ(partition.err, "");
  EXPECT_EQ(Cli("count orders").out, "8\n");
  // No selection: refused, nothing deleted; --all takes everything.
  EXPECT_EQ(Cli("delete orders").code, 2);
  EXPECT_EQ(Cli("delete orders p1 r1001 --all").code, 2);
  EXPECT_EQ(Cli("count orders").out, "8\n");
  ASSERT_EQ(Cli("delete orders --all --quiet").code, 0);
  EXPECT_EQ(Cli("--missing-table-ok count orders").out, "0\n");
}

TEST_F(CliAdminTest, DropDeletesATableAndRefusesOneATransactionHolds) {
  Import("orders", 20);
  Import("keep", 2);
  {
    auto store = Store::Open(store_dir());
    ASSERT_TRUE(store.ok()) << store.status().ToString();
    testing::PlaceDeadIntent((*store)->blob_store(), *(*store)->OpenTable("orders"), "p1", "r1001");
  }
  auto refused = Cli("drop orders");
  EXPECT_EQ(refused.code, 5) << refused.err;  // Busy: a transaction holds it
  EXPECT_NE(refused.err.find(testing::kDeadTxnId), std::string::npos) << refused.err;
  EXPECT_EQ(Cli("count orders").out, "20\n");
  auto dropped = Cli("drop orders --force");
  ASSERT_EQ(dropped.code, 0) << dropped.err;
  EXPECT_NE(dropped.err.find("dropped table orders: 20 entities"), std::string::npos)
      << dropped.err;
  EXPECT_EQ(Cli("tables").out, "keep\n");
  auto again = Cli("drop orders --quiet");  // nothing left: no such table (issue 56)
  EXPECT_EQ(again.code, 3) << again.err;
  EXPECT_NE(again.err.find("table 'orders' does not exist"), std::string::npos) << again.err;
  auto idempotent = Cli("--missing-table-ok drop orders --quiet");  // as a script may want
  EXPECT_EQ(idempotent.code, 0) << idempotent.err;
  EXPECT_EQ(idempotent.err, "");
}

TEST_F(CliAdminTest, StatsBackupRestoreAndCompact) {
  Import("orders", 400);
  Import("audit", 3);
  auto stats = Cli("stats");
  ASSERT_EQ(stats.code, 0) << stats.err;
  auto j = nlohmann::json::parse(stats.out);
  EXPECT_EQ(j["tables"][1]["name"], "orders");
  EXPECT_EQ(j["tables"][1]["entity_blobs"], 400);
  EXPECT_GT(j["file"]["file_bytes"].get<int64_t>(), 0);

  const std::string copy = dir_.path() + "/copy", dump = dir_.path() + "/dump";
  ASSERT_EQ(Cli("backup " + Quote(copy) + " --quiet").code, 0);
  EXPECT_EQ(Cli("backup " + Quote(copy)).code, 2);  // not empty
  auto copied = testing::Shell(std::string(BLOBTABLE_CLI_PATH) + " --store " + Quote(copy) +
                               " tables --counts");
  EXPECT_EQ(copied.out, "audit\t3\norders\t400\n") << copied.err;
  ASSERT_EQ(Cli("backup " + Quote(dump) + " --export --quiet").code, 0);
  auto restored =
      testing::Shell(std::string(BLOBTABLE_CLI_PATH) + " --store " + Quote(dir_.path() + "/new") +
                     " restore " + Quote(dump) + " --quiet && " + BLOBTABLE_CLI_PATH + " --store " +
                     Quote(dir_.path() + "/new") + " tables --counts");
  EXPECT_EQ(restored.out, "audit\t3\norders\t400\n") << restored.err;
  auto wrong = Cli("restore " + Quote(copy));  // a copy of files is not an export
  EXPECT_EQ(wrong.code, 2);
  EXPECT_NE(wrong.err.find("--store " + copy), std::string::npos) << wrong.err;

  ASSERT_EQ(Cli("delete orders --all --quiet").code, 0);
  // stats says about what compact leaves, and what it gives back.
  j = nlohmann::json::parse(Cli("stats").out);
  const int64_t file_bytes = j["file"]["file_bytes"].get<int64_t>(),
                compacted_bytes = j["file"]["compacted_bytes"].get<int64_t>();
  EXPECT_EQ(j["file"]["compact_would_free_bytes"].get<int64_t>(), file_bytes - compacted_bytes);
  auto compacted = Cli("compact");
  ASSERT_EQ(compacted.code, 0) << compacted.err;
  long long before = 0, after = 0;
  ASSERT_EQ(sscanf(compacted.err.c_str(), "blobtable: compact: %lld bytes -> %lld bytes", &before,
                   &after),
            2)
      << compacted.err;
  EXPECT_EQ(before, file_bytes);
  EXPECT_LE(std::abs(after - compacted_bytes), 2 * 4096) << after << " " << compacted_bytes;
  EXPECT_EQ(Cli("tables --counts").out, "audit\t3\n");
  auto azure = testing::Shell(std::string(BLOBTABLE_CLI_PATH) +
                              " --store UseDevelopmentStorage=true compact");
  EXPECT_EQ(azure.code, 2) << azure.err;
}

// A mistyped command or option is met with the one meant; every command's
// help ends with an example and the options every command takes.
TEST_F(CliAdminTest, TyposGetADidYouMeanAndEachHelpAnExampleAndTheGlobalOptions) {
  auto typo = Cli("gett orders p r");
  EXPECT_EQ(typo.code, 2);
  EXPECT_NE(typo.err.find("unknown command 'gett'; did you mean 'get'?"), std::string::npos)
      << typo.err;
  typo = Cli("query orders --pkk p");
  EXPECT_EQ(typo.code, 2);
  EXPECT_NE(typo.err.find("unknown option '--pkk'; did you mean '--pk'?"), std::string::npos)
      << typo.err;
  typo = Cli("cuont orders");
  EXPECT_NE(typo.err.find("did you mean 'count'?"), std::string::npos) << typo.err;
  auto far = Cli("frobnicate");  // nothing near: the parser's own words
  EXPECT_EQ(far.code, 2);
  EXPECT_EQ(far.err.find("did you mean"), std::string::npos) << far.err;
  for (const char* command :
       {"put",    "get",    "delete",  "query",   "count",   "tables", "drop",      "stats",
        "export", "import", "backup",  "restore", "compact", "locate", "txn",       "lock",
        "leader", "queue",  "counter", "recover", "cache",   "check",  "completion"}) {
    auto help = Cli(std::string(command) + " --help");
    EXPECT_EQ(help.code, 0) << command;
    EXPECT_NE(help.out.find("Example:\n  "), std::string::npos) << command << help.out;
    EXPECT_NE(help.out.find("--store LOCATION"), std::string::npos) << command;
  }
}

// Help is wrapped to $COLUMNS (else the terminal, else 80): a line runs past
// it only to keep a word or an example whole.
TEST_F(CliAdminTest, HelpIsWrappedToTheTerminalsWidth) {
  auto lines_of = [&](const std::string& command, int columns) {
    auto help = testing::Shell("COLUMNS=" + std::to_string(columns) + " " + BLOBTABLE_CLI_PATH +
                               " " + command + " --help");
    EXPECT_EQ(help.code, 0) << command;
    std::vector<std::string> lines;
    std::istringstream in(help.out);
    for (std::string line; std::getline(in, line);) lines.push_back(line);
    return lines;
  };
  for (const char* command : {"", "lock", "queue", "put", "query", "export", "import", "txn"}) {
    bool in_example = false;
    for (const std::string& line : lines_of(command, 60)) {
      if (line == "Example:") in_example = true;
      if (line.empty()) in_example = false;
      if (line.size() <= 60 || in_example) continue;
      const std::string text = line.substr(line.find_first_not_of(' '));
      EXPECT_EQ(text.find(' '), std::string::npos)
          << "'" << command << " --help' at 60 columns: " << line;
    }
  }
  EXPECT_GT(lines_of("lock", 60).size(), lines_of("lock", 100).size());
}

// A damaged cache is moved aside with one warning, also by `cache stats`
// and `cache clear`, which moved it silently (the review of issue 55).
TEST_F(CliAdminTest, CacheStatsAndClearSayWhenTheyMoveADamagedCacheAside) {
  for (const char* action : {"stats", "clear"}) {
    const std::string cache = dir_.path() + "/cache-" + action;
    std::filesystem::create_directories(cache);
    std::ofstream(cache + "/data.mdb") << "not an LMDB file, not a cache";
    auto run = testing::Shell(std::string(BLOBTABLE_CLI_PATH) + " --cache " + Quote(cache) +
                              " cache " + action);
    EXPECT_EQ(run.code, 0) << action << ": " << run.err;
    EXPECT_NE(run.err.find("moved aside"), std::string::npos) << action << ": " << run.err;
  }
}

}  // namespace
}  // namespace blobtable
