// SPDX-License-Identifier: Apache-2.0
// Interoperability on Azurite: blobtable's blobs are ordinary Azure blobs that
// the official JavaScript SDK reads at the name `blobtable locate` prints,
// with the same ETag; leases that SDK holds are respected by blobtable.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <fstream>
#include <sstream>

#include "blobtable/store.h"
#include "storage/azure/http_transport.h"
#include "tests/azurite.h"
#include "tests/shell.h"
#include "devtools/proxy/fault_proxy.h"
#include "tests/test_util.h"

namespace blobtable::testing {
namespace {

using json = nlohmann::json;

std::string Cli(const std::string& conn, const std::string& container) {
  return std::string(BLOBTABLE_CLI_PATH) + " --store " + Quote(conn) + " --container " + container;
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
  ShellRun got = Shell(AzureClient("get " + Quote(conn_) + " " + container_ + " " +
                                   Quote(where["entity_blob"].get<std::string>())));
  ASSERT_EQ(got.code, 0) << got.out;
  json props = json::parse(got.out);
  EXPECT_EQ(props["etag"], etag);
  EXPECT_GT(props["length"].get<int>(), 0);
  // The only marks blobtable leaves: the write id of its conditional write
  // (what lets a retry recognise its own lost write), and the small body's
  // inline copy for listings.
  EXPECT_EQ(props["metadata"].size(), 2u) << props.dump();
  EXPECT_TRUE(props["metadata"].contains("blobtablewriteid")) << props.dump();
  EXPECT_TRUE(props["metadata"].contains("btbody")) << props.dump();
}

TEST_P(InteropTest, LeasesHeldByAnotherClientAreRespected) {
  ASSERT_EQ(
      Shell(Cli(conn_, container_) + " put orders", R"({"PartitionKey":"p","RowKey":"r"})").code,
      0);
  json where = json::parse(Shell(Cli(conn_, container_) + " locate orders p r").out);
  std::string entity = where["entity_blob"], lock = where["lock_blob"];
  const std::string lease_id = "0f8fad5b-d9cb-469f-a165-70867728950e";
  // The SDK leases the entity blob: blobtable's writes wait their turn (exit 5).
  ASSERT_EQ(Shell(AzureClient("lease " + Quote(conn_) + " " + container_ + " " + Quote(entity) +
                              " 60 " + lease_id))
                .code,
            0);
  EXPECT_EQ(Shell(Cli(conn_, container_) + " --lock-timeout 1 put orders --mode upsert",
                  R"({"PartitionKey":"p","RowKey":"r","x":1})")
                .code,
            5);
  EXPECT_EQ(Shell(Cli(conn_, container_) + " get orders p r").code, 0);  // reads still work
  ASSERT_EQ(Shell(AzureClient("release " + Quote(conn_) + " " + container_ + " " + Quote(entity) +
                              " " + lease_id))
                .code,
            0);
  EXPECT_EQ(Shell(Cli(conn_, container_) + " put orders --mode upsert",
                  R"({"PartitionKey":"p","RowKey":"r","x":2})")
                .code,
            0);
  // The SDK leases the partition's lock blob: blobtable cannot take it.
  ASSERT_EQ(Shell(AzureClient("lease " + Quote(conn_) + " " + container_ + " " + Quote(lock) +
                              " 60 " + lease_id))
                .code,
            0);
  StoreOptions o;
  o.container = container_;
  auto store = Store::Open(conn_, o);
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  auto acquire = (*store)->blob_store().AcquireLease(lock, 15, "", {});
  EXPECT_EQ(acquire.status().code(), Code::kBusy);
  EXPECT_EQ(acquire.status().storage_code(), "LeaseAlreadyPresent");
}

// A SAS made by the official SDK authenticates blobtable (no account key).
TEST_P(InteropTest, SharedAccessSignatureFromTheSdkWorks) {
  ShellRun sas = Shell(AzureClient("sas " + Quote(conn_) + " - -"));
  ASSERT_EQ(sas.code, 0) << sas.out;
  std::string token = sas.out.substr(0, sas.out.find('\n'));
  ASSERT_NE(token.find("sig="), std::string::npos);
  std::string endpoint = conn_.substr(conn_.find("BlobEndpoint="));
  endpoint = endpoint.substr(0, endpoint.find(';'));
  std::string sas_conn =
      endpoint + ";SharedAccessSignature=" + token + ";HttpTransport=" + GetParam();
  StoreOptions o;
  o.container = container_;
  auto store = Store::Open(sas_conn, o);
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  auto table = (*store)->OpenTable("viasas");
  ASSERT_TRUE(table->Insert(Entity("p", "r")).ok());
  EXPECT_TRUE(table->Get("p", "r").ok());
  QueryOptions q;
  EXPECT_EQ(table->Query(q)->entities.size(), 1u);
  EXPECT_TRUE(table->Delete("p", "r", "*").ok());
  // The verbose log of a SAS session shows no part of the token.
  ShellRun put = Shell(std::string(BLOBTABLE_CLI_PATH) + " -v --store " + Quote(sas_conn) +
                           " --container " + container_ + " put viasas",
                       R"({"PartitionKey":"p","RowKey":"v"})");
  ASSERT_EQ(put.code, 0);
  const std::string& log = put.err;
  std::string sig = token.substr(token.find("sig=") + 4);
  sig = sig.substr(0, sig.find('&'));
  EXPECT_NE(log.find("PUT t/viasas/e/-p/-v -> 201"), std::string::npos) << log;
  EXPECT_EQ(log.find(sig), std::string::npos) << log;
  EXPECT_EQ(log.find("sig="), std::string::npos) << log;
}

TEST_P(InteropTest, VerboseLogWithAnAccountKeyHoldsNoSecrets) {
  ShellRun put =
      Shell(Cli(conn_, container_) + " -v put logged", R"({"PartitionKey":"p","RowKey":"r"})");
  ASSERT_EQ(put.code, 0);
  ShellRun get = Shell(Cli(conn_, container_) + " -v get logged p missing");
  EXPECT_EQ(get.code, 3);
  const std::string log = put.err + get.err;
  // One line per request: method, blob, status, error code, ms, attempt.
  EXPECT_NE(log.find("GET t/logged/e/-p/-missing -> 404 BlobNotFound"), std::string::npos) << log;
  EXPECT_NE(log.find("attempt 1"), std::string::npos);
  for (const char* secret : {"Eby8vdM02xNOcqFlqUwJPLlm", "SharedKey", "Authorization", "sig="})
    EXPECT_EQ(log.find(secret), std::string::npos) << secret << " in:\n" << log;
}

// HTTPS: certificates are verified by default; a CA file makes a private
// certificate acceptable.
TEST_P(InteropTest, HttpsVerifiesCertificatesAndAcceptsAGivenCaFile) {
  Azurite* tls = Azurite::GetHttps();
  ASSERT_NE(tls, nullptr);
  StoreOptions o;
  o.container = container_;
  o.azure.retry.max_attempts = 1;
  auto unverified = Store::Open(tls->ConnectionString(GetParam()), o);  // sends nothing
  ASSERT_TRUE(unverified.ok()) << unverified.status().ToString();
  auto refused = (*unverified)->OpenTable("secure")->Upsert(Entity("p", "r"));
  EXPECT_EQ(refused.status().code(), Code::kInvalidArgument) << refused.status().ToString();
  EXPECT_NE(refused.status().message().find("TLS certificate verification"), std::string::npos)
      << refused.status().ToString();
  auto verified = Store::Open(tls->ConnectionString(GetParam()) + ";CaFile=" + tls->cert_file(), o);
  ASSERT_TRUE(verified.ok()) << verified.status().ToString();
  auto table = (*verified)->OpenTable("secure");
  ASSERT_TRUE(table->Upsert(Entity("p", "r")).ok());
  EXPECT_TRUE(table->Get("p", "r").ok());
}

// HTTPS to a port that speaks plain HTTP is a configuration error that
// names the likely cause, on both transports: never a certificate failure
// (there was no certificate), never retried.
TEST_P(InteropTest, HttpsToAPlainHttpPortSaysSo) {
  Azurite* a = Azurite::Get();
  ASSERT_NE(a, nullptr);
  StoreOptions o;
  o.container = container_;
  o.azure.retry.max_attempts = 3;
  o.azure.retry.initial_delay = std::chrono::milliseconds(1);
  std::vector<std::string> log;
  o.request_log = [&](const std::string& line) { log.push_back(line); };
  auto store = Store::Open(
      "UseDevelopmentStorage=true;BlobEndpoint=https://127.0.0.1:" + std::to_string(a->port()) +
          "/devstoreaccount1;HttpTransport=" + GetParam(),
      o);
  ASSERT_TRUE(store.ok()) << store.status().ToString();  // opening sends nothing
  Status s = (*store)->blob_store().Head("probe", {}).status();
  EXPECT_EQ(s.code(), Code::kInvalidArgument) << s.ToString();
  EXPECT_EQ(s.message().find("certificate"), std::string::npos) << s.ToString();
  EXPECT_NE(s.message().find("does not speak TLS"), std::string::npos) << s.ToString();
  EXPECT_EQ(log.size(), 1u);  // not retried
}

// A server that accepts connections but never answers: each request ends at
// its timeout with Unavailable (the outcome is asserted, not the time).
TEST_P(InteropTest, UnansweredRequestsTimeOutAsUnavailable) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(addr);
  ASSERT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  ASSERT_EQ(listen(fd, 16), 0);  // the kernel completes handshakes; nobody reads
  ASSERT_EQ(getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len), 0);
  StoreOptions o;
  o.azure.request_timeout = std::chrono::milliseconds(300);
  o.azure.retry.max_attempts = 2;
  o.azure.retry.initial_delay = std::chrono::milliseconds(1);
  std::vector<std::string> log;
  o.request_log = [&](const std::string& line) { log.push_back(line); };
  auto store = Store::Open(
      "AccountName=devstoreaccount1;AccountKey=YmFy;BlobEndpoint=http://127.0.0.1:" +
          std::to_string(ntohs(addr.sin_port)) + "/devstoreaccount1;HttpTransport=" + GetParam(),
      o);
  ASSERT_TRUE(store.ok()) << store.status().ToString();  // opening sends nothing
  Status s = (*store)->blob_store().Head("probe", {}).status();
  close(fd);
  EXPECT_EQ(s.code(), Code::kUnavailable) << s.ToString();
  ASSERT_EQ(log.size(), 2u);  // retried once, then gave up
  EXPECT_NE(log[1].find("no response (Unavailable)"), std::string::npos) << log[1];
}

