// SPDX-License-Identifier: Apache-2.0
// `blobtable index create|list|check|drop` and `query --index` (docs/indexes.md):
// typed values as `put` takes them, checked against the index's properties,
// a unique index's Conflict by exit code 4, a check's counts. Each create
// and drop waits the definitions' grace (10 s of real time: the CLI has no
// fake clock), so one test does the whole round.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <string>

#include "tests/shell.h"
#include "tests/test_util.h"

namespace blobtable::testing {
namespace {

using json = nlohmann::json;

class CliIndexTest : public ::testing::Test {
 protected:
  ShellRun Cli(const std::string& args, const std::string& stdin_text = "") {
    return Shell(
        std::string(BLOBTABLE_CLI_PATH) + " --store " + Quote(dir_.path() + "/db") + " " + args,
        stdin_text);
  }
  TempDir dir_;
};

TEST_F(CliIndexTest, CreateListQueryCheckAndDrop) {
  ASSERT_EQ(Cli("put users p a email=a@x.org age:int32=30").code, 0);
  ASSERT_EQ(Cli("put users p b email=b@x.org age:int32=20").code, 0);
  ASSERT_EQ(Cli("put users q c email=c@x.org age:int32=30").code, 0);
  ShellRun created = Cli("index create users byAgeEmail age,email --unique --cover note");
  ASSERT_EQ(created.code, 0) << created.err;
  EXPECT_EQ(json::parse(created.out)["entries_written"], 3);
  ShellRun listed = Cli("index list users");
  ASSERT_EQ(listed.code, 0) << listed.err;
  EXPECT_EQ(json::parse(listed.out),
            json::parse(R"({"name": "byAgeEmail", "properties": ["age", "email"], "unique": true,
                            "covered": ["note"], "state": "ready"})"));

  // In the index's order: by age, then email.
  ShellRun all = Cli("query users --index byAgeEmail --select email --format csv");
  ASSERT_EQ(all.code, 0) << all.err;
  EXPECT_EQ(all.out, "PartitionKey,RowKey,email\np,b,b@x.org\np,a,a@x.org\nq,c,c@x.org\n");
  // Issue 55, item 11: the index answers alone, and an entry has neither
  // the entity's ETag nor its Timestamp: none is printed (it printed
  // Timestamp 1970-01-01 before).
  ShellRun covered = Cli("query users --index byAgeEmail --eq age:int32=20 --select email");
  ASSERT_EQ(covered.code, 0) << covered.err;
  EXPECT_EQ(json::parse(covered.out),
            json::parse(R"({"PartitionKey": "p", "RowKey": "b", "email": "b@x.org"})"));
  ShellRun ranged =
      Cli("query users --index byAgeEmail --eq age:int32=30 --from email=b --to email=z --select "
          "email --format csv");
  ASSERT_EQ(ranged.code, 0) << ranged.err;
  EXPECT_EQ(ranged.out, "PartitionKey,RowKey,email\nq,c,c@x.org\n");
  // A value must name the index's property at its place.
  ShellRun misplaced = Cli("query users --index byAgeEmail --eq email=a@x.org");
  EXPECT_EQ(misplaced.code, 2);
  EXPECT_NE(misplaced.err.find("the index's property here is age, not email"), std::string::npos)
      << misplaced.err;
  // Issue 55, item 12: an index on a table with no entity (a typo?) is
  // made, and said so (it was silent).
  ShellRun typo = Cli("index create usres byAge age");
  EXPECT_EQ(typo.code, 0) << typo.err;
  EXPECT_NE(typo.err.find("table usres holds no entities"), std::string::npos) << typo.err;
  ShellRun unknown = Cli("query users --index byName");
  EXPECT_EQ(unknown.code, 2);
  EXPECT_NE(unknown.err.find("table users has no index byName"), std::string::npos) << unknown.err;

  // Unique: a second holder of (30, a@x.org) is refused, naming index and value.
  ShellRun twice = Cli("put users z z email=a@x.org age:int32=30");
  EXPECT_EQ(twice.code, 4);
  EXPECT_NE(twice.err.find("index byAgeEmail"), std::string::npos) << twice.err;
  EXPECT_NE(twice.err.find("a@x.org"), std::string::npos) << twice.err;

  // The bulk commands keep it too: an import's batch, a ranged delete.
  ShellRun imported =
      Cli("import users",
          "{\"PartitionKey\":\"r\",\"RowKey\":\"d\",\"email\":\"d@x.org\",\"age\":40}\n"
          "{\"PartitionKey\":\"r\",\"RowKey\":\"e\",\"email\":\"e@x.org\",\"age\":41}\n"
          "{\"PartitionKey\":\"r\",\"RowKey\":\"f\",\"note\":\"no age\"}\n");
  ASSERT_EQ(imported.code, 0) << imported.err;
  ShellRun deleted = Cli("delete users --pk q --quiet");
  ASSERT_EQ(deleted.code, 0) << deleted.err;
  ShellRun from40 =
      Cli("query users --index byAgeEmail --from age:int32=30 --format csv "
          "--select email");
  ASSERT_EQ(from40.code, 0) << from40.err;
  EXPECT_EQ(from40.out, "PartitionKey,RowKey,email\np,a,a@x.org\nr,d,d@x.org\nr,e,e@x.org\n");

  ShellRun check = Cli("index check users byAgeEmail");
  ASSERT_EQ(check.code, 0) << check.err << check.out;
  EXPECT_EQ(json::parse(check.out),
            json::parse(R"({"entities": 5, "entries": 4, "missing": 0, "dangling": 0,
                            "duplicates": 0})"));

  ShellRun dropped = Cli("index drop users byAgeEmail");
  ASSERT_EQ(dropped.code, 0) << dropped.err;
  EXPECT_EQ(Cli("index list users").out, "");
  EXPECT_EQ(Cli("query users --index byAgeEmail").code, 2);
  EXPECT_EQ(Cli("put users z z email=a@x.org age:int32=30").code, 0);  // no longer unique
}

}  // namespace
}  // namespace blobtable::testing
