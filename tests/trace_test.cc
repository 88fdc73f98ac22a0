// SPDX-License-Identifier: Apache-2.0
// StoreOptions::tracer and StoreOptions::slow_calls
// (docs/observability.md#traces, #the-slow-call-log): the spans a store
// opens, nested as documented, and the slow-call log's line.
#include <gtest/gtest.h>

#include <future>
#include <stdexcept>
#include <thread>

#include "blobtable/store.h"
#include "testing/fake_clock.h"
#include "testing/hooks.h"
#include "testing/recording_tracer.h"
#include "testing/sync_point.h"
#include "model/blob_naming.h"
#include "tests/test_util.h"
#include "util/call_observer.h"

namespace blobtable::testing {
namespace {

using internal::RecordingTracer;
using Span = RecordingTracer::Span;

std::vector<Span> Named(const std::vector<Span>& spans, const std::string& name) {
  std::vector<Span> out;
  for (const Span& s : spans)
    if (s.name == name) out.push_back(s);
  return out;
}

TEST(TraceTest, EachPublicCallIsOneRootSpanNamingItsTable) {
  TempDir dir;
  auto tracer = std::make_shared<RecordingTracer>();
  StoreOptions options;
  options.tracer = tracer;
  auto store = *Store::Open(dir.path(), options);
  Table t = *store->OpenTable("orders");
  ASSERT_TRUE(t.Insert(Entity("p", "a")).ok());
  EXPECT_TRUE(t.Get("p", "zz").status().IsNotFound());
  auto updated = t.Update("p", "a", [](Entity& e, bool) {
    e.Set("n", 1);
    return Status::OK();
  });
  ASSERT_TRUE(updated.ok());
  const std::vector<Span> spans = tracer->spans();
  ASSERT_EQ(spans.size(), 3u);  // the update's own get and replace are its part
  EXPECT_EQ(spans[0].name, "blobtable.insert");
  EXPECT_EQ(spans[1].name, "blobtable.get");
  EXPECT_EQ(spans[2].name, "blobtable.update");
  for (const Span& s : spans) {
    EXPECT_EQ(s.parent, 0u) << s.name;
    EXPECT_TRUE(s.ended) << s.name;
    EXPECT_EQ(s.attributes.at("table"), "orders");
  }
  EXPECT_EQ(spans[1].code, Code::kNotFound);
  EXPECT_FALSE(tracer->misused());
}

// The calls a user's function makes (an Update's, a visitor's) are the
// user's own: counted, traced and logged as calls, on this store or another
// (the review's finding 1).
TEST(TraceTest, CallsMadeByAUsersFunctionAreCallsOfTheirOwn) {
  TempDir a_dir, b_dir;
  auto tracer = std::make_shared<RecordingTracer>();
  StoreOptions options;
  options.tracer = tracer;
  auto a = *Store::Open(a_dir.path(), options);
  auto b = *Store::Open(b_dir.path(), options);
  Table ta = *a->OpenTable("alpha");
  Table tb = *b->OpenTable("beta");
  ASSERT_TRUE(ta.Upsert(Entity("p", "a")).ok());
  auto updated = ta.Update("p", "a", [&](Entity& e, bool) {
    EXPECT_TRUE(tb.Upsert(Entity("q", "b")).ok());         // another store's
    EXPECT_TRUE(ta.Get("p", "zz").status().IsNotFound());  // this store's
    e.Set("n", 1);
    return Status::OK();
  });
  ASSERT_TRUE(updated.ok());
  auto visited = ta.Visit(QueryOptions(), [&](const EntityView&) {
    EXPECT_TRUE(tb.Get("q", "b").ok());
    return Status::OK();
  });
  ASSERT_TRUE(visited.ok());
  const MetricsSnapshot ma = a->Metrics(), mb = b->Metrics();
  EXPECT_EQ(ma.Value("blobtable_operations", {{"op", "update"}}), 1);
  EXPECT_EQ(ma.Value("blobtable_operations", {{"op", "get"}, {"code", "NotFound"}}), 1);
  EXPECT_EQ(ma.Value("blobtable_operations", {{"op", "get"}, {"code", "OK"}}), 0);  // Update's own
  EXPECT_EQ(mb.Value("blobtable_operations", {{"op", "upsert"}}), 1);
  EXPECT_EQ(mb.Value("blobtable_operations", {{"op", "get"}}), 1);
  const std::vector<Span> spans = tracer->spans();
  const std::vector<Span> updates = Named(spans, "blobtable.update");
  ASSERT_EQ(updates.size(), 1u);
  const std::vector<Span> upserts = Named(spans, "blobtable.upsert");
  ASSERT_EQ(upserts.size(), 2u);
  EXPECT_EQ(upserts[1].attributes.at("table"), "beta");
  EXPECT_EQ(upserts[1].parent, updates[0].id);  // one tracer: under the call that ran it
  EXPECT_EQ(Named(spans, "blobtable.get").size(), 2u);
  EXPECT_FALSE(tracer->misused());
}

// A call ended by an exception from the user's function is counted as
// Internal and logged (the review's finding 2).
TEST(TraceTest, ACallEndedByAUsersExceptionIsCountedAsInternal) {
  TempDir dir;
  std::vector<std::string> lines;
  StoreOptions options;
  options.slow_calls.threshold = std::chrono::milliseconds(0);  // every call
  options.slow_calls.sink = [&](const std::string& line) { lines.push_back(line); };
  auto store = *Store::Open(dir.path(), options);
  Table t = *store->OpenTable("orders");
  EXPECT_THROW(
      (void)t.Update("p", "a", [](Entity&, bool) -> Status { throw std::runtime_error("boom"); }),
      std::runtime_error);
  EXPECT_EQ(
      store->Metrics().Value("blobtable_operations", {{"op", "update"}, {"code", "Internal"}}), 1);
  EXPECT_EQ(store->Metrics().Count("blobtable_operation_seconds", {{"op", "update"}}), 1u);
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0].rfind("blobtable: slow update on table orders: ", 0), 0u) << lines[0];
  EXPECT_NE(lines[0].find("Internal"), std::string::npos) << lines[0];
}

