// SPDX-License-Identifier: Apache-2.0
// The fault and latency proxy (devtools/proxy) between blobtable and Azurite:
// each fault does to the request what it says, blobtable answers each as
// its contract says, and the control protocol drives it all.
#include <gtest/gtest.h>

#include <chrono>
#include <future>

#include "blobtable/store.h"
#include "tests/azurite.h"
#include "tests/backend.h"
#include "tests/test_util.h"
#include "devtools/proxy/fault_proxy.h"

namespace blobtable::testing {
namespace {

using proxy::FaultProxy;
using proxy::ProxyFault;
using std::chrono::milliseconds;

constexpr milliseconds kRequestTimeout{3000};

class ProxyTest : public ::testing::Test {
 protected:
  void SetUp() override {
    Azurite* a = Azurite::Get();
    ASSERT_NE(a, nullptr);
    auto started = FaultProxy::Start(a->port());
    ASSERT_TRUE(started.ok()) << started.status().ToString();
    proxy_ = std::move(*started);
    StoreOptions o;
    o.container = FreshContainer("proxy");
    // Short enough that a stall or a blackhole costs a test little, long
    // enough that a plain request through the proxy answers within it on
    // CI's loaded two cores (at 500 ms the first Put through it did not).
    o.azure.request_timeout = kRequestTimeout;
    o.azure.retry.max_attempts = 1;  // each fault meets the caller as it is
    o.cache.enabled = false;
    // The direct store only makes the container and checks what landed: the
    // defaults (30 s a request, retries), as a cold Azurite's first answer on
    // a loaded machine can take longer than the proxied store's timeout.
    StoreOptions plain;
    plain.container = o.container;
    plain.cache.enabled = false;
    auto direct = Store::Open(a->ConnectionString(), plain);
    ASSERT_TRUE(direct.ok());
    direct_ = std::move(*direct);
    auto via = Store::Open("UseDevelopmentStorage=true;BlobEndpoint=http://127.0.0.1:" +
                               std::to_string(proxy_->port()) + "/devstoreaccount1",
                           o);
    ASSERT_TRUE(via.ok());
    via_ = std::move(*via);
    auto warm = direct_->blob_store().Put("warm", "x", {});  // the container exists
    ASSERT_TRUE(warm.ok()) << warm.status().ToString();
  }
  BlobStore& via() { return via_->blob_store(); }
  bool Exists(const std::string& name) { return direct_->blob_store().Head(name, {}).ok(); }

