// SPDX-License-Identifier: Apache-2.0
// Store::Metrics, StoreOptions::tracer and Store::Health on Azurite through
// the fault proxy (docs/observability.md): each metric moves when its event
// happens on the wire (a 503 a retry and a throttle, a 304 a revalidation,
// a conflict a conflict), the spans carry Azure's request ids, and a store
// whose storage stops answering says so.
#include <gtest/gtest.h>

#include <set>

#include "blobtable/store.h"
#include "devtools/proxy/fault_proxy.h"
#include "testing/hooks.h"
#include "testing/recording_tracer.h"
#include "tests/azurite.h"
#include "tests/backend.h"
#include "tests/test_util.h"

namespace blobtable::testing {
namespace {

using internal::RecordingTracer;

class ObservabilityAzuriteTest : public ::testing::Test {
 protected:
  void SetUp() override {
    Azurite* azurite = Azurite::Get();
    ASSERT_NE(azurite, nullptr);
    auto proxy = proxy::FaultProxy::Start(azurite->port());
    ASSERT_TRUE(proxy.ok()) << proxy.status().ToString();
    proxy_ = std::move(*proxy);
  }
  // A store on Azurite's dev account through the proxy, retrying fast, read
  // through a cache of its own.
  std::unique_ptr<Store> Open(StoreOptions o = {}) {
    o.container = FreshContainer("obs");
    o.azure.retry.initial_delay = std::chrono::milliseconds(1);
    o.cache.directory = cache_.path();
    auto store = Store::Open("UseDevelopmentStorage=true;BlobEndpoint=http://127.0.0.1:" +
                                 std::to_string(proxy_->port()) + "/devstoreaccount1",
                             o);
    EXPECT_TRUE(store.ok()) << store.status().ToString();
    return store.ok() ? std::move(*store) : nullptr;
  }
  std::unique_ptr<proxy::FaultProxy> proxy_;
  TempDir cache_;
};

TEST_F(ObservabilityAzuriteTest, EachMetricMovesWhenItsEventHappensOnTheWire) {
  auto store = Open();
  ASSERT_NE(store, nullptr);
  Table t = *store->OpenTable("orders");
  // A 503 the proxy answers: a request of that status, a retry, a throttle
  // and the wait between.
  proxy_->Inject(proxy::ProxyFault::kAnswer503, proxy::FaultProxy::Containing("PUT "), 1);
  ASSERT_TRUE(t.Insert(Entity("p", "a").Set("n", 1)).ok());
  EXPECT_EQ(proxy_->injected(proxy::ProxyFault::kAnswer503), 1);
  // A conflict: an insert of a row that is there.
  EXPECT_EQ(t.Insert(Entity("p", "a")).status().code(), Code::kConflict);
  // A revalidation answered 304: the copy the insert cached, checked.
  ASSERT_TRUE(t.Get("p", "a", ReadPolicy::Validate()).ok());
  MetricsSnapshot m = store->Metrics();
  EXPECT_EQ(m.Value("blobtable_cache_revalidations", {{"result", "not_modified"}}), 1);
  EXPECT_EQ(m.Value("blobtable_http_requests", {{"op", "GET"}, {"status", "304"}}), 1);
  // A transaction that meets a write under it: a conflict of the
  // coordinator's; then one that commits.
  auto txn = *store->Begin();
  auto read = txn.Get(t, "p", "a");
  ASSERT_TRUE(read.ok());
  ASSERT_TRUE(txn.Replace(t, Entity("p", "a").Set("n", 2), read->etag()).ok());
  ASSERT_TRUE(t.Upsert(Entity("p", "a").Set("n", 3)).ok());
  EXPECT_EQ(txn.Commit().status().code(), Code::kConflict);
  auto again = *store->Begin();
  ASSERT_TRUE(again.Insert(t, Entity("p", "b")).ok());
  ASSERT_TRUE(again.Insert(t, Entity("q", "c")).ok());
  ASSERT_TRUE(again.Commit().ok());
  store->WaitForFinishing();

  m = store->Metrics();
  EXPECT_EQ(m.Value("blobtable_http_requests", {{"status", "503"}}), 1);
  EXPECT_GE(m.Value("blobtable_http_retries"), 1);
  EXPECT_EQ(m.Value("blobtable_http_throttled", {{"status", "503"}}), 1);
  EXPECT_NE(m.Find("blobtable_http_backoff_seconds"), nullptr);  // its jitter may draw 0 ms
  EXPECT_EQ(m.Value("blobtable_operations", {{"op", "insert"}, {"code", "Conflict"}}), 1);
  EXPECT_EQ(m.Value("blobtable_operations", {{"op", "insert"}, {"code", "OK"}}), 1);
  EXPECT_EQ(m.Value("blobtable_txn_commits", {{"path", "coordinator"}, {"code", "Conflict"}}), 1);
  EXPECT_EQ(m.Value("blobtable_txn_commits", {{"path", "coordinator"}, {"code", "OK"}}), 1);
  // The one that committed: four rounds, and its requests (two partitions:
  // a stripe each, the record, two intents, ...).
  EXPECT_GE(m.Value("blobtable_txn_commit_rounds", {{"path", "coordinator"}}), 4);
  EXPECT_GE(m.Value("blobtable_txn_commit_requests", {{"path", "coordinator"}}), 8);
  // The commit's finishing; a read that met an intent of it may have left
  // its rewrite to the background too.
  EXPECT_GE(m.Count("blobtable_txn_finishing_lag_seconds"), 1u);
  const StoreHealth h = store->Health();
  EXPECT_TRUE(h.reachable);
  EXPECT_EQ(h.cache, "online");
  ASSERT_TRUE(h.last_answer_at.has_value());
  // The proxy's 503 was the last failure.
  ASSERT_TRUE(h.last_error.has_value());
  EXPECT_EQ(h.last_error->http_status(), 503);
}

// Each public call a span; each HTTP attempt a span under it carrying the
// x-ms-client-request-id sent and the x-ms-request-id Azurite answered
// with; a query's reads, sent from several threads, under the query.
TEST_F(ObservabilityAzuriteTest, SpansNestAsDocumentedAndCarryAzuresRequestIds) {
  auto tracer = std::make_shared<RecordingTracer>();
  StoreOptions o;
  o.tracer = tracer;
  o.inline_body_max_bytes = 0;  // a query reads each row: requests in parallel
  o.cache.enabled = false;
  auto store = Open(o);
  ASSERT_NE(store, nullptr);
  Table t = *store->OpenTable("orders");
  for (int i = 0; i < 6; ++i) ASSERT_TRUE(t.Insert(Entity("p", std::to_string(i))).ok());
  ASSERT_TRUE(t.Get("p", "1").ok());
  QueryOptions q;
  q.partition_key = "p";
  auto page = t.Query(q);
  ASSERT_TRUE(page.ok());
  ASSERT_EQ(page->entities.size(), 6u);

  const auto spans = tracer->spans();
  EXPECT_FALSE(tracer->misused());
  std::map<uint64_t, RecordingTracer::Span> by_id;
  for (const auto& s : spans) by_id[s.id] = s;
  int gets = 0, queries = 0;
  std::set<std::thread::id> query_threads;
  std::set<std::string> request_ids;
  for (const auto& s : spans) {
    if (s.name != "blobtable.request") continue;
    ASSERT_NE(s.parent, 0u) << s.attributes.at("op");  // every request here is a call's
    const auto& parent = by_id.at(s.parent);
    EXPECT_FALSE(s.attributes.at("client_request_id").empty());
    ASSERT_EQ(s.attributes.count("request_id"), 1u);
    EXPECT_FALSE(s.attributes.at("request_id").empty());
    request_ids.insert(s.attributes.at("request_id"));
    if (parent.name == "blobtable.get") ++gets;
    if (parent.name == "blobtable.query") {
      ++queries;
      query_threads.insert(s.thread);
    }
  }
  EXPECT_EQ(gets, 1);
  EXPECT_EQ(queries, 7);  // its listing and six reads
  EXPECT_GT(query_threads.size(), 1u);
  EXPECT_GE(request_ids.size(), 13u);  // Azurite's ids differ request by request
}

// Storage stops answering (the proxy refuses connections): the probe says
// unreachable, with the error and when; it answers again: reachable.
TEST_F(ObservabilityAzuriteTest, HealthSaysWhenStorageStopsAnswering) {
  auto store = Open();
  ASSERT_NE(store, nullptr);
  Table t = *store->OpenTable("orders");
  ASSERT_TRUE(t.Insert(Entity("p", "a")).ok());
  EXPECT_TRUE(store->Health().reachable);
  proxy_->Refuse(true);
  StoreHealth h = store->Health();
  EXPECT_FALSE(h.reachable);
  ASSERT_TRUE(h.last_error.has_value());
  EXPECT_EQ(h.last_error->code(), Code::kUnavailable) << h.last_error->ToString();
  EXPECT_TRUE(h.last_error_at.has_value());
  EXPECT_EQ(h.cache, "answering from copies");
  // Without a probe: what the store met last.
  EXPECT_FALSE(store->Health({.probe = false}).reachable);
  proxy_->Refuse(false);
  h = store->Health();
  EXPECT_TRUE(h.reachable);
  EXPECT_EQ(h.cache, "online");
}

}  // namespace
}  // namespace blobtable::testing