// Answers each connection with the next canned HTTP response (the last one
// repeats), counting requests. Loopback only; stops on destruction.
class CannedServer {
 public:
  explicit CannedServer(std::vector<std::string> responses) : responses_(std::move(responses)) {
    fd_ = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof(addr);
    EXPECT_EQ(bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
    EXPECT_EQ(listen(fd_, 16), 0);
    EXPECT_EQ(getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len), 0);
    port_ = ntohs(addr.sin_port);
    thread_ = std::thread([this] { Serve(); });
  }
  ~CannedServer() {
    shutdown(fd_, SHUT_RDWR);  // accept() returns
    thread_.join();
    close(fd_);
  }
  std::string address() const { return "127.0.0.1:" + std::to_string(port_); }
  int requests() const { return requests_.load(); }

 private:
  void Serve() {
    for (;;) {
      int c = accept(fd_, nullptr, nullptr);
      if (c < 0) return;
      std::string in;
      char buf[4096];
      size_t end;
      while ((end = in.find("\r\n\r\n")) == std::string::npos) {
        ssize_t n = read(c, buf, sizeof(buf));
        if (n <= 0) break;
        in.append(buf, static_cast<size_t>(n));
      }
      if (end != std::string::npos) {
        std::string head = in.substr(0, end);
        for (char& ch : head) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
        size_t cl = head.find("content-length:");
        size_t body = cl == std::string::npos ? 0 : std::stoul(head.substr(cl + 15));
        while (in.size() < end + 4 + body) {
          ssize_t n = read(c, buf, sizeof(buf));
          if (n <= 0) break;
          in.append(buf, static_cast<size_t>(n));
        }
        int i = requests_++;
        const std::string& out = responses_[std::min<size_t>(i, responses_.size() - 1)];
        (void)!send(c, out.data(), out.size(), MSG_NOSIGNAL);  // the client may hang up
      }
      close(c);
    }
  }
  std::vector<std::string> responses_;
  int fd_ = -1, port_ = 0;
  std::atomic<int> requests_{0};
  std::thread thread_;
};

