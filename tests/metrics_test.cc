// SPDX-License-Identifier: Apache-2.0
// Store::Metrics and its OpenMetrics text (docs/observability.md#metrics):
// each metric moves when its event happens, and the text parses.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <future>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <thread>

#include "blobtable/lock.h"
#include "blobtable/metrics.h"
#include "blobtable/queue.h"
#include "blobtable/store.h"
#include "coord/coord_names.h"
#include "testing/fake_clock.h"
#include "tests/test_util.h"
#include "util/metric_catalog.h"
#include "util/metrics.h"

namespace blobtable::testing {
namespace {

using internal::LatencyHistogram;
using internal::MetricsRegistry;

// ---- The counting ----

TEST(LatencyHistogramTest, ADurationFallsInTheFirstBucketWhoseBoundItDoesNotExceed) {
  EXPECT_EQ(LatencyHistogram::BucketOf(0), 0);
  EXPECT_EQ(LatencyHistogram::BucketOf(1'000), 0);  // 1 µs: at the bound
  EXPECT_EQ(LatencyHistogram::BucketOf(1'001), 1);  // over it: the 2 µs bucket
  EXPECT_EQ(LatencyHistogram::BucketOf(2'000), 1);
  EXPECT_EQ(LatencyHistogram::BucketOf(2'001), 2);
  EXPECT_EQ(LatencyHistogram::BucketOf(1'000'000), 10);  // 1 ms <= 1024 µs
  EXPECT_EQ(LatencyHistogram::BucketOf(uint64_t{1} << 40), LatencyHistogram::kBounds);  // +Inf
  const std::vector<double>& bounds = LatencyHistogram::BoundsSeconds();
  ASSERT_EQ(bounds.size(), size_t{LatencyHistogram::kBounds});
  EXPECT_DOUBLE_EQ(bounds[0], 1e-6);
  EXPECT_DOUBLE_EQ(bounds[10], 1024e-6);
  for (uint64_t ns : {0ull, 999ull, 1'000ull, 1'001ull, 3'000'000ull, 60'000'000'000ull}) {
    const int b = LatencyHistogram::BucketOf(ns);
    if (b < LatencyHistogram::kBounds) {
      EXPECT_LE(ns * 1e-9, bounds[b] * (1 + 1e-12)) << ns;
    }
    if (b > 0) {
      EXPECT_GT(ns * 1e-9, bounds[b - 1]) << ns;
    }
  }
}

TEST(MetricsRegistryTest, ASnapshotHoldsEveryFamilyWithItsSamples) {
  MetricsRegistry registry;
  registry.AddCounter(internal::metric::kOperations, {{"op", "get"}, {"code", "OK"}}).Add(3);
  registry.AddCounter(internal::metric::kOperations, {{"op", "get"}, {"code", "NotFound"}});
  // The same family and labels: the same counter.
  registry.AddCounter(internal::metric::kOperations, {{"op", "get"}, {"code", "OK"}}).Add(2);
  registry.AddCounter(internal::metric::kHttpBackoffSeconds).Add(1'500'000'000);  // ns
  auto& h = registry.AddHistogram(internal::metric::kOperationSeconds, {{"op", "get"}});
  h.Record(std::chrono::microseconds(3));
  h.Record(std::chrono::milliseconds(2));
  registry.AddReader(internal::metric::kCacheBytes, {}, [] { return 42.0; });

  const MetricsSnapshot s = registry.Snapshot();
  EXPECT_EQ(s.Value("blobtable_operations", {{"op", "get"}, {"code", "OK"}}), 5);
  // A family told apart by outcome lists no code it never met.
  const MetricFamily* ops = s.Find("blobtable_operations");
  ASSERT_NE(ops, nullptr);
  EXPECT_EQ(ops->samples.size(), 1u);
  EXPECT_DOUBLE_EQ(s.Value("blobtable_http_backoff_seconds"), 1.5);
  EXPECT_EQ(s.Count("blobtable_operation_seconds", {{"op", "get"}}), 2u);
  EXPECT_NEAR(s.Value("blobtable_operation_seconds"), 0.002003, 1e-9);
  EXPECT_EQ(s.Value("blobtable_cache_bytes"), 42);
  EXPECT_EQ(s.Find("blobtable_cache_hits"), nullptr);  // never added
  for (size_t i = 1; i < s.families.size(); ++i)
    EXPECT_LT(s.families[i - 1].name, s.families[i].name);
}

// ---- The OpenMetrics text, read back by a small parser of the format ----

struct ParsedSample {
  std::string name;
  std::map<std::string, std::string> labels;
  double value = 0;
};

// Parses `text` as OpenMetrics (the parts ToOpenMetrics writes) and fails
// the test at the first line that breaks the format. Returns the samples.
std::vector<ParsedSample> ParseOpenMetrics(const std::string& text) {
  std::vector<ParsedSample> out;
  std::istringstream in(text);
  std::string line;
  std::map<std::string, std::string> types;  // family -> type
  std::string family;
  bool eof = false;
  const std::regex meta(R"(# (TYPE|UNIT|HELP) ([a-zA-Z_:][a-zA-Z0-9_:]*) (.*))");
  const std::regex sample(R"(([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})? (\S+))");
  const std::regex label(R"(([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)\"(,|$))");
  while (std::getline(in, line)) {
    EXPECT_FALSE(eof) << "a line after # EOF: " << line;
    if (line == "# EOF") {
      eof = true;
      continue;
    }
    std::smatch m;
    if (std::regex_match(line, m, meta)) {
      family = m[2];
      if (m[1] == "TYPE") {
        EXPECT_EQ(types.count(family), 0u) << "a family described twice: " << family;
        types[family] = m[3];
        EXPECT_TRUE(m[3] == "counter" || m[3] == "gauge" || m[3] == "histogram") << line;
      }
      if (m[1] == "UNIT") {
        EXPECT_TRUE(family.ends_with("_" + std::string(m[3]))) << line;
      }
      continue;
    }
    if (!std::regex_match(line, m, sample)) {
      ADD_FAILURE() << "not a sample line: " << line;
      continue;
    }
    ParsedSample p;
    p.name = m[1];
    std::string labels = m[3];
    for (std::sregex_iterator it(labels.begin(), labels.end(), label), end; it != end; ++it) {
      std::string v = (*it)[2], unescaped;
      for (size_t i = 0; i < v.size(); ++i) {
        if (v[i] == '\\' && i + 1 < v.size()) {
          ++i;
          unescaped += v[i] == 'n' ? '\n' : v[i];
        } else {
          unescaped += v[i];
        }
      }
      p.labels[(*it)[1]] = unescaped;
    }
    p.value = m[4] == "+Inf" ? INFINITY : std::stod(m[4]);
    // Every sample belongs to the family described last, with its suffix.
    const std::string& type = types[family];
    const std::string suffix = p.name.substr(std::min(p.name.size(), family.size()));
    EXPECT_TRUE(p.name.starts_with(family)) << line;
    if (type == "counter") {
      EXPECT_EQ(suffix, "_total") << line;
    }
    if (type == "gauge") {
      EXPECT_EQ(suffix, "") << line;
    }
    if (type == "histogram") {
      EXPECT_TRUE(suffix == "_bucket" || suffix == "_count" || suffix == "_sum") << line;
    }
    out.push_back(std::move(p));
  }
  EXPECT_TRUE(eof) << "no # EOF at the end";
  return out;
}

TEST(OpenMetricsTest, TheTextParsesAndHistogramsAreCumulativeUpToTheirCount) {
  MetricsRegistry registry;
  registry.AddCounter(internal::metric::kOperations, {{"op", "get"}, {"code", "OK"}}).Add(7);
  auto& h = registry.AddHistogram(internal::metric::kOperationSeconds, {{"op", "get"}});
  for (int us : {1, 3, 3, 900, 5000}) h.Record(std::chrono::microseconds(us));
  registry.AddReader(internal::metric::kCacheBytes, {}, [] { return 1.0 / 3; });
  const auto samples = ParseOpenMetrics(ToOpenMetrics(registry.Snapshot()));
  double last = 0, inf = -1, count = -1;
  for (const ParsedSample& p : samples) {
    if (p.name == "blobtable_operations_total") {
      EXPECT_EQ(p.value, 7);
    }
    if (p.name == "blobtable_cache_bytes") {
      EXPECT_EQ(p.value, 1.0 / 3);  // read back exactly
    }
    if (p.name == "blobtable_operation_seconds_bucket") {
      EXPECT_GE(p.value, last) << "buckets are cumulative";
      last = p.value;
      if (p.labels.at("le") == "+Inf") inf = p.value;
    }
    if (p.name == "blobtable_operation_seconds_count") count = p.value;
  }
  EXPECT_EQ(inf, 5);
  EXPECT_EQ(count, 5);
}

TEST(OpenMetricsTest, LabelValuesAreEscaped) {
  MetricsSnapshot s;
  MetricFamily f;
  f.name = "x_total_things";
  f.type = MetricType::kGauge;
  f.help = "a \\ help\nline";
  f.samples.push_back({{{"a", "q\"uote\\back\nnew"}}, 1, {}});
  s.families.push_back(f);
  const std::string text = ToOpenMetrics(s);
  EXPECT_NE(text.find(R"(# HELP x_total_things a \\ help\nline)"), std::string::npos) << text;
  const auto samples = ParseOpenMetrics(text);
  ASSERT_EQ(samples.size(), 1u);
  EXPECT_EQ(samples[0].labels.at("a"), "q\"uote\\back\nnew");
}

// ---- A store's calls ----

class StoreMetricsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    store_ = *Store::Open(dir_.path());
    table_.emplace(*store_->OpenTable("orders"));
  }
  double Ops(const char* op, const char* code) const {
    return store_->Metrics().Value("blobtable_operations", {{"op", op}, {"code", code}});
  }
  TempDir dir_;
  std::unique_ptr<Store> store_;
  std::optional<Table> table_;
};

TEST_F(StoreMetricsTest, EachCallIsCountedByKindAndOutcome) {
  Entity e("p", "a");
  e.Set("n", 1);
  auto inserted = table_->Insert(e);
  ASSERT_TRUE(inserted.ok());
  EXPECT_EQ(table_->Insert(e).status().code(), Code::kConflict);
  ASSERT_TRUE(table_->Get("p", "a").ok());
  EXPECT_TRUE(table_->Get("p", "zz").status().IsNotFound());
  EXPECT_EQ(table_->Replace(e, "\"stale\"").status().code(), Code::kConflict);
  ASSERT_TRUE(table_->Merge(e, inserted->etag()).ok());
  ASSERT_TRUE(table_->Upsert(e).ok());
  ASSERT_TRUE(table_->UpsertMerge(e).ok());
  EXPECT_EQ(table_->Get("a/b", "a").status().code(), Code::kInvalidArgument);  // a bad key
  EXPECT_EQ(Ops("insert", "OK"), 1);
  EXPECT_EQ(Ops("insert", "Conflict"), 1);
  EXPECT_EQ(Ops("get", "OK"), 1);
  EXPECT_EQ(Ops("get", "NotFound"), 1);
  EXPECT_EQ(Ops("get", "InvalidArgument"), 1);
  EXPECT_EQ(Ops("replace", "Conflict"), 1);
  EXPECT_EQ(Ops("merge", "OK"), 1);
  EXPECT_EQ(Ops("upsert", "OK"), 1);
  EXPECT_EQ(Ops("upsert_merge", "OK"), 1);
  ASSERT_TRUE(table_->Delete("p", "a", "*").ok());
  EXPECT_EQ(Ops("delete", "OK"), 1);
  const MetricsSnapshot s = store_->Metrics();
  // Every call timed once, under its kind.
  EXPECT_EQ(s.Count("blobtable_operation_seconds", {{"op", "get"}}), 3u);
  EXPECT_EQ(s.Count("blobtable_operation_seconds"), 10u);
  // The embedded store sends no HTTP request.
  EXPECT_EQ(s.Value("blobtable_http_requests"), 0);
}

TEST_F(StoreMetricsTest, ACallIsCountedOnceAsItselfNotAsTheCallsItMakes) {
  int attempts = 0;
  auto updated = table_->Update(
      "p", "u",
      [](Entity& e, bool) {
        e.Set("n", 1);
        return Status::OK();
      },
      RetryPolicy(), &attempts);
  ASSERT_TRUE(updated.ok()) << updated.status().ToString();
  EXPECT_EQ(Ops("update", "OK"), 1);
  EXPECT_EQ(Ops("get", "NotFound"), 0);  // its read
  EXPECT_EQ(Ops("insert", "OK"), 0);     // its write
  for (int i = 0; i < 5; ++i) ASSERT_TRUE(table_->Upsert(Entity("q", std::to_string(i))).ok());
  QueryOptions q;
  q.partition_key = "q";
  q.top = 3;
  auto page = table_->Query(q);
  ASSERT_TRUE(page.ok());
  int visited = 0;
  auto rows = table_->Visit(q, [&](const EntityView&) {
    ++visited;
    return Status::OK();
  });
  ASSERT_TRUE(rows.ok());
  EXPECT_EQ(Ops("query", "OK"), 2);
  EXPECT_EQ(store_->Metrics().Value("blobtable_query_rows_returned"), 6);
}

TEST_F(StoreMetricsTest, CountsFromManyThreadsAreExact) {
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&] {
      for (int i = 0; i < 200; ++i) (void)table_->Get("p", "none");
    });
  for (auto& t : threads) t.join();
  EXPECT_EQ(Ops("get", "NotFound"), 800);
  EXPECT_EQ(store_->Metrics().Count("blobtable_operation_seconds"), 800u);
}

TEST_F(StoreMetricsTest, TheDataFilesFiguresAreGauges) {
  for (int i = 0; i < 200; ++i)
    ASSERT_TRUE(
        table_->Upsert(Entity("p", std::to_string(i)).Set("v", std::string(2000, 'x'))).ok());
  for (int i = 0; i < 200; ++i) ASSERT_TRUE(table_->Delete("p", std::to_string(i), "*").ok());
  ASSERT_TRUE(table_->Upsert(Entity("p", "last")).ok());
  const MetricsSnapshot m = store_->Metrics();
  const double used = m.Value("blobtable_local_used_bytes");
  EXPECT_GT(used, 200 * 2000);
  EXPECT_GE(m.Value("blobtable_local_map_bytes"), used);
  EXPECT_GE(m.Value("blobtable_local_file_bytes"), used);
  EXPECT_GT(m.Value("blobtable_local_free_bytes"), 100 * 2000);  // the deleted rows' pages
  EXPECT_LT(m.Value("blobtable_local_free_bytes"), used);
  EXPECT_NE(m.Find("blobtable_local_readers"), nullptr);
  EXPECT_EQ(m.Find("blobtable_cache_bytes"), nullptr);  // no cache here
}

TEST_F(StoreMetricsTest, TransactionsAreCountedByPathAndOutcome) {
  ASSERT_TRUE(table_->Upsert(Entity("p", "a").Set("n", 1)).ok());
  auto txn = store_->Begin(TransactionOptions());
  ASSERT_TRUE(txn.ok());
  auto a = txn->Get(*table_, "p", "a");
  ASSERT_TRUE(a.ok());
  ASSERT_TRUE(txn->Replace(*table_, Entity("p", "a").Set("n", 2), a->etag()).ok());
  ASSERT_TRUE(table_->Upsert(Entity("p", "a").Set("n", 3)).ok());  // under it
  EXPECT_EQ(txn->Commit().status().code(), Code::kConflict);
  auto again = store_->Begin(TransactionOptions());
  ASSERT_TRUE(again->Insert(*table_, Entity("p", "b")).ok());
  ASSERT_TRUE(again->Commit().ok());
  auto read_only = store_->Begin(TransactionOptions());
  ASSERT_TRUE(read_only->Get(*table_, "p", "b").ok());
  ASSERT_TRUE(read_only->Commit().ok());
  auto dropped = store_->Begin(TransactionOptions());
  ASSERT_TRUE(dropped->Insert(*table_, Entity("p", "c")).ok());
  dropped->Abort();
  dropped->Abort();  // once is counted
  {
    auto destroyed = store_->Begin(TransactionOptions());  // given up too
    ASSERT_TRUE(destroyed->Insert(*table_, Entity("p", "d")).ok());
  }
  ASSERT_TRUE(store_->Recover().ok());
  const MetricsSnapshot m = store_->Metrics();
  // The embedded store commits as one atomic batch.
  EXPECT_EQ(m.Value("blobtable_txn_commits", {{"path", "atomic"}, {"code", "Conflict"}}), 1);
  EXPECT_EQ(m.Value("blobtable_txn_commits", {{"path", "atomic"}, {"code", "OK"}}), 1);
  EXPECT_EQ(m.Value("blobtable_txn_commits", {{"path", "read_only"}, {"code", "OK"}}), 1);
  EXPECT_EQ(m.Value("blobtable_txn_commits"), 3);
  EXPECT_EQ(m.Count("blobtable_txn_commit_seconds"), 3u);
  EXPECT_EQ(m.Value("blobtable_txn_aborts"), 2);
  EXPECT_EQ(m.Value("blobtable_recoveries", {{"code", "OK"}}), 1);
  EXPECT_EQ(m.Value("blobtable_recovered_transactions"), 0);
}

// Store::MetricsSource: the counts and gauges as they were at the store's
// close, and the data file let go of with the store (a CLI that keeps the
// function for SIGUSR1 must not keep the store open, nor a cache unflushed).
TEST(MetricsSourceTest, ItOutlivesTheStoreWithoutHoldingItsFileOpen) {
  TempDir dir;
  std::function<MetricsSnapshot()> source;
  {
    auto store = *Store::Open(dir.path());
    ASSERT_TRUE(store->OpenTable("orders")->Upsert(Entity("p", "a")).ok());
    source = store->MetricsSource();
  }
  const MetricsSnapshot m = source();
  EXPECT_EQ(m.Value("blobtable_operations", {{"op", "upsert"}}), 1);
  EXPECT_GT(m.Value("blobtable_local_file_bytes"), 0);
  auto compacted = Store::Compact(dir.path());  // refused while any process has it open
  EXPECT_TRUE(compacted.ok()) << compacted.status().ToString();
}

TEST(CoordinationMetricsTest, LocksAndQueuesCountWhatHappensToThem) {
  TempDir dir;
  internal::FakeClock clock;  // waits and leases pass when the test says
  StoreOptions o;
  o.clock = &clock;
  auto store = *Store::Open(dir.path(), o);
  std::promise<void> lost;
  LockOptions lo;
  lo.on_lost = [&](const Status&) { lost.set_value(); };
  auto held = Lock::Acquire(*store, "job", lo);
  ASSERT_TRUE(held.ok()) << held.status().ToString();
  LockOptions brief;
  brief.timeout = std::chrono::seconds(1);
  EXPECT_EQ(Lock::Acquire(*store, "job", brief).status().code(), Code::kLockTimeout);
  // Its lease broken behind its back: the next renewal finds it gone.
  ASSERT_TRUE(store->blob_store().BreakLease(internal::coord::LockBlobName("job"), 0, {}).ok());
  clock.Advance(std::chrono::seconds(11));  // past a third of the lease: a renewal is due
  ASSERT_EQ(lost.get_future().wait_for(std::chrono::seconds(60)), std::future_status::ready);

  QueueOptions qo;
  qo.max_dequeues = 1;
  auto q = *WorkQueue::Open(*store, "jobs", qo);
  ASSERT_TRUE(q.Enqueue("a").ok());
  ASSERT_TRUE(q.Enqueue("b").ok());
  auto a = q.Dequeue();
  ASSERT_TRUE(a.ok() && *a);
  ASSERT_TRUE(q.Complete(**a).ok());
  EXPECT_TRUE(q.Complete(**a).IsNotFound());
  auto b = q.Dequeue();
  ASSERT_TRUE(b.ok() && *b);
  ASSERT_TRUE(q.Abandon(**b).ok());
  auto again = q.Dequeue();  // delivered max_dequeues times: dead-lettered instead
  ASSERT_TRUE(again.ok());
  EXPECT_FALSE(*again);

  const MetricsSnapshot m = store->Metrics();
  EXPECT_EQ(m.Value("blobtable_lock_acquisitions", {{"code", "OK"}}), 1);
  EXPECT_EQ(m.Value("blobtable_lock_acquisitions", {{"code", "LockTimeout"}}), 1);
  EXPECT_EQ(m.Value("blobtable_locks_lost"), 1);
  EXPECT_EQ(m.Value("blobtable_queue_deliveries"), 2);
  EXPECT_EQ(m.Value("blobtable_queue_completions", {{"code", "OK"}}), 1);
  EXPECT_EQ(m.Value("blobtable_queue_completions", {{"code", "NotFound"}}), 1);
  EXPECT_EQ(m.Value("blobtable_queue_dead_letters"), 1);
}

// ---- The catalog and the docs ----

// docs/observability.md#metrics lists every family by name, with its type
// and unit, in a table: the catalog and the docs cannot drift apart.
TEST(MetricsDocsTest, TheDocsListEveryMetricAndNoOther) {
  std::ifstream docs(std::string(BLOBTABLE_SOURCE_DIR) + "/docs/observability.md");
  ASSERT_TRUE(docs.good());
  std::set<std::string> documented;
  const std::regex row(R"(^\| `(blobtable_[a-z_]+)` \|)");
  std::string line;
  for (std::smatch m; std::getline(docs, line);)
    if (std::regex_search(line, m, row)) documented.insert(m[1]);
  std::set<std::string> kept;
  for (const internal::MetricDef* def : internal::metric::kAll) {
    kept.insert(def->name);
    // OpenMetrics: a unit is the name's last word.
    if (*def->unit) {
      EXPECT_TRUE(std::string(def->name).ends_with(std::string("_") + def->unit));
    }
  }
  EXPECT_EQ(documented, kept);
}

}  // namespace
}  // namespace blobtable::testing