// An administrative call is one span; the queries and writes it makes are
// its part (not counted as table calls), its commits spans under it, and a
// write to an indexed table's commit a span under the write (the review's
// findings 3 and 4).
TEST(TraceTest, AdministrativeCallsAndIndexedWritesNestTheirCommits) {
  TempDir dir;
  auto tracer = std::make_shared<RecordingTracer>();
  StoreOptions options;
  options.tracer = tracer;
  auto store = *Store::Open(dir.path(), options);
  Table t = *store->OpenTable("orders");
  for (int i = 0; i < 10; ++i)
    ASSERT_TRUE(t.Upsert(Entity("p", std::to_string(i)).Set("n", i)).ok());
  const double upserts = store->Metrics().Value("blobtable_operations");
  IndexSpec spec;
  spec.name = "byn";
  spec.properties = {"n"};
  int got = 0;
  CreateIndexOptions build;
  build.progress = [&](const auto&) {  // the user's: counted as a get of its own
    got += t.Get("p", "1").ok() ? 1 : 0;
  };
  ASSERT_TRUE(store->CreateIndex("orders", spec, build).ok());
  ASSERT_GT(got, 0);
  QueryOptions filtered;
  filtered.filter = "n ge 5";
  ASSERT_EQ(*t.Count(filtered), 5);
  ASSERT_TRUE(store->CheckIndex("orders", "byn").ok());
  const MetricsSnapshot m = store->Metrics();
  EXPECT_EQ(m.Value("blobtable_operations"), upserts + got);  // no query, no write counted
  EXPECT_EQ(m.Value("blobtable_operations", {{"op", "get"}}), got);
  EXPECT_EQ(m.Value("blobtable_query_rows_returned"), 0);
  EXPECT_EQ(m.Value("blobtable_query_rows_scanned"), 0);
  std::vector<Span> spans = tracer->spans();
  const std::vector<Span> creates = Named(spans, "blobtable.create_index");
  ASSERT_EQ(creates.size(), 1u);
  EXPECT_EQ(Named(spans, "blobtable.count").size(), 1u);
  EXPECT_EQ(Named(spans, "blobtable.check_index").size(), 1u);
  EXPECT_TRUE(Named(spans, "blobtable.query").empty());
  for (const Span& g : Named(spans, "blobtable.get")) {
    EXPECT_EQ(g.parent, creates[0].id);  // the progress function's, under the call
  }
  for (const Span& c : Named(spans, "blobtable.commit")) {
    EXPECT_EQ(c.parent, creates[0].id);
  }

  const size_t before = spans.size();
  ASSERT_TRUE(t.Upsert(Entity("p", "1").Set("n", 100)).ok());  // maintains the index
  spans = tracer->spans();
  ASSERT_GT(spans.size(), before);
  const Span& write = spans[before];
  EXPECT_EQ(write.name, "blobtable.upsert");
  std::vector<Span> commits;
  for (size_t i = before; i < spans.size(); ++i)
    if (spans[i].name == "blobtable.commit") commits.push_back(spans[i]);
  ASSERT_EQ(commits.size(), 1u);
  EXPECT_EQ(commits[0].parent, write.id);
  for (size_t i = before; i < spans.size(); ++i) {
    if (spans[i].name == "blobtable.commit.round") {
      EXPECT_EQ(spans[i].parent, commits[0].id);
    }
  }
  EXPECT_FALSE(tracer->misused());
}