// An answer as Azure Storage gives it (with a request id: one without is
// not Azure Storage's, and refused as such).
std::string Answer(const std::string& status_line, const std::string& headers = "") {
  return "HTTP/1.1 " + status_line + "\r\nx-ms-request-id: canned\r\n" + headers +
         "Content-Length: 0\r\nConnection: close\r\n\r\n";
}

// A store on the dev account at a test server's `address`, retrying fast.
Result<std::unique_ptr<Store>> OpenAgainst(const std::string& address, const std::string& transport,
                                           int max_attempts) {
  StoreOptions o;
  o.azure.retry.max_attempts = max_attempts;
  o.azure.retry.initial_delay = std::chrono::milliseconds(1);
  return Store::Open("AccountName=devstoreaccount1;AccountKey=YmFy;BlobEndpoint=http://" + address +
                         "/devstoreaccount1;HttpTransport=" + transport,
                     o);
}

// A redirect is never followed, on either transport: it would carry the
// request (and its Authorization header) to another host. It is an error
// naming where it pointed; the other host hears nothing.
TEST_P(InteropTest, RedirectsAreNeverFollowed) {
  CannedServer elsewhere({Answer("201 Created", "ETag: \"0x9\"\r\n")});
  CannedServer service({Answer("201 Created"),  // create container
                        Answer("302 Found", "Location: http://" + elsewhere.address() +
                                                "/devstoreaccount1/blobtable/t\r\n")});
  auto store = OpenAgainst(service.address(), GetParam(), /*max_attempts=*/3);
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  auto put = (*store)->blob_store().Put("t", "x", {});
  EXPECT_EQ(put.status().code(), Code::kInvalidArgument) << put.status().ToString();
  EXPECT_EQ(put.status().http_status(), 302);
  EXPECT_NE(put.status().message().find("redirected it to '" + elsewhere.address() + "'"),
            std::string::npos)
      << put.status().ToString();
  EXPECT_EQ(service.requests(), 2);  // not retried
  EXPECT_EQ(elsewhere.requests(), 0);
}