  std::unique_ptr<FaultProxy> proxy_;
  std::unique_ptr<Store> direct_, via_;
};

TEST_F(ProxyTest, RelaysPlainly) {
  auto put = via().Put("a", "hello", {});
  ASSERT_TRUE(put.ok()) << put.status().ToString();
  EXPECT_EQ(via().Get("a", {})->data, "hello");
  EXPECT_GE(proxy_->relayed(), 2);
}

TEST_F(ProxyTest, ResetsMidRequestSoNothingIsApplied) {
  proxy_->Inject(ProxyFault::kResetRequest, FaultProxy::Containing("/r1"), 1);
  auto put = via().Put("r1", std::string(10000, 'x'), {});
  EXPECT_EQ(put.status().code(), Code::kUnavailable) << put.status().ToString();
  EXPECT_FALSE(Exists("r1"));
  EXPECT_EQ(proxy_->injected(ProxyFault::kResetRequest), 1);
}

TEST_F(ProxyTest, ResetsMidResponseAfterTheWriteWasApplied) {
  PutOptions create;
  create.conditions.if_none_match = "*";
  proxy_->Inject(ProxyFault::kResetResponse, FaultProxy::Containing("/r2"), 1);
  auto put = via().Put("r2", "x", create);
  EXPECT_TRUE(Exists("r2"));
  // One attempt, no answer, a conditional write: applied or not is unknown
  // to the client (curl may also re-send on its own; then its write id tells).
  EXPECT_TRUE(put.ok() || put.status().IsOutcomeUnknown()) << put.status().ToString();
  EXPECT_EQ(proxy_->injected(ProxyFault::kResetResponse), 1);
}

TEST_F(ProxyTest, AStallPastTheRequestTimeoutIsUnavailable) {
  proxy_->SetStall(10 * kRequestTimeout);  // the proxy's stop cuts it short
  proxy_->Inject(ProxyFault::kStall, FaultProxy::Containing("/s1"), 1);
  ASSERT_TRUE(direct_->blob_store().Put("s1", "x", {}).ok());
  auto got = via().Get("s1", {});
  EXPECT_EQ(got.status().code(), Code::kUnavailable) << got.status().ToString();
}

TEST_F(ProxyTest, RefusedConnectionsAreNotSentAndComeBack) {
  ASSERT_TRUE(via().Put("c1", "x", {}).ok());
  proxy_->Refuse(true);
  auto got = via().Get("c1", {});
  EXPECT_EQ(got.status().code(), Code::kUnavailable) << got.status().ToString();
  proxy_->Refuse(false);
  EXPECT_TRUE(via().Get("c1", {}).ok());
}

TEST_F(ProxyTest, ABlackholeNeverAnswers) {
  proxy_->Blackhole(true);
  auto got = via().Head("warm", {});
  EXPECT_EQ(got.status().code(), Code::kUnavailable) << got.status().ToString();
  proxy_->Blackhole(false);
}

// Issue 55, item 1: a lease action carries the holder's deadline
// (LeaseOptions::deadline) to the transport. Through a path gone dark, with
// a request timeout of two minutes, a renewal whose deadline is 300 ms away
// answers Unavailable by then; it used to wait out the timeout (and the
// retry budget), holding up whoever waited on it past the lease.
TEST_F(ProxyTest, ALeaseActionGivesUpAtItsDeadlineThroughADarkPath) {
  StoreOptions o;
  o.container = via_->options().container;
  o.azure.request_timeout = std::chrono::minutes(2);
  o.azure.retry.max_attempts = 1;
  o.cache.enabled = false;
  auto slow = Store::Open("UseDevelopmentStorage=true;BlobEndpoint=http://127.0.0.1:" +
                              std::to_string(proxy_->port()) + "/devstoreaccount1",
                          o);
  ASSERT_TRUE(slow.ok());
  auto lease = direct_->blob_store().AcquireLease("warm", 15, "", {});
  ASSERT_TRUE(lease.ok()) << lease.status().ToString();
  proxy_->Blackhole(true);
  LeaseOptions within;
  within.deadline = Clock::Real()->Steady() + milliseconds(300);
  auto renewal = std::async(std::launch::async, [&] {
    return (*slow)->blob_store().RenewLease("warm", lease->lease_id, within).status();
  });
  // A bound for the failure (the request's own timeout is two minutes).
  const bool answered = renewal.wait_for(std::chrono::seconds(20)) == std::future_status::ready;
  if (!answered) proxy_.reset();  // closes the connection: the renewal ends
  const Status s = renewal.get();
  EXPECT_TRUE(answered) << "the renewal waited past its deadline";
  EXPECT_EQ(s.code(), Code::kUnavailable) << s.ToString();
  if (proxy_) proxy_->Blackhole(false);
  (void)direct_->blob_store().ReleaseLease("warm", lease->lease_id, {});
}

TEST_F(ProxyTest, Answer503AtARate) {
  proxy_->InjectRate(ProxyFault::kAnswer503, 2);
  int refused = 0;
  for (int i = 0; i < 40; ++i) refused += via().Head("warm", {}).status().http_status() == 503;
  EXPECT_GT(refused, 5);
  EXPECT_EQ(proxy_->injected(ProxyFault::kAnswer503), refused);
}

// Latency is added each way: a request through it takes at least the sum
// (a lower bound a sleep guarantees; speed itself belongs to benchmarks).
TEST_F(ProxyTest, LatencyIsAddedEachWay) {
  proxy_->SetLatency({milliseconds(60), milliseconds(40), milliseconds(0)});
  const auto start = std::chrono::steady_clock::now();
  ASSERT_TRUE(via().Head("warm", {}).ok());
  EXPECT_GE(std::chrono::steady_clock::now() - start, milliseconds(100));
}

TEST_F(ProxyTest, TheControlProtocolDrivesIt) {
  EXPECT_EQ(proxy_->Control("latency 0 0 5"), "ok");
  EXPECT_EQ(proxy_->Control("inject answer-503 1 /ctl"), "ok");
  EXPECT_EQ(via().Head("ctl", {}).status().http_status(), 503);
  EXPECT_EQ(proxy_->Control("rate lose-answer 0"), "ok");
  EXPECT_EQ(proxy_->Control("refuse on"), "ok");
  EXPECT_FALSE(via().Head("warm", {}).ok());
  EXPECT_EQ(proxy_->Control("clear"), "ok");
  EXPECT_TRUE(via().Head("warm", {}).ok());
  EXPECT_NE(proxy_->Control("counts").find("answer-503=1"), std::string::npos)
      << proxy_->Control("counts");
  EXPECT_EQ(proxy_->Control("inject nonsense 1").rfind("error:", 0), 0u);
  EXPECT_EQ(proxy_->Control("bogus").rfind("error:", 0), 0u);
}

}  // namespace
}  // namespace blobtable::testing
