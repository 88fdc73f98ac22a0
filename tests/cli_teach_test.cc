// SPDX-License-Identifier: Apache-2.0
// A CLI that says what went wrong and where: bad JSON with its line and
// column, an unreachable endpoint by host and port, a file or a full
// directory given as a store; and a put without JSON.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <string>

#include "blobtable/storage_options.h"
#include "tests/shell.h"
#include "tests/test_util.h"

namespace blobtable::testing {
namespace {

using json = nlohmann::json;

class CliTeachTest : public ::testing::Test {
 protected:
  ShellRun Cli(const std::string& args, const std::string& stdin_text = "") {
    return CliAt(dir_.path() + "/db", args, stdin_text);
  }
  ShellRun CliAt(const std::string& store, const std::string& args,
                 const std::string& stdin_text = "") {
    return Shell(std::string(BLOBTABLE_CLI_PATH) + " --store " + Quote(store) + " " + args,
                 stdin_text);
  }
  TempDir dir_;
};

TEST_F(CliTeachTest, BadJsonIsReportedWithItsLineAndColumn) {
  ShellRun put = Cli("put orders", "{\"PartitionKey\": \"p\",\n \"RowKey\": x}");
  EXPECT_EQ(put.code, 2);
  EXPECT_NE(put.err.find("stdin (one entity object) is not valid JSON: parse error at line 2, "
                         "column 12"),
            std::string::npos)
      << put.err;
  ShellRun txn = Cli("txn", "[{\"op\": \"insert\"\n");
  EXPECT_EQ(txn.code, 2);
  EXPECT_NE(txn.err.find("at line 2, column 1"), std::string::npos) << txn.err;
  // import: the input's line, and the column within it.
  ShellRun import =
      Cli("import orders",
          "{\"PartitionKey\":\"p\",\"RowKey\":\"a\"}\n{\"PartitionKey\":\"p\", oops}\n");
  EXPECT_EQ(import.code, 2);
  EXPECT_NE(import.err.find("line 2: InvalidArgument: the line is not valid JSON: parse error at "
                            "column 22"),
            std::string::npos)
      << import.err;
}

TEST_F(CliTeachTest, AnUnreachableEndpointIsNamedByHostAndPort) {
  for (const std::string& transport : HttpTransportNames()) {  // cpprest where built
    // Port 9 of the loopback (discard): nothing listens there.
    ShellRun get = CliAt(std::string("UseDevelopmentStorage=true;BlobEndpoint=http://127.0.0.1:9/"
                                     "devstoreaccount1;HttpTransport=") +
                             transport,
                         "--no-cache get orders p r");
    EXPECT_EQ(get.code, 6) << transport << ": " << get.err;
    EXPECT_NE(get.err.find("GET request to 127.0.0.1:9 failed"), std::string::npos)
        << transport << ": " << get.err;
    // Known not sent (a refused connection): retried without doubt.
    EXPECT_NE(get.err.find("[NotSent]"), std::string::npos) << transport << ": " << get.err;
  }
}

TEST_F(CliTeachTest, AFileOrADirectoryOfOtherFilesIsNotMadeAStore) {
  const std::string file = dir_.path() + "/notes.txt";
  std::ofstream(file) << "mine\n";
  for (const char* args : {"get orders p r", "put orders p r"}) {
    ShellRun run = CliAt(file, args);
    EXPECT_EQ(run.code, 2) << args;
    EXPECT_NE(run.err.find(file + " is a file, not a store directory"), std::string::npos)
        << run.err;
    EXPECT_EQ(run.err.find("create_if_missing"), std::string::npos) << run.err;  // no API names
  }
  ShellRun put = CliAt(dir_.path(), "put orders p r");  // holds notes.txt
  EXPECT_EQ(put.code, 2);
  EXPECT_NE(put.err.find("holds files (notes.txt, ...) but no blobtable store"), std::string::npos)
      << put.err;
  EXPECT_FALSE(std::filesystem::exists(dir_.path() + "/data.mdb"));
  EXPECT_FALSE(std::filesystem::exists(dir_.path() + "/lock.mdb"));
  // An empty directory, and a store, are fine.
  std::filesystem::create_directory(dir_.path() + "/empty");
  EXPECT_EQ(CliAt(dir_.path() + "/empty", "put orders p r").code, 0);
  EXPECT_EQ(CliAt(dir_.path() + "/empty", "put orders p r2").code, 0);
}

// Issue 56 item 9: `put orders p r Timestamp=x` dropped the property and
// exited 0; a key with ESC, DEL or a byte that is not UTF-8 was printed raw
// before its escaped form; `--limit 0` printed the double's range; a
// query writing to /dev/full said "export: cannot write the output"; a
// 20 MB stdin was read whole before it was refused.
TEST_F(CliTeachTest, ReservedNamesAndControlCharactersAreRefusedAndShownEscaped) {
  for (const char* reserved : {"Timestamp=x", "PartitionKey=x", "odata.etag=x"}) {
    ShellRun run = Cli(std::string("put orders p r ") + reserved);
    EXPECT_EQ(run.code, 2) << reserved << ": " << run.err;
    EXPECT_NE(run.err.find("is reserved"), std::string::npos) << run.err;
  }
  ShellRun esc = Cli("put orders", "{\"PartitionKey\":\"a\\u001bb\\u007f\",\"RowKey\":\"r\"}");
  EXPECT_EQ(esc.code, 2) << esc.err;
  EXPECT_NE(esc.err.find("'a\\x1bb\\x7f'"), std::string::npos) << esc.err;
  EXPECT_EQ(esc.err.find('\x1b'), std::string::npos) << "a raw ESC: " << esc.err;
  EXPECT_EQ(esc.err.find('\x7f'), std::string::npos) << "a raw DEL: " << esc.err;
  ASSERT_EQ(Cli("put orders p r n:int32=1").code, 0);
  ShellRun zero = Cli("query orders --limit 0");
  EXPECT_EQ(zero.code, 2);
  EXPECT_NE(zero.err.find("must be 1 or more (got 0)"), std::string::npos) << zero.err;
  EXPECT_EQ(zero.err.find("1797693"), std::string::npos) << zero.err;
  // Any command whose output is lost fails (the review's: get, count,
  // tables and put exited 0).
  for (const std::string command :
       {"query orders", "get orders p r", "count orders", "tables", "put orders p r2 n:int32=2"}) {
    ShellRun full = Shell("(" + std::string(BLOBTABLE_CLI_PATH) + " --store " +
                          Quote(dir_.path() + "/db") + " " + command + " > /dev/full)");
    EXPECT_EQ(full.code, 1) << command << ": " << full.err;
    EXPECT_NE(full.err.find(command.substr(0, command.find(' ')) + ": cannot write the output"),
              std::string::npos)
        << full.err;
  }
  // A byte that is not UTF-8, quoted by the JSON parser's message: escaped.
  ShellRun not_utf8 = Cli("put orders", "{\"PartitionKey\":\"bad\xff");
  EXPECT_EQ(not_utf8.code, 2);
  EXPECT_NE(not_utf8.err.find("bad\\xff"), std::string::npos) << not_utf8.err;
  EXPECT_EQ(not_utf8.err.find('\xff'), std::string::npos) << not_utf8.err;
  // A store with no table: the hint names --container where one was given.
  ShellRun other = Cli("--container elsewhere query orders");
  EXPECT_EQ(other.code, 3) << other.err;
  EXPECT_NE(other.err.find("check --store and --container"), std::string::npos) << other.err;
  ShellRun huge = Cli("put orders", std::string(20 << 20, ' '));
  EXPECT_EQ(huge.code, 2) << huge.err;
  EXPECT_NE(huge.err.find("is over 8388608 bytes; nothing was written"), std::string::npos)
      << huge.err;
}

// The review's: `restore` stopped at a file it could not load (a name that
// is no table's, a directory named *.jsonl), the tables after it never
// loaded; and its exit code was not the first failure's.
TEST_F(CliTeachTest, RestoreLoadsEveryTableItCanAndExitsWithTheFirstFailure) {
  const std::string dump = dir_.path() + "/dump";
  std::filesystem::create_directories(dump + "/sub.jsonl");
  std::ofstream(dump + "/a.jsonl") << "{\"PartitionKey\":\"p\",\"RowKey\":\"r\"}\n";
  std::ofstream(dump + "/orders.jsonl") << "{\"PartitionKey\":\"p\",\"RowKey\":\"r\"}\n{bad\n";
  std::ofstream(dump + "/users.jsonl") << "{\"PartitionKey\":\"p\",\"RowKey\":\"u\"}\n";
  ShellRun run = Cli("restore " + Quote(dump));
  EXPECT_EQ(run.code, 2) << run.err;
  EXPECT_NE(run.err.find("sub.jsonl is not a file"), std::string::npos) << run.err;
  EXPECT_NE(run.err.find("orders.jsonl line 2: "), std::string::npos) << run.err;
  EXPECT_EQ(Cli("tables").out, "orders\nusers\n");
}

TEST_F(CliTeachTest, PutTakesTheEntityFromTheCommandLine) {
  ShellRun put = Cli(
      "put orders c42 o1 status=open zip=007 Total:double=9.5 whole:Edm.Double=12 Items:int32=3 "
      "big:Edm.Int64=9007199254740993 ok:bool=true when:datetime=2024-05-01T12:00:00Z "
      "raw:binary=AAEC 'note=a b=c'");
  ASSERT_EQ(put.code, 0) << put.err;
  json stored = json::parse(Cli("get orders c42 o1").out);
  EXPECT_EQ(stored["status"], "open");
  EXPECT_EQ(stored["zip"], "007");  // a String unless typed
  EXPECT_EQ(stored["Total"], 9.5);
  EXPECT_EQ(stored["whole@odata.type"], "Edm.Double");
  EXPECT_EQ(stored["Items"], 3);
  EXPECT_EQ(stored["big"], "9007199254740993");
  EXPECT_EQ(stored["big@odata.type"], "Edm.Int64");
  EXPECT_EQ(stored["ok"], true);
  EXPECT_EQ(stored["when"], "2024-05-01T12:00:00.0000000Z");
  EXPECT_EQ(stored["raw"], "AAEC");
  EXPECT_EQ(stored["note"], "a b=c");  // split at the first '='
  struct Refused {
    const char* args;
    const char* says;
  };
  for (const Refused& r :
       {Refused{"c42 o2 n:int32=x", "property 'n': 'x' is not an Edm.Int32 value"},
        Refused{"c42 o2 n:int32=99999999999", "out of range for Edm.Int32"},
        Refused{"c42 o2 n:color=red", "unknown type 'color'"},
        Refused{"c42 o2 novalue", "'novalue' is not NAME=VALUE"},
        Refused{"c42 o2 a=1 a=2", "property a given twice"}, Refused{"c42", "give PK and RK"}}) {
    ShellRun refused = Cli(std::string("put orders ") + r.args);
    EXPECT_EQ(refused.code, 2) << r.args;
    EXPECT_NE(refused.err.find(r.says), std::string::npos) << r.args << ": " << refused.err;
  }
  EXPECT_EQ(Cli("get orders c42 o2").code, 3);  // nothing written
}

}  // namespace
}  // namespace blobtable::testing