// Response bodies are capped: a success answer over the cap fails Corruption
// (curl stops reading it); an error answer keeps at most its first 64 KiB.
TEST_P(InteropTest, ResponseBodiesAreCapped) {
  const std::string big(2u << 20, 'x');
  auto answer = [&](const std::string& status) {
    return "HTTP/1.1 " + status + "\r\nContent-Length: " + std::to_string(big.size()) +
           "\r\nConnection: close\r\n\r\n" + big;
  };
  CannedServer service({answer("200 OK"), answer("500 Internal Server Error")});
  internal::TransportOptions t;
  t.max_response_bytes = 1u << 20;
  auto transport =
      GetParam() == "curl" ? internal::MakeCurlTransport(t) : internal::MakeCpprestTransport(t);
  internal::HttpRequest r;
  r.method = "GET";
  r.url = "http://" + service.address() + "/devstoreaccount1/c/b";
  r.timeout = std::chrono::seconds(10);
  auto too_big = transport->Send(r);
  EXPECT_EQ(too_big.status().code(), Code::kCorruption) << too_big.status().ToString();
  auto error = transport->Send(r);
  ASSERT_TRUE(error.ok()) << error.status().ToString();
  EXPECT_EQ(error->status, 500);
  EXPECT_LE(error->body.size(), internal::kMaxErrorBodyBytes);
}

// A hostile or broken Content-Length never throws out of either transport
// (cpprest parses it itself; the store parses it for HEAD): both say
// Corruption, not retried, and nothing is taken as a success.
TEST_P(InteropTest, MalformedContentLengthsAreErrorsNotExceptions) {
  for (const char* length : {"99999999999999999999999", "12abc", "-1"}) {
    CannedServer service({Answer("201 Created"),  // create container
                          "HTTP/1.1 200 OK\r\nETag: \"0x1\"\r\nContent-Length: " +
                              std::string(length) + "\r\nConnection: close\r\n\r\n"});
    auto store = OpenAgainst(service.address(), GetParam(), /*max_attempts=*/2);
    ASSERT_TRUE(store.ok()) << store.status().ToString();
    for (bool head : {false, true}) {
      auto got = head ? (*store)->blob_store().Head("t", {}) : (*store)->blob_store().Get("t", {});
      EXPECT_FALSE(got.ok()) << length << (head ? " HEAD" : " GET");
      EXPECT_EQ(got.status().code(), Code::kCorruption)
          << length << ": " << got.status().ToString();
      EXPECT_EQ(service.requests(), 1 + (head ? 2 : 1)) << "not retried";
    }
  }
}

// A CA file that cannot be read is a configuration error, said once and
// the same way by both transports (cpprest used to retry it as Unavailable).
TEST_P(InteropTest, AnUnreadableCaFileIsInvalidArgument) {
  auto store = Store::Open(
      "AccountName=devstoreaccount1;AccountKey=YmFy;BlobEndpoint=https://127.0.0.1:9/"
      "devstoreaccount1;CaFile=/nonexistent/ca.pem;HttpTransport=" +
      GetParam());
  EXPECT_EQ(store.status().code(), Code::kInvalidArgument) << store.status().ToString();
  EXPECT_NE(store.status().message().find("CaFile"), std::string::npos);
}

// A store on Azurite's dev account reached through `proxy`, retrying fast.
Result<std::unique_ptr<Store>> OpenViaProxy(int proxy_port, const std::string& transport,
                                            const std::string& container) {
  StoreOptions o;
  o.container = container;
  o.azure.retry.initial_delay = std::chrono::milliseconds(1);
  return Store::Open(
      "UseDevelopmentStorage=true;BlobEndpoint=http://127.0.0.1:" + std::to_string(proxy_port) +
          "/devstoreaccount1;HttpTransport=" + transport,
      o);
}

// Azurite behind a fault proxy of its own, and a store through it.
struct Proxied {
  std::unique_ptr<proxy::FaultProxy> proxy;
  std::unique_ptr<Store> store;
};
Result<Proxied> StartProxied(const std::string& transport, const std::string& container) {
  Azurite* a = Azurite::Get();
  if (a == nullptr) return Status::Unavailable("Azurite did not start");
  auto started = proxy::FaultProxy::Start(a->port());
  if (!started.ok()) return started.status();
  auto store = OpenViaProxy((*started)->port(), transport, container);
  if (!store.ok()) return store.status();
  return Proxied{std::move(*started), std::move(*store)};
}

