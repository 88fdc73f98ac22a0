// SPDX-License-Identifier: Apache-2.0
// Every bad input of docs/testing.md#bad-input and the answer it
// gets, through the CLI as a user meets it (exit code, and a message that
// says what and where), on the local store and on Azurite. Nothing crashes,
// nothing is lost.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <regex>
#include <thread>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "blobtable/store.h"
#include "model/entity_codec.h"
#include "tests/azurite.h"
#include "tests/backend.h"
#include "tests/shell.h"
#include "tests/test_util.h"
#include "txn/intent.h"
#include "util/stored_format.h"

namespace blobtable::testing {
namespace {

using json = nlohmann::json;
const std::string kTxnId = "0f8fad5b-d9cb-469f-a165-70867728950e";

class BadInput : public ::testing::Test {
 protected:
  // `blobtable --store LOCATION args`, with `input` on stdin.
  ShellRun Cli(const std::string& args, const std::string& input = "",
               const std::string& location = "") {
    return Shell(std::string(BLOBTABLE_CLI_PATH) + " --store " +
                     Quote(location.empty() ? dir_.path() + "/db" : location) + " " + args,
                 input);
  }
  // The local store's blobs, beneath the tables (to damage them).
  std::unique_ptr<Store> Open() {
    auto store = Store::Open(dir_.path() + "/db");
    EXPECT_TRUE(store.ok()) << store.status().ToString();
    return store.ok() ? std::move(*store) : nullptr;
  }
  static void ExpectError(const ShellRun& run, int code, std::vector<std::string> mentions) {
    EXPECT_EQ(run.code, code) << run.err;
    for (const std::string& m : mentions) EXPECT_NE(run.err.find(m), std::string::npos) << run.err;
  }
  TempDir dir_;
};

TEST_F(BadInput, InvalidKeysAndTableNames) {
  ExpectError(Cli("put orders", R"({"PartitionKey":"a/b","RowKey":"r"})"), 2,
              {"PartitionKey 'a/b'", "forbidden character"});
  ExpectError(Cli("put orders", R"({"PartitionKey":"p","RowKey":"tab\there"})"), 2, {"RowKey"});
  ExpectError(Cli("get t1 p r"), 2, {"table name 't1'"});
  ExpectError(Cli("put orders", R"({"RowKey":"r"})"), 2, {"PartitionKey"});
}

TEST_F(BadInput, OversizedValuesAndEntitiesAndTooManyProperties) {
  json big = {{"PartitionKey", "p"}, {"RowKey", "r"}, {"big", std::string(40000, 'x')}};
  ExpectError(Cli("put orders", big.dump()), 2, {"property 'big'", "32768"});
  json huge = {{"PartitionKey", "p"}, {"RowKey", "r"}};
  for (int i = 0; i < 40; ++i) huge["p" + std::to_string(i)] = std::string(30000, 'x');
  ExpectError(Cli("put orders", huge.dump()), 2, {"1 MiB"});
  json many = {{"PartitionKey", "p"}, {"RowKey", "r"}};
  for (int i = 0; i < 253; ++i) many["p" + std::to_string(i)] = i;
  ExpectError(Cli("put orders", many.dump()), 2, {"253 properties", "252"});
  EXPECT_EQ(Cli("get orders p r").code, 3);  // nothing was written
}

TEST_F(BadInput, WrongTypesAndMalformedJson) {
  ExpectError(Cli("put orders",
                  R"({"PartitionKey":"p","RowKey":"r","x":"abc","x@odata.type":"Edm.Int64"})"),
              2, {"property 'x'", "Edm.Int64"});
  ExpectError(Cli("put orders", R"({"PartitionKey":"p","RowKey":"r","x":null})"), 2, {"'x'"});
  ExpectError(Cli("put orders", R"({"PartitionKey":"p","RowKey":"r","x":12345678901})"), 2,
              {"'x'"});
  ExpectError(Cli("put orders", "{"), 2, {"not valid JSON"});
  ExpectError(Cli("txn", R"([{"op":"insert"}])"), 2, {"operation 0"});
}

// A blob in a table's prefix that is not an entity (written by another
// client, or damaged on its way): every read names it; it is repaired by
// overwriting or deleting it.
TEST_F(BadInput, ACorruptEntityBlobIsNamedAndRepairable) {
  auto store = Open();
  ASSERT_TRUE(store->blob_store().Put("t/orders/e/-p/-r", "not an entity", {}).ok());
  ExpectError(Cli("get orders p r"), 1, {"Corruption", "t/orders/e/-p/-r"});
  ExpectError(Cli("query orders --pk p"), 1, {"Corruption", "t/orders/e/-p/-r"});
  EXPECT_EQ(Cli("put orders --mode upsert", R"({"PartitionKey":"p","RowKey":"r","n":1})").code, 0);
  EXPECT_EQ(Cli("get orders p r").code, 0);
}

// A transaction record that is not one (so whether it committed cannot be
// told), named by an entity's intent: reads and transactions on that entity
// name it and say how to repair it; recover resolves the others, and
// --discard-damaged removes it (the entity is then the version before).
// Puts transaction kTxnId's intent (n: 1 -> 2, not leased) on orders p/a,
// as a coordinator does in its first round, with no marker.
void PlaceIntentOnA(BlobStore& blobs) {
  auto cur = blobs.Get("t/orders/e/-p/-a", {});
  ASSERT_TRUE(cur.ok());
  internal::EntityIntent intent;
  intent.txn_id = kTxnId;
  intent.lock = "t/orders/l/-p";
  intent.prev_exists = intent.next_exists = true;
  intent.prev_etag = cur->properties.etag;
  intent.prev_body = cur->data;
  intent.next_body = *internal::EncodeEntity(Entity("p", "a").Set("n", 2));
  PutOptions placed;
  placed.conditions.if_match = cur->properties.etag;
  placed.metadata = {{internal::kPrewriteMetadata, kTxnId}};
  ASSERT_TRUE(blobs.Put("t/orders/e/-p/-a", internal::EncodeIntent(intent), placed).ok());
}

TEST_F(BadInput, ACorruptTransactionRecordIsNamedAndCanBeDiscarded) {
  ASSERT_EQ(Cli("put orders", R"({"PartitionKey":"p","RowKey":"a","n":1})").code, 0);
  {
    auto store = Open();
    BlobStore& blobs = store->blob_store();
    ASSERT_NO_FATAL_FAILURE(PlaceIntentOnA(blobs));
    ASSERT_TRUE(blobs.Put("x/" + kTxnId, "garbage", {}).ok());
  }
  ExpectError(Cli("get orders p a"), 1, {"Corruption", "x/" + kTxnId, "delete it"});
  ExpectError(
      Cli("txn",
          R"([{"op":"upsert","table":"orders","entity":{"PartitionKey":"p","RowKey":"a"}}])"),
      1, {"x/" + kTxnId});
  EXPECT_EQ(
      Cli("txn", R"([{"op":"upsert","table":"orders","entity":{"PartitionKey":"q","RowKey":"c"}}])")
          .code,
      0);
  ExpectError(Cli("recover"), 1, {"1 record(s) or marker(s) damaged", "x/" + kTxnId});
  ShellRun discarded = Cli("recover --discard-damaged");
  EXPECT_EQ(discarded.code, 0) << discarded.err;
  EXPECT_EQ(json::parse(discarded.out)["resolved"], 1);
  ShellRun a = Cli("get orders p a");
  ASSERT_EQ(a.code, 0) << a.err;
  EXPECT_EQ(json::parse(a.out)["n"], 1);  // the version before the discarded transaction
  EXPECT_EQ(
      Cli("txn",
          R"([{"op":"upsert","table":"orders","entity":{"PartitionKey":"p","RowKey":"a","n":3}}])")
          .code,
      0);
}

// An intent no marker names (its coordinator died in its first round,
// before its marker was written): `recover` does not see it, and
// `recover --scan-everything` lists every entity and undoes it; a reader
// saw the version before all along.
TEST_F(BadInput, AnIntentNoMarkerNamesIsFoundOnlyByScanningEverything) {
  ASSERT_EQ(Cli("put orders", R"({"PartitionKey":"p","RowKey":"a","n":1})").code, 0);
  {
    auto store = Open();
    ASSERT_NO_FATAL_FAILURE(PlaceIntentOnA(store->blob_store()));
  }
  ShellRun marked_only = Cli("recover");
  ASSERT_EQ(marked_only.code, 0) << marked_only.err;
  EXPECT_EQ(json::parse(marked_only.out)["resolved"], 0);
  ShellRun everything = Cli("recover --scan-everything");
  ASSERT_EQ(everything.code, 0) << everything.err;
  EXPECT_EQ(json::parse(everything.out)["resolved"], 1);
  auto store = Open();
  auto a = store->blob_store().Head("t/orders/e/-p/-a", {});
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(a->properties.metadata.count(internal::kPrewriteMetadata), 0u);
  ShellRun read = Cli("get orders p a");
  ASSERT_EQ(read.code, 0) << read.err;
  EXPECT_EQ(json::parse(read.out)["n"], 1);
}

// An LMDB map too small for what is written: the write fails IOError
// saying so, and what was stored stays readable.
TEST_F(BadInput, ALocalMapTooSmallIsAClearErrorAndLosesNothing) {
  StoreOptions o;
  o.local.map_size = 4u << 20;
  auto opened = Store::Open(dir_.path() + "/small", o);
  ASSERT_TRUE(opened.ok()) << opened.status().ToString();
  auto table = *(*opened)->OpenTable("orders");
  Status failed;
  int written = 0;
  for (; written < 400 && failed.ok(); ++written)
    failed = table.Upsert(Entity("p", std::to_string(written)).Set("pad", std::string(30000, 'x')))
                 .status();
  EXPECT_EQ(failed.code(), Code::kIOError) << failed.ToString();
  EXPECT_NE(failed.message().find("local.map_size"), std::string::npos) << failed.ToString();
  for (int i = 0; i + 1 < written; ++i) EXPECT_TRUE(table.Get("p", std::to_string(i)).ok()) << i;
}

class BadInputAzure : public BadInput {
 protected:
  void SetUp() override {
    Azurite* a = Azurite::Get();
    ASSERT_NE(a, nullptr);
    azurite_ = a;
  }
  std::string Endpoint() const {
    return "BlobEndpoint=http://127.0.0.1:" + std::to_string(azurite_->port()) +
           "/devstoreaccount1";
  }
  Azurite* azurite_ = nullptr;
};

// Issue 56 item 8: exit 10 of its own (it was 2, "usage, key, JSON"),
// naming the account and never the key.
TEST_F(BadInputAzure, AWrongAccountKeyNamesTheAccountAndNoKey) {
  const std::string key = "V3JvbmdLZXlXcm9uZ0tleVdyb25nS2V5V3Jvbmc=";
  ShellRun run = Cli("--container badkey get orders p r", "",
                     "AccountName=devstoreaccount1;AccountKey=" + key + ";" + Endpoint());
  ExpectError(run, 10, {"authentication failed", "AccountKey", "account 'devstoreaccount1'"});
  EXPECT_EQ(run.err.find(key), std::string::npos);
  // The review's: an endpoint's query (a pasted SAS URL) or password was
  // printed whole.
  const std::string url =
      "http://user:SECRETPASSWORD@127.0.0.1:" + std::to_string(azurite_->port()) +
      "/devstoreaccount1?sig=SECRETSIG";
  ShellRun secret = Cli("--container badkey get orders p r", "",
                        "AccountName=devstoreaccount1;AccountKey=" + key + ";BlobEndpoint=" + url);
  EXPECT_NE(secret.code, 0);
  EXPECT_EQ(secret.err.find("SECRET"), std::string::npos) << secret.err;
}

// A port that answers every request as a web server that is not Azure
// Storage does (no x-ms-request-id): a plain 404, or a 200 HTML page;
// closed when destroyed.
class Plain404Server {
 public:
  explicit Plain404Server(bool found = false) {
    fd_ = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof(addr);
    if (bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 || listen(fd_, 16) != 0 ||
        getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len) != 0)
      return;
    port_ = ntohs(addr.sin_port);
    thread_ = std::thread([this, found] {
      for (int c; (c = accept(fd_, nullptr, nullptr)) >= 0;) {
        char buf[8192];
        std::string got;
        while (got.find("\r\n\r\n") == std::string::npos) {
          const ssize_t n = read(c, buf, sizeof buf);
          if (n <= 0) break;
          got.append(buf, static_cast<size_t>(n));
        }
        const std::string answer =
            found ? "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: 13\r\n"
                    "Connection: close\r\n\r\n<html></html>"
                  : "HTTP/1.1 404 Not Found\r\nContent-Type: text/html\r\nContent-Length: 9\r\n"
                    "Connection: close\r\n\r\nNot Found";
        (void)!write(c, answer.data(), answer.size());
        close(c);
      }
    });
  }
  ~Plain404Server() {
    shutdown(fd_, SHUT_RDWR);
    close(fd_);
    if (thread_.joinable()) thread_.join();
  }
  int port() const { return port_; }

