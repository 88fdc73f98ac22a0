// Interoperability on Azurite: blobtable's blobs are ordinary Azure blobs that
// the official JavaScript SDK reads at the name `blobtable locate` prints,
// with the same ETag; leases that SDK holds are respected by blobtable.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cstdio>
#include <fstream>
#include <sstream>

#include "blobtable/store.h"
#include "tests/azurite.h"
#include "tests/test_util.h"

namespace blobtable::testing {
namespace {

using json = nlohmann::json;

struct ShellRun {
  int code;
  std::string out;
};

// Runs a shell command with `input` on stdin; captures stdout.
ShellRun Shell(const std::string& command, const std::string& input = "") {
  TempDir dir;
  std::string in = dir.path() + "/in", out = dir.path() + "/out";
  std::ofstream(in) << input;
  int status = std::system((command + " <" + in + " >" + out).c_str());
  std::ifstream f(out);
  std::stringstream ss;
  ss << f.rdbuf();
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, ss.str()};
}

std::string Q(const std::string& s) { return "'" + s + "'"; }

std::string Cli(const std::string& conn, const std::string& container) {
  return std::string(BLOBTABLE_CLI_PATH) + " --store " + Q(conn) + " --container " + container;
}

std::string Node(const std::string& args) {
  return "node " + std::string(BLOBTABLE_SOURCE_DIR) + "/tests/interop/azure_client.mjs " + args;
}

class InteropTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    Azurite* a = Azurite::Get();
    ASSERT_NE(a, nullptr);
    conn_ = a->ConnectionString(GetParam());
    static int n = 0;
    container_ = "interop-" + GetParam() + "-" + std::to_string(++n);
  }
  std::string conn_, container_;
};

TEST_P(InteropTest, SdkReadsTheBlobLocateNamesWithTheSameETag) {
  ShellRun put = Shell(Cli(conn_, container_) + " put orders",
                  R"({"PartitionKey":"customer 42","RowKey":"order.1","total":9.5})");
  ASSERT_EQ(put.code, 0);
  std::string etag = json::parse(put.out)["odata.etag"];
  ShellRun locate = Shell(Cli(conn_, container_) + " locate orders 'customer 42' order.1");
  ASSERT_EQ(locate.code, 0);
  json where = json::parse(locate.out);
  EXPECT_EQ(where["container"], container_);
  ShellRun got = Shell(Node("get " + Q(conn_) + " " + container_ + " " +
                       Q(where["entity_blob"].get<std::string>())));
  ASSERT_EQ(got.code, 0) << got.out;
  json props = json::parse(got.out);
  EXPECT_EQ(props["etag"], etag);
  EXPECT_GT(props["length"].get<int>(), 0);
  // The only mark blobtable leaves: the write id of its conditional write
  // (what lets a retry recognise its own lost write).
  EXPECT_EQ(props["metadata"].size(), 1u) << props.dump();
  EXPECT_TRUE(props["metadata"].contains("blobtablewriteid")) << props.dump();
}

TEST_P(InteropTest, LeasesHeldByAnotherClientAreRespected) {
  ASSERT_EQ(Shell(Cli(conn_, container_) + " put orders", R"({"PartitionKey":"p","RowKey":"r"})").code,
            0);
  json where = json::parse(Shell(Cli(conn_, container_) + " locate orders p r").out);
  std::string entity = where["entity_blob"], lock = where["lock_blob"];
  const std::string lease_id = "0f8fad5b-d9cb-469f-a165-70867728950e";
  // The SDK leases the entity blob: blobtable's writes wait their turn (exit 5).
  ASSERT_EQ(Shell(Node("lease " + Q(conn_) + " " + container_ + " " + Q(entity) + " 60 " + lease_id)).code,
            0);
  EXPECT_EQ(Shell(Cli(conn_, container_) + " put orders --mode upsert",
                  R"({"PartitionKey":"p","RowKey":"r","x":1})")
                .code,
            5);
  EXPECT_EQ(Shell(Cli(conn_, container_) + " get orders p r").code, 0);  // reads still work
  ASSERT_EQ(Shell(Node("release " + Q(conn_) + " " + container_ + " " + Q(entity) + " " + lease_id)).code,
            0);
  EXPECT_EQ(Shell(Cli(conn_, container_) + " put orders --mode upsert",
                  R"({"PartitionKey":"p","RowKey":"r","x":2})")
                .code,
            0);
  // The SDK leases the partition's lock blob: blobtable cannot take it.
  ASSERT_EQ(Shell(Node("lease " + Q(conn_) + " " + container_ + " " + Q(lock) + " 60 " + lease_id)).code,
            0);
  StoreOptions o;
  o.container = container_;
  auto store = Store::Open(conn_, o);
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  auto acquire = (*store)->blob_store().AcquireLease(lock, 15, "", {});
  EXPECT_EQ(acquire.status().code(), Code::kBusy);
  EXPECT_EQ(acquire.status().storage_code(), "LeaseAlreadyPresent");
}

INSTANTIATE_TEST_SUITE_P(Transports, InteropTest, ::testing::Values("curl", "cpprest"));

}  // namespace
}  // namespace blobtable::testing