// Writes applied whose answer is lost (the connection reset after the
// server answered): curl re-sends them by itself on a fresh connection,
// cpprest (which never reuses a connection) fails and blobtable retries.
// Either way the retry meets the write's own effect, and blobtable says
// what happened: never a false Conflict or NotFound.
TEST_P(InteropTest, WritesWhoseAnswerWasLostAreNeverMisreported) {
  auto proxied = StartProxied(GetParam(), container_);
  ASSERT_TRUE(proxied.ok()) << proxied.status().ToString();
  proxy::FaultProxy& proxy = *proxied->proxy;
  BlobStore& blobs = proxied->store->blob_store();
  ASSERT_TRUE(blobs.Put("warm", "x", {}).ok());  // a connection now in use, for curl to reuse
  const std::string blob = "PUT /devstoreaccount1/" + container_ + "/b ";

  PutOptions create;  // applied; the re-sent create meets its own blob (409)
  create.conditions.if_none_match = "*";
  proxy.Inject(proxy::ProxyFault::kLoseAnswer, proxy::FaultProxy::Containing(blob), 1);
  auto created = blobs.Put("b", "v1", create);
  ASSERT_TRUE(created.ok()) << created.status().ToString();

  PutOptions at;  // applied; the re-sent write meets the new ETag (412)
  at.conditions.if_match = created->etag;
  proxy.Inject(proxy::ProxyFault::kLoseAnswer, proxy::FaultProxy::Containing(blob), 1);
  auto replaced = blobs.Put("b", "v2", at);
  ASSERT_TRUE(replaced.ok()) << replaced.status().ToString();
  EXPECT_EQ(blobs.Get("b", {})->data, "v2");

  WriteOptions meta;  // likewise for metadata
  meta.conditions.if_match = replaced->etag;
  proxy.Inject(proxy::ProxyFault::kLoseAnswer, proxy::FaultProxy::Containing("comp=metadata"), 1);
  auto set = blobs.SetMetadata("b", {{"k", "v"}}, meta);
  EXPECT_TRUE(set.ok()) << set.status().ToString();

  proxy.Inject(proxy::ProxyFault::kLoseAnswer,
               proxy::FaultProxy::Containing("DELETE /devstoreaccount1/" + container_ + "/b "), 1);
  Status deleted = blobs.Delete("b", {});  // gone, as asked: not NotFound
  EXPECT_TRUE(deleted.ok()) << deleted.ToString();

  ASSERT_TRUE(blobs.Put("l", "x", {}).ok());  // a release met by "no lease": its own
  auto lease = blobs.AcquireLease("l", 15, "", {});
  ASSERT_TRUE(lease.ok()) << lease.status().ToString();
  proxy.Inject(proxy::ProxyFault::kLoseAnswer, proxy::FaultProxy::Containing("comp=lease"), 1);
  auto released = blobs.ReleaseLease("l", lease->lease_id, {});
  EXPECT_TRUE(released.ok()) << released.status().ToString();
  EXPECT_EQ(blobs.Head("l", {})->properties.lease_state, LeaseState::kAvailable);
  EXPECT_EQ(proxy.injected(proxy::ProxyFault::kLoseAnswer), 5);
}

// Issue 29: every lease action (and a write under a lease) applied with its
// answer lost: the transport re-sends it, and what the re-sent request
// meets is the action's own effect. Each must say what happened: the
// acquire, change, renew and break succeed (they are idempotent for the id
// or the state they leave); a conditional write under the lease is
// recognised by its write id. docs/azure.md#write-ids has the table.
TEST_P(InteropTest, LeaseActionsWhoseAnswerWasLostAreNeverMisreported) {
  auto proxied = StartProxied(GetParam(), container_);
  ASSERT_TRUE(proxied.ok()) << proxied.status().ToString();
  proxy::FaultProxy& proxy = *proxied->proxy;
  BlobStore& blobs = proxied->store->blob_store();
  auto put = blobs.Put("m", "x", {});
  ASSERT_TRUE(put.ok());
  const auto leases = proxy::FaultProxy::Containing("comp=lease");
  const std::string first = "11111111-1111-4111-8111-111111111111";
  const std::string second = "22222222-2222-4222-8222-222222222222";

  AccessConditions at;  // an acquire If-Match: a lease leaves the ETag alone
  at.if_match = put->etag;
  proxy.Inject(proxy::ProxyFault::kLoseAnswer, leases, 1);
  auto acquired = blobs.AcquireLease("m", kInfiniteLease, first, at);
  ASSERT_TRUE(acquired.ok()) << acquired.status().ToString();
  EXPECT_EQ(acquired->lease_id, first);

  proxy.Inject(proxy::ProxyFault::kLoseAnswer, leases, 1);
  auto changed = blobs.ChangeLease("m", first, second, {});
  ASSERT_TRUE(changed.ok()) << changed.status().ToString();
  EXPECT_EQ(changed->lease_id, second);

  PutOptions under;  // a conditional write under the lease
  under.lease_id = second;
  under.conditions.if_match = put->etag;
  proxy.Inject(proxy::ProxyFault::kLoseAnswer,
               proxy::FaultProxy::Containing("PUT /devstoreaccount1/" + container_ + "/m "), 1);
  auto rewritten = blobs.Put("m", "y", under);
  ASSERT_TRUE(rewritten.ok()) << rewritten.status().ToString();

  proxy.Inject(proxy::ProxyFault::kLoseAnswer, leases, 1);
  auto broken = blobs.BreakLease("m", 0, {});
  ASSERT_TRUE(broken.ok()) << broken.status().ToString();
  auto head = blobs.Head("m", {});
  ASSERT_TRUE(head.ok());
  EXPECT_NE(head->properties.lease_status, LeaseStatus::kLocked);

  ASSERT_TRUE(blobs.Put("f", "x", {}).ok());  // a finite lease, renewed
  auto finite = blobs.AcquireLease("f", 15, first, {});
  ASSERT_TRUE(finite.ok());
  proxy.Inject(proxy::ProxyFault::kLoseAnswer, leases, 1);
  auto renewed = blobs.RenewLease("f", first, {});
  EXPECT_TRUE(renewed.ok()) << renewed.status().ToString();
  EXPECT_EQ(proxy.injected(proxy::ProxyFault::kLoseAnswer), 5);
  EXPECT_EQ(blobs.Get("m", {})->data, "y");
}