 private:
  int fd_ = -1, port_ = 0;
  std::thread thread_;
};

// Issue 56 item 5: a wrong endpoint or account read as an empty store
// ("not found", exit 3; `query` and `tables` printed nothing, exit 0).
TEST_F(BadInputAzure, AnEndpointThatIsNotAStoreIsNeverAnEmptyStore) {
  Plain404Server web;
  ASSERT_GT(web.port(), 0);
  const std::string not_azure =
      "UseDevelopmentStorage=true;BlobEndpoint=http://127.0.0.1:" + std::to_string(web.port()) +
      "/devstoreaccount1";
  std::string conn = azurite_->ConnectionString();
  const std::string wrong_account = std::regex_replace(
      std::regex_replace(conn, std::regex("AccountName=devstoreaccount1"), "AccountName=nosuch"),
      std::regex("/devstoreaccount1"), "/nosuch");
  for (const std::string& where : {not_azure, wrong_account}) {
    for (const char* command : {"get orders p r", "query orders", "tables"}) {
      ShellRun run = Cli(std::string("--no-cache ") + command, "", where);
      ExpectError(run, 11, {"StoreNotFound"});
      EXPECT_EQ(run.out, "") << command;
    }
  }
  ExpectError(Cli("--no-cache get orders p r", "", not_azure), 11,
              {"without x-ms-request-id: it is not Azure Storage"});
  ExpectError(Cli("--no-cache get orders p r", "", wrong_account), 11,
              {"ResourceNotFound", "no Azure Storage account answers there", "account 'nosuch'"});
  // The review's: a web server answering 200 with a page read as an empty
  // store (`tables` exit 0, `--missing-table-ok count` 0).
  Plain404Server page(/*found=*/true);
  const std::string html =
      "UseDevelopmentStorage=true;BlobEndpoint=http://127.0.0.1:" + std::to_string(page.port()) +
      "/devstoreaccount1";
  for (const char* command :
       {"tables", "query orders", "--missing-table-ok count orders", "get orders p r"}) {
    ShellRun run = Cli(std::string("--no-cache ") + command, "", html);
    ExpectError(run, 11, {"StoreNotFound", "it is not Azure Storage"});
    EXPECT_EQ(run.out, "") << command;
  }
}

// Issue 56 item 2: 200 lines against a port nobody listens on took 21.6 s,
// every line tried and reported (100,000: about 3 h).
TEST_F(BadInputAzure, AnImportStorageRefusesRowAfterRowStopsWithWhereToRunAgain) {
  const int closed_port = UnusedLoopbackPort();
  ASSERT_GT(closed_port, 0);
  std::string rows;
  for (int i = 0; i < 200; ++i)
    rows += R"({"PartitionKey":"p","RowKey":"r)" + std::to_string(i) + "\"}\n";
  const std::string unreachable =
      "UseDevelopmentStorage=true;BlobEndpoint=http://127.0.0.1:" + std::to_string(closed_port) +
      "/devstoreaccount1";
  const std::string bad_key = "AccountName=devstoreaccount1;AccountKey=" +
                              std::string("V3JvbmdLZXlXcm9uZ0tleVdyb25nS2V5V3Jvbmc=;") + Endpoint();
  for (const auto& [where, code] : {std::pair{unreachable, 6}, std::pair{bad_key, 10}}) {
    ShellRun run = Cli("--no-cache --container stopping import orders", rows, where);
    ExpectError(run, code,
                {"stopped: 10 rows in a row failed on storage", "run it again from line"});
    size_t reported = 0;
    for (size_t at = 0; (at = run.err.find("blobtable: line ", at)) != std::string::npos; ++at)
      ++reported;
    EXPECT_LE(reported, 26u) << run.err;  // the rows in flight when the tenth failed, at most
  }
}

