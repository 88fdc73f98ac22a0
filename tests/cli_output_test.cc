// SPDX-License-Identifier: Apache-2.0
// How query, export and get print: table columns aligned by display width
// (CJK and emoji take two columns), csv and tsv, columns settled by the
// first 1,000 rows and the rest streamed, export's --limit, --select and
// --format.
#include <gtest/gtest.h>

#include <sstream>
#include <string>

#include "tests/shell.h"
#include "tests/test_util.h"

namespace blobtable::testing {
namespace {

class CliOutputTest : public ::testing::Test {
 protected:
  ShellRun Cli(const std::string& args, const std::string& stdin_text = "") {
    return Shell(
        std::string(BLOBTABLE_CLI_PATH) + " --store " + Quote(dir_.path() + "/db") + " " + args,
        stdin_text);
  }
  void SetUp() override {
    ASSERT_EQ(Cli("put orders p1 r1 name=東京タワー note=plain n:int32=1").code, 0);
    ASSERT_EQ(Cli("put orders p1 r2 name=🎉party 'note=a,\"b\"'").code, 0);
    ASSERT_EQ(Cli("put orders p1 r3 name=abc 'note=tab\there' extra=x").code, 0);
  }
  TempDir dir_;
};

TEST_F(CliOutputTest, ATableAlignsColumnsByTheirWidthOnScreen) {
  ShellRun table = Cli("query orders --format table");
  ASSERT_EQ(table.code, 0) << table.err;
  // 東京タワー is five characters and ten columns wide; 🎉party seven and eight.
  EXPECT_EQ(table.out,
            "PartitionKey  RowKey  extra  n  name        note\n"
            "p1            r1             1  東京タワー  plain\n"
            "p1            r2                🎉party     a,\"b\"\n"
            "p1            r3      x         abc         tab\\there\n");
}

TEST_F(CliOutputTest, ALongCellIsCutAtSixtyColumnsNotSixtyCharacters) {
  std::string wide;
  for (int i = 0; i < 40; ++i) wide += "東";  // 80 columns
  ASSERT_EQ(Cli("put notes p1 r1 'text=" + wide + "' 'plain=" + std::string(70, 'x') + "'").code,
            0);
  ShellRun table = Cli("query notes --format table");
  ASSERT_EQ(table.code, 0) << table.err;
  std::string cut;
  for (int i = 0; i < 28; ++i) cut += "東";  // 56 columns, then "..."
  EXPECT_NE(table.out.find("  " + std::string(57, 'x') + "...  " + cut + "...\n"),
            std::string::npos)
      << table.out;
}

TEST_F(CliOutputTest, CsvQuotesAndTsvEscapes) {
  ShellRun csv = Cli("query orders --format csv");
  ASSERT_EQ(csv.code, 0) << csv.err;
  EXPECT_EQ(csv.out,
            "PartitionKey,RowKey,extra,n,name,note\n"
            "p1,r1,,1,東京タワー,plain\n"
            "p1,r2,,,🎉party,\"a,\"\"b\"\"\"\n"
            "p1,r3,x,,abc,tab\there\n");
  ShellRun tsv = Cli("query orders --format tsv --select note,name");
  ASSERT_EQ(tsv.code, 0) << tsv.err;
  EXPECT_EQ(tsv.out,
            "PartitionKey\tRowKey\tnote\tname\n"
            "p1\tr1\tplain\t東京タワー\n"
            "p1\tr2\ta,\"b\"\t🎉party\n"
            "p1\tr3\ttab\\there\tabc\n");
  EXPECT_EQ(Cli("get orders p1 r1 --format csv").out,
            "PartitionKey,RowKey,n,name,note\np1,r1,1,東京タワー,plain\n");
}

TEST_F(CliOutputTest, ColumnsSettleOnTheFirstThousandRowsAndTheRestStream) {
  std::string lines;
  for (int i = 0; i < 1000; ++i)
    lines += "{\"PartitionKey\":\"q\",\"RowKey\":\"r" + std::to_string(10000 + i) + "\",\"a\":1}\n";
  lines += "{\"PartitionKey\":\"q\",\"RowKey\":\"r99999\",\"a\":2,\"late\":\"yes\"}\n";
  ASSERT_EQ(Cli("import big --quiet", lines).code, 0);
  // A table shows the late property at its row's end: nothing is hidden.
  ShellRun table = Cli("query big --format table");
  ASSERT_EQ(table.code, 0) << table.err;
  EXPECT_NE(table.out.find("\nq             r99999  2  late=yes\n"), std::string::npos)
      << table.out.substr(table.out.size() - 200);
  // csv stops before a row it cannot write whole, having written the rest.
  ShellRun csv = Cli("query big --format csv");
  EXPECT_EQ(csv.code, 2);
  EXPECT_NE(csv.err.find("(PartitionKey 'q', RowKey 'r99999') has property late, which is not "
                         "among the columns"),
            std::string::npos)
      << csv.err;
  std::istringstream rows(csv.out);
  int count = 0;
  for (std::string line; std::getline(rows, line);) ++count;
  EXPECT_EQ(count, 1001);  // the header and the first thousand, before the query ended
  ShellRun selected = Cli("query big --format csv --select a,late");
  ASSERT_EQ(selected.code, 0) << selected.err;
  EXPECT_NE(selected.out.find("\nq,r99999,2,yes\n"), std::string::npos);
}

TEST_F(CliOutputTest, ExportTakesLimitSelectAndFormat) {
  ShellRun exported = Cli("export orders --limit 2 --select name --format tsv --quiet");
  ASSERT_EQ(exported.code, 0) << exported.err;
  EXPECT_EQ(exported.out, "PartitionKey\tRowKey\tname\np1\tr1\t東京タワー\np1\tr2\t🎉party\n");
  ShellRun jsonl = Cli("export orders --pk p1 --rk-from r3 --select extra --quiet");
  ASSERT_EQ(jsonl.code, 0) << jsonl.err;
  EXPECT_NE(jsonl.out.find("\"extra\":\"x\""), std::string::npos) << jsonl.out;
  EXPECT_EQ(jsonl.out.find("\"name\""), std::string::npos) << jsonl.out;
}

}  // namespace
}  // namespace blobtable::testing