// Through the lease coordinator (as on Azure), finished before Commit()
// returns: the commit's rounds under the commit, its finishing too.
TEST(TraceTest, ACommitsRoundsAreSpansUnderTheCommit) {
  TempDir dir;
  auto tracer = std::make_shared<RecordingTracer>();
  StoreOptions options = internal::WithAtomicCommits(StoreOptions(), false);
  options.tracer = tracer;
  options.finish_in_background = false;
  auto store = *Store::Open(dir.path(), options);
  Table t = *store->OpenTable("orders");
  auto txn = *store->Begin();
  ASSERT_TRUE(txn.Insert(t, Entity("p", "a")).ok());
  ASSERT_TRUE(txn.Insert(t, Entity("q", "b")).ok());
  ASSERT_TRUE(txn.Commit().ok());
  const std::vector<Span> spans = tracer->spans();
  const std::vector<Span> commits = Named(spans, "blobtable.commit");
  ASSERT_EQ(commits.size(), 1u);
  EXPECT_EQ(commits[0].parent, 0u);
  EXPECT_EQ(commits[0].code, Code::kOk);
  const std::vector<Span> rounds = Named(spans, "blobtable.commit.round");
  ASSERT_EQ(rounds.size(), 3u);
  EXPECT_EQ(rounds[0].attributes.at("round"), "acquire");
  EXPECT_EQ(rounds[1].attributes.at("round"), "prewrite");
  EXPECT_EQ(rounds[2].attributes.at("round"), "commit_point");
  for (const Span& r : rounds) {
    EXPECT_EQ(r.parent, commits[0].id);
    EXPECT_EQ(r.code, Code::kOk);
  }
  const std::vector<Span> finishing = Named(spans, "blobtable.finish");
  ASSERT_EQ(finishing.size(), 1u);
  EXPECT_EQ(finishing[0].parent, commits[0].id);  // inline: inside Commit()
  EXPECT_FALSE(finishing[0].attributes.at("txn_id").empty());
  EXPECT_FALSE(tracer->misused());
  const MetricsSnapshot m = store->Metrics();
  // Four rounds (acquire is two), no wait.
  EXPECT_EQ(m.Value("blobtable_txn_commit_rounds", {{"path", "coordinator"}}), 4);
}

// In the background, the finishing is a root span of its own (its commit
// has returned), on the store's threads.
TEST(TraceTest, BackgroundFinishingIsARootSpan) {
  TempDir dir;
  auto tracer = std::make_shared<RecordingTracer>();
  StoreOptions options = internal::WithAtomicCommits(StoreOptions(), false);
  options.tracer = tracer;
  auto store = *Store::Open(dir.path(), options);
  Table t = *store->OpenTable("orders");
  auto txn = *store->Begin();
  ASSERT_TRUE(txn.Insert(t, Entity("p", "a")).ok());
  ASSERT_TRUE(txn.Commit().ok());
  store->WaitForFinishing();
  const std::vector<Span> finishing = Named(tracer->spans(), "blobtable.finish");
  ASSERT_EQ(finishing.size(), 1u);
  EXPECT_EQ(finishing[0].parent, 0u);
  EXPECT_TRUE(finishing[0].ended);
  EXPECT_EQ(store->Metrics().Count("blobtable_txn_finishing_lag_seconds"), 1u);
  EXPECT_EQ(store->Metrics().Value("blobtable_txn_finishing_backlog"), 0);
}

TEST(TraceTest, WithoutATracerNothingIsTracedAndCallsStillCount) {
  TempDir dir;
  auto store = *Store::Open(dir.path());
  Table t = *store->OpenTable("orders");
  ASSERT_TRUE(t.Insert(Entity("p", "a")).ok());
  EXPECT_EQ(store->Metrics().Value("blobtable_operations", {{"op", "insert"}, {"code", "OK"}}), 1);
}

// ---- Store::Health ----

TEST(HealthTest, AFreshEmbeddedStoreIsReachableWithNothingInFlight) {
  TempDir dir;
  auto store = *Store::Open(dir.path());
  const StoreHealth h = store->Health();
  EXPECT_TRUE(h.reachable);
  EXPECT_FALSE(h.last_error.has_value());
  EXPECT_EQ(h.cache, "none");
  EXPECT_EQ(h.commits_in_flight, 0);
  EXPECT_EQ(h.finishing_backlog, 0);
}