TEST_F(BadInputAzure, AnExpiredSasIsRefusedAndNotRepeated) {
  ShellRun sas = Shell(AzureClient("sas " + Quote(azurite_->ConnectionString()) + " - - expired"));
  ASSERT_EQ(sas.code, 0) << sas.err;
  const std::string token = sas.out.substr(0, sas.out.find('\n'));
  ShellRun run = Cli("--container expiredsas get orders p r", "",
                     Endpoint() + ";SharedAccessSignature=" + token);
  ExpectError(run, 10, {"authentication failed", "SharedAccessSignature", "(at http://"});
  const std::string sig = token.substr(token.find("sig=") + 4);
  EXPECT_EQ(run.err.find(sig.substr(0, sig.find('&'))), std::string::npos);
}

TEST_F(BadInputAzure, AnUnreachableEndpointIsUnavailable) {
  const int closed_port = UnusedLoopbackPort();
  ASSERT_GT(closed_port, 0);
  ShellRun run = Cli("--no-cache get orders p r", "",
                     "UseDevelopmentStorage=true;BlobEndpoint=http://127.0.0.1:" +
                         std::to_string(closed_port) + "/devstoreaccount1");
  ExpectError(run, 6, {"Unavailable"});
}

// A container nobody created holds no table (a mistyped --container is
// never an empty answer; issue 56), a listing of tables is empty, and the
// first write creates it.
TEST_F(BadInputAzure, AMissingContainerHoldsNoTableAndTheFirstWriteMakesIt) {
  const std::string conn = azurite_->ConnectionString(), container = FreshContainer("missing");
  ExpectError(Cli("--container " + container + " get orders p r", "", conn), 3,
              {"table 'orders' does not exist", "the store holds no table"});
  ShellRun query = Cli("--container " + container + " query orders", "", conn);
  ExpectError(query, 3, {"the store holds no table"});
  EXPECT_EQ(query.out, "");
  ShellRun tables = Cli("--container " + container + " tables", "", conn);
  EXPECT_EQ(tables.code, 0) << tables.err;
  EXPECT_EQ(tables.out, "");
  EXPECT_EQ(
      Cli("--container " + container + " put orders", R"({"PartitionKey":"p","RowKey":"r"})", conn)
          .code,
      0);
  EXPECT_EQ(Cli("--container " + container + " get orders p r", "", conn).code, 0);
}

}  // namespace
}  // namespace blobtable::testing