// Issue 29: a plain delete of any version (a HEAD, then a DELETE If-Match
// the ETag seen) whose answer is lost: the transport re-sends it, and
// Azurite answers the re-sent If-Match of a blob the first attempt deleted
// with 412. Gone, as asked: OK, not NotFound. With an ETag: OutcomeUnknown.
TEST_P(InteropTest, ADeleteWhoseAnswerWasLostIsOkForAnyVersionAndUnknownForAnETag) {
  auto proxied = StartProxied(GetParam(), container_);
  ASSERT_TRUE(proxied.ok()) << proxied.status().ToString();
  proxy::FaultProxy& proxy = *proxied->proxy;
  auto table = proxied->store->OpenTable("lost");
  ASSERT_TRUE(table.ok());
  ASSERT_TRUE(table->Insert(Entity("p", "any").Set("v", 1)).ok());
  auto with_etag = table->Insert(Entity("p", "etag").Set("v", 1));
  ASSERT_TRUE(with_etag.ok());
  const auto deletes =
      proxy::FaultProxy::Containing("DELETE /devstoreaccount1/" + container_ + "/t/");
  proxy.Inject(proxy::ProxyFault::kLoseAnswer, deletes, 1);
  Status any = table->Delete("p", "any", "*");
  EXPECT_TRUE(any.ok()) << any.ToString();
  proxy.Inject(proxy::ProxyFault::kLoseAnswer, deletes, 1);
  Status etag = table->Delete("p", "etag", with_etag->etag());
  EXPECT_EQ(etag.code(), Code::kOutcomeUnknown) << etag.ToString();
  EXPECT_EQ(proxy.injected(proxy::ProxyFault::kLoseAnswer), 2);
  EXPECT_TRUE(table->Get("p", "any").status().IsNotFound());
  EXPECT_TRUE(table->Get("p", "etag").status().IsNotFound());
}

// Found by the queue stress workload (issue 30): a create (If-None-Match *)
// applied, its answer held past the request timeout, was sent again; had
// the blob been deleted meanwhile (a queue item completed by another
// worker), the retry made it anew and said OK. A create is now never sent
// again after an attempt that may have been applied: its write id on the
// blob settles it.
TEST_P(InteropTest, ACreateIsNeverSentAgainAfterAnAttemptThatMayHaveBeenApplied) {
  Azurite* a = Azurite::Get();
  ASSERT_NE(a, nullptr);
  auto proxy = proxy::FaultProxy::Start(a->port());
  ASSERT_TRUE(proxy.ok()) << proxy.status().ToString();
  StoreOptions direct_options;
  direct_options.container = container_;
  auto direct = Store::Open(conn_, direct_options);
  ASSERT_TRUE(direct.ok()) << direct.status().ToString();
  ASSERT_TRUE((*direct)->blob_store().Put("warm", "x", {}).ok());  // the container exists
  bool deleted_meanwhile = false;
  HookedRealClock clock([&] {  // another client, while the create waits to be re-sent
    deleted_meanwhile = (*direct)->blob_store().Delete("item", {}).ok();
  });
  int puts = 0;
  StoreOptions o = direct_options;
  o.clock = &clock;
  o.azure.request_timeout = std::chrono::milliseconds(300);
  o.azure.retry.initial_delay = std::chrono::milliseconds(1);
  o.request_log = [&](const std::string& line) {
    if (line.find("PUT") != std::string::npos && line.find("item") != std::string::npos) ++puts;
  };
  auto store = Store::Open("UseDevelopmentStorage=true;BlobEndpoint=http://127.0.0.1:" +
                               std::to_string((*proxy)->port()) +
                               "/devstoreaccount1;HttpTransport=" + GetParam(),
                           o);
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  (*proxy)->SetStall(std::chrono::milliseconds(1000));
  (*proxy)->Inject(proxy::ProxyFault::kStall, proxy::FaultProxy::Containing("/item "), 1);
  PutOptions create;
  create.conditions.if_none_match = std::string(kAnyETag);
  auto made = (*store)->blob_store().Put("item", "body", create);
  EXPECT_TRUE(made.ok()) << made.status().ToString();  // its write id is on the blob
  EXPECT_EQ(puts, 1);
  EXPECT_FALSE(deleted_meanwhile) << "re-sent after its blob was deleted: made anew";
}