// A commit held at its commit point's door is in flight; once it returned,
// its finishing held on a background thread is the backlog.
TEST(HealthTest, CommitsInFlightAndTheFinishingBacklogAreCountedWithTheirAge) {
  TempDir dir;
  FakeClock clock;
  StoreOptions options = internal::WithAtomicCommits(StoreOptions(), false);
  options.clock = &clock;
  auto store = *Store::Open(dir.path(), options);
  Table t = *store->OpenTable("orders");
  std::promise<void> prewritten, go_on, finishing, finish;
  internal::SyncPoints::Set("txn.prewritten", [&] {
    prewritten.set_value();
    go_on.get_future().wait();
  });
  internal::SyncPoints::Set("txn.finishing", [&] {
    finishing.set_value();
    finish.get_future().wait();
  });
  std::thread committer([&] {
    auto txn = *store->Begin();
    ASSERT_TRUE(txn.Insert(t, Entity("p", "a")).ok());
    ASSERT_TRUE(txn.Commit().ok());
  });
  prewritten.get_future().wait();
  clock.Advance(std::chrono::milliseconds(1500));
  StoreHealth h = store->Health({.probe = false});
  EXPECT_EQ(h.commits_in_flight, 1);
  EXPECT_EQ(h.oldest_commit, std::chrono::milliseconds(1500));
  go_on.set_value();
  committer.join();  // Commit() returned at its commit point
  finishing.get_future().wait();
  h = store->Health({.probe = false});
  EXPECT_EQ(h.commits_in_flight, 0);
  EXPECT_EQ(h.finishing_backlog, 1);
  EXPECT_EQ(store->Metrics().Value("blobtable_txn_finishing_backlog"), 1);
  finish.set_value();
  store->WaitForFinishing();
  internal::SyncPoints::ClearAll();
  EXPECT_EQ(store->Health({.probe = false}).finishing_backlog, 0);
}

// ---- The slow-call log ----

TEST(SlowCallTest, ACallAtLeastTheThresholdIsOneLineWithItsWaits) {
  TempDir dir;
  FakeClock clock;  // its waits move it: a wait for a busy entity takes fake time
  std::vector<std::string> lines;
  std::mutex mu;
  StoreOptions options;
  options.clock = &clock;
  options.slow_calls.threshold = std::chrono::milliseconds(5);
  options.slow_calls.sink = [&](const std::string& line) {
    std::lock_guard<std::mutex> lock(mu);
    lines.push_back(line);
  };
  auto store = *Store::Open(dir.path(), options);
  Table t = *store->OpenTable("orders");
  ASSERT_TRUE(t.Insert(Entity("p", "a")).ok());  // fast (no fake time passes): not logged
  EXPECT_TRUE(lines.empty());
  // A lock another client holds on the entity: the insert of a
  // transaction waits (fake time), then gives up.
  const std::string blob = *internal::naming::EntityBlobName("orders", "p", "a");
  ASSERT_TRUE(store->blob_store().AcquireLease(blob, 60, "other", {}).ok());
  TransactionOptions quick;
  quick.lock_timeout = std::chrono::milliseconds(50);
  auto txn = *store->Begin(quick);
  auto read = txn.Get(t, "p", "a");
  ASSERT_TRUE(read.ok());
  ASSERT_TRUE(txn.Replace(t, Entity("p", "a").Set("n", 2), read->etag()).ok());
  EXPECT_EQ(txn.Commit().status().code(), Code::kLockTimeout);
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0].rfind("blobtable: slow commit: ", 0), 0u) << lines[0];
  EXPECT_NE(lines[0].find("LockTimeout"), std::string::npos) << lines[0];
  EXPECT_EQ(lines[0].find("lock waits 0.0 ms"), std::string::npos) << lines[0];
  EXPECT_GT(store->Metrics().Value("blobtable_txn_lock_wait_seconds"), 0.04);
}

TEST(SlowCallTest, TheLineNamesTheCallTheTableAndWhereTheTimeWent) {
  internal::CallTally tally;
  tally.requests = 3;
  tally.request_ns = 805'100'000;
  tally.retries = 2;
  tally.backoff_ns = 600'000'000;
  EXPECT_EQ(internal::SlowCallLine("get", "orders", std::chrono::microseconds(812'400),
                                   Status::OK(), tally),
            "blobtable: slow get on table orders: 812.4 ms, OK; 3 requests 805.1 ms, 2 retries, "
            "backoff 600.0 ms, lock waits 0.0 ms, finishing waits 0.0 ms");
}

}  // namespace
}  // namespace blobtable::testing