// Issue 30, hole 8: what Unavailable means for an unconditional write
// (docs/api.md#errors). An Upsert whose every attempt was applied and whose
// answers were held past the request timeout says Unavailable, and the
// write is there: an unconditional write that says Unavailable may have
// been applied, and calling it again is harmless (it writes the same).
TEST_P(InteropTest, AnUnconditionalWriteThatSaysUnavailableMayHaveBeenApplied) {
  Azurite* a = Azurite::Get();
  ASSERT_NE(a, nullptr);
  auto proxy = proxy::FaultProxy::Start(a->port());
  ASSERT_TRUE(proxy.ok()) << proxy.status().ToString();
  StoreOptions o;
  o.container = container_;
  o.azure.request_timeout = std::chrono::milliseconds(300);
  o.azure.retry.max_attempts = 2;
  o.azure.retry.initial_delay = std::chrono::milliseconds(1);
  auto store = Store::Open("UseDevelopmentStorage=true;BlobEndpoint=http://127.0.0.1:" +
                               std::to_string((*proxy)->port()) +
                               "/devstoreaccount1;HttpTransport=" + GetParam(),
                           o);
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  auto table = (*store)->OpenTable("unavailable");
  ASSERT_TRUE(table.ok());
  ASSERT_TRUE(table->Upsert(Entity("p", "r").Set("v", 1)).ok());
  (*proxy)->SetStall(std::chrono::milliseconds(1000));
  (*proxy)->Inject(proxy::ProxyFault::kStall,
                   proxy::FaultProxy::Containing("PUT /devstoreaccount1/" + container_ + "/t/"), 4);
  Status upsert = table->Upsert(Entity("p", "r").Set("v", 2)).status();
  EXPECT_EQ(upsert.code(), Code::kUnavailable) << upsert.ToString();
  EXPECT_TRUE(upsert.IsRetryable());
  (*proxy)->Inject(proxy::ProxyFault::kStall, nullptr, 0);
  auto now = table->Get("p", "r");
  ASSERT_TRUE(now.ok()) << now.status().ToString();
  EXPECT_EQ(*now->FindAs<int32_t>("v"), 2);  // applied, though it said Unavailable
  ASSERT_TRUE(table->Upsert(Entity("p", "r").Set("v", 2)).ok());  // again: harmless
  EXPECT_EQ(*table->Get("p", "r")->FindAs<int32_t>("v"), 2);
}

// The commit point of a transaction (the PUT that rewrites its pending
// record committed) is applied and its answer lost. The transaction is
// committed, and says so; if the check that would tell cannot be made, it
// says the outcome is unknown (never "nothing was committed"), and a later
// read finds it committed, whole.
class CommitPointTest : public InteropTest {
 protected:
  // The record's second PUT (its first creates it pending, in round 1);
  // `passed`, if given, is set once it has gone by.
  static proxy::FaultProxy::Match CommitPoint(std::shared_ptr<std::atomic<bool>> passed = nullptr) {
    auto seen = std::make_shared<int>(0);
    return [seen, passed](const std::string& line) {
      const bool it = line.find("/x/") != std::string::npos &&
                      line.find("comp=") == std::string::npos && line.rfind("PUT ", 0) == 0 &&
                      ++*seen == 2;
      if (it && passed) *passed = true;
      return it;
    };
  }
  // A read of a record once the commit point has gone by (`passed`): the
  // coordinator's look at its record in round 2 is not one.
  static proxy::FaultProxy::Match ReadOfARecordAfter(std::shared_ptr<std::atomic<bool>> passed) {
    return [passed](const std::string& line) {
      return *passed && line.find("/x/") != std::string::npos &&
             (line.rfind("GET ", 0) == 0 || line.rfind("HEAD ", 0) == 0);
    };
  }
  // A store through `proxy`, its container made (the first write makes
  // it, and CommitPoint() counts the record's PUTs).
  std::unique_ptr<Store> OpenVia(int proxy_port) {
    auto store = OpenViaProxy(proxy_port, GetParam(), container_);
    EXPECT_TRUE(store.ok()) << store.status().ToString();
    if (!store.ok()) return nullptr;
    EXPECT_TRUE((*store)->blob_store().Put("warm", "", {}).ok());
    return std::move(*store);
  }
  static Result<std::vector<CommittedWrite>> TransferBetweenTwoPartitions(Store& store) {
    auto table = store.OpenTable("ledger");
    auto txn = store.Begin();
    for (const char* pk : {"a", "b"}) {
      Entity e(pk, "1");
      e.Set("v", int64_t{1});
      EXPECT_TRUE(txn->Upsert(*table, e).ok());
    }
    return txn->Commit();
  }
};

TEST_P(CommitPointTest, ALostAnswerIsSettledAsCommitted) {
  auto started = proxy::FaultProxy::Start(Azurite::Get()->port());
  ASSERT_TRUE(started.ok()) << started.status().ToString();
  proxy::FaultProxy& proxy = **started;
  auto store = OpenVia(proxy.port());
  ASSERT_NE(store, nullptr);
  proxy.Inject(proxy::ProxyFault::kLoseAnswer, CommitPoint(), 1);
  auto committed = TransferBetweenTwoPartitions(*store);
  ASSERT_TRUE(committed.ok()) << committed.status().ToString();
  EXPECT_EQ(proxy.injected(proxy::ProxyFault::kLoseAnswer), 1);
  auto table = store->OpenTable("ledger");
  EXPECT_TRUE(table->Get("a", "1").ok());
  EXPECT_TRUE(table->Get("b", "1").ok());
}

TEST_P(CommitPointTest, AnUncheckableLostAnswerIsOutcomeUnknownAndAReadSettlesIt) {
  auto started = proxy::FaultProxy::Start(Azurite::Get()->port());
  ASSERT_TRUE(started.ok()) << started.status().ToString();
  proxy::FaultProxy& proxy = **started;
  auto store = OpenVia(proxy.port());
  ASSERT_NE(store, nullptr);
  auto passed = std::make_shared<std::atomic<bool>>(false);
  proxy.Inject(proxy::ProxyFault::kLoseAnswer, CommitPoint(passed), 1);
  proxy.Inject(proxy::ProxyFault::kAnswer503, ReadOfARecordAfter(passed), 1000);
  auto committed = TransferBetweenTwoPartitions(*store);
  EXPECT_EQ(committed.status().code(), Code::kOutcomeUnknown) << committed.status().ToString();
  EXPECT_EQ(proxy.injected(proxy::ProxyFault::kLoseAnswer), 1);
  EXPECT_GT(proxy.injected(proxy::ProxyFault::kAnswer503), 0);
  proxy.Inject(proxy::ProxyFault::kAnswer503, ReadOfARecordAfter(passed), 0);

  // Another client, with nothing in the way.
  auto direct = Store::Open(conn_, [&] {
    StoreOptions o;
    o.container = container_;
    return o;
  }());
  ASSERT_TRUE(direct.ok()) << direct.status().ToString();
  BlobStore& blobs = (*direct)->blob_store();
  ListOptions list;
  list.prefix = "x/";
  auto records = blobs.List(list);
  ASSERT_TRUE(records.ok()) << records.status().ToString();
  ASSERT_EQ(records->items.size(), 1u);  // committed, and left for whoever meets it
  auto table = (*direct)->OpenTable("ledger");
  auto a = table->Get("a", "1");
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  ASSERT_NE(a->FindAs<int64_t>("v"), nullptr);
  EXPECT_EQ(*a->FindAs<int64_t>("v"), 1);
  EXPECT_TRUE(table->Get("b", "1").ok());
}

INSTANTIATE_TEST_SUITE_P(Transports, CommitPointTest, ::testing::ValuesIn(HttpTransportNames()));

// An answer cut inside its headers (the status line, then the connection
// closes) is never a success with an empty ETag, on either transport.
TEST_P(InteropTest, AnAnswerCutInsideItsHeadersIsNotASuccess) {
  CannedServer service({Answer("201 Created"),  // create container
                        "HTTP/1.1 201 Created\r\nx-ms-request-id: 1\r\n"});
  auto store = OpenAgainst(service.address(), GetParam(), /*max_attempts=*/2);
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  auto put = (*store)->blob_store().Put("t", "x", {});
  EXPECT_FALSE(put.ok()) << "etag '" << (put.ok() ? put->etag : "") << "'";
  EXPECT_EQ(put.status().code(), Code::kUnavailable) << put.status().ToString();
}

INSTANTIATE_TEST_SUITE_P(Transports, InteropTest, ::testing::ValuesIn(HttpTransportNames()));

}  // namespace
}  // namespace blobtable::testing
