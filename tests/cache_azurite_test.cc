// SPDX-License-Identifier: Apache-2.0
// The local cache and queries by listing on Azurite (started by the test):
// reads and queries counted request by request (a counter under the cache,
// and the Azure backend's log of every HTTP attempt), changes made by the
// official JavaScript SDK behind the store's back, Azurite stopped, killed
// and frozen under an open store, and the CLI's cache options in separate
// processes sharing one cache directory.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <mutex>

#include "blobtable/store.h"
#include "model/blob_naming.h"
#include "model/entity_codec.h"
#include "tests/azurite.h"
#include "tests/backend.h"
#include "testing/counting_blob_store.h"
#include "tests/shell.h"
#include "tests/test_util.h"
#include "util/parallel.h"

namespace blobtable::testing {
namespace {

using json = nlohmann::json;
using std::chrono::milliseconds;

std::string Rk(int i) {
  char rk[16];
  snprintf(rk, sizeof rk, "r%04d", i);
  return rk;
}

// An entity of about `pad` bytes (in strings of at most 30,000 characters:
// a String property holds 32 K UTF-16 units).
Entity Row(const std::string& pk, const std::string& rk, int n, size_t pad) {
  Entity e(pk, rk);
  e.Set("n", n);
  for (int i = 0; pad > 0; ++i) {
    const size_t part = std::min<size_t>(pad, 30'000);
    e.Set("pad" + std::to_string(i), std::string(part, 'x'));
    pad -= part;
  }
  return e;
}

class CacheAzuriteTest : public ::testing::Test {
 protected:
  void SetUp() override {
    Azurite* a = Azurite::Get();
    ASSERT_NE(a, nullptr);
    conn_ = a->ConnectionString();
    container_ = FreshContainer("cache");
  }

  // A store on `conn` (default: the shared Azurite), reading through the
  // cache in cache_dir_ unless `cache` is false, with counter_ under the
  // cache and every HTTP attempt in the log.
  std::unique_ptr<Store> Open(bool cache = true, StoreOptions o = {}, std::string conn = "") {
    o.container = container_;
    o.cache.enabled = cache;
    o.cache.directory = cache_dir_.path() + "/cache";
    o.azure.retry.initial_delay = milliseconds(1);
    o.request_log = [this](const std::string& line) {
      std::lock_guard<std::mutex> lock(mu_);
      log_.push_back(line);
    };
    o.wrap_blob_store = [this](std::shared_ptr<BlobStore> s) {
      counter_ = std::make_shared<internal::CountingBlobStore>(std::move(s));
      // Not the table's index definitions, read again in the background by
      // a write that finds them over a second old (a slow run's).
      counter_->LeaveOutGetsUnder("t/orders~/");
      return counter_;
    };
    auto store = Store::Open(conn.empty() ? conn_ : conn, o);
    EXPECT_TRUE(store.ok()) << store.status().ToString();
    return store.ok() ? std::move(*store) : nullptr;
  }
  // HTTP attempts logged since the last call.
  std::vector<std::string> TakeLog() {
    std::lock_guard<std::mutex> lock(mu_);
    return std::exchange(log_, {});
  }
  // Writes rows pk/r0000.. of `pad` bytes through a store without a cache,
  // many at once.
  void InsertRows(const std::string& pk, int n, size_t pad) {
    auto writer = Open(/*cache=*/false);
    ASSERT_NE(writer, nullptr);
    auto table = *writer->OpenTable("orders");
    std::atomic<int> failed{0};
    internal::ParallelFor(static_cast<size_t>(n), 8, [&](size_t i) {
      if (!table.Upsert(Row(pk, Rk(static_cast<int>(i)), static_cast<int>(i), pad)).ok()) ++failed;
    });
    ASSERT_EQ(failed.load(), 0);
  }
  // Replaces an entity's blob with the official SDK (keeping the blob's
  // metadata, inline copy and all, if `keep_metadata`).
  void UploadWithTheSdk(const Entity& e, bool keep_metadata) {
    auto body = internal::EncodeEntity(e);
    ASSERT_TRUE(body.ok());
    const std::string file = cache_dir_.path() + "/body";
    std::ofstream(file, std::ios::binary) << *body;
    auto blob = internal::naming::EntityBlobName("orders", e.partition_key(), e.row_key());
    ShellRun r =
        Shell(AzureClient("upload " + Quote(conn_) + " " + container_ + " " + Quote(*blob) + " " +
                          file + (keep_metadata ? " keep-metadata" : "")));
    ASSERT_EQ(r.code, 0) << r.out << r.err;
  }
  static QueryOptions Partition(const std::string& pk) {
    QueryOptions q;
    q.partition_key = pk;
    return q;
  }

  std::string conn_, container_;
  TempDir cache_dir_;
  std::shared_ptr<internal::CountingBlobStore> counter_;
  std::mutex mu_;
  std::vector<std::string> log_;
};

TEST_F(CacheAzuriteTest, FreshReadsOfAnUnchangedEntityTransferNoBody) {
  auto store = Open();
  auto table = *store->OpenTable("orders");
  ASSERT_TRUE(table.Insert(Row("p", "a", 1, 2000)).ok());  // written through
  counter_->Clear();
  TakeLog();
  for (int i = 0; i < 3; ++i) {
    auto e = table.Get("p", "a");
    ASSERT_TRUE(e.ok()) << e.status().ToString();
    EXPECT_FALSE(e->stale());
    EXPECT_EQ(*e->FindAs<int32_t>("n"), 1);
  }
  EXPECT_EQ(counter_->Counts(), (std::map<std::string, int>{{"get", 3}}));
  EXPECT_EQ(counter_->NotModified(), 3);
  for (const std::string& line : TakeLog())
    EXPECT_NE(line.find("GET t/orders/e/-p/-a -> 304"), std::string::npos) << line;
  auto stats = store->cache_stats();
  ASSERT_TRUE(stats.ok());
  EXPECT_EQ(stats->not_modified, 3u);
  EXPECT_GE(stats->bytes_saved, 3 * 2000u);
}

// Another client rewrites one entity plainly, and another keeping its old
// metadata (the inline copy of the old body included): the next fresh read
// and the next query see the new versions, with the cache and without.
TEST_F(CacheAzuriteTest, AChangeMadeWithTheOfficialSdkIsSeenByTheNextReadAndQuery) {
  auto store = Open();
  auto table = *store->OpenTable("orders");
  ASSERT_TRUE(table.Insert(Row("p", "a", 1, 10)).ok());
  ASSERT_TRUE(table.Insert(Row("p", "b", 1, 10)).ok());
  ASSERT_EQ(table.Query(Partition("p"))->entities.size(), 2u);

  UploadWithTheSdk(Row("p", "a", 2, 10), /*keep_metadata=*/false);
  auto a = table.Get("p", "a");
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  EXPECT_EQ(*a->FindAs<int32_t>("n"), 2);
  EXPECT_EQ(store->cache_stats()->changed, 1u);

  UploadWithTheSdk(Row("p", "b", 3, 10), /*keep_metadata=*/true);
  counter_->Clear();
  auto page = table.Query(Partition("p"));
  ASSERT_TRUE(page.ok()) << page.status().ToString();
  ASSERT_EQ(page->entities.size(), 2u);
  EXPECT_EQ(*page->entities[0].FindAs<int32_t>("n"), 2);  // the cached copy, current
  EXPECT_EQ(*page->entities[1].FindAs<int32_t>("n"), 3);  // its old inline copy refused
  EXPECT_EQ(counter_->Counts(), (std::map<std::string, int>{{"list", 1}, {"get", 1}}));

  auto uncached = Open(/*cache=*/false);
  page = (*uncached->OpenTable("orders")).Query(Partition("p"));
  ASSERT_TRUE(page.ok());
  EXPECT_EQ(*page->entities[0].FindAs<int32_t>("n"), 2);
  EXPECT_EQ(*page->entities[1].FindAs<int32_t>("n"), 3);
  EXPECT_EQ(counter_->Counts(), (std::map<std::string, int>{{"list", 1}, {"get", 2}}));
}

TEST_F(CacheAzuriteTest, MaxStaleAndOfflineServeWithoutRequests) {
  auto store = Open();
  auto table = *store->OpenTable("orders");
  ASSERT_TRUE(table.Insert(Row("p", "a", 1, 10)).ok());
  counter_->Clear();
  TakeLog();
  auto young = table.Get("p", "a", ReadPolicy::MaxStale(std::chrono::minutes(5)));
  ASSERT_TRUE(young.ok());
  EXPECT_FALSE(young->stale());
  auto offline = table.Get("p", "a", ReadPolicy::Offline());
  ASSERT_TRUE(offline.ok());
  EXPECT_TRUE(offline->stale());
  EXPECT_EQ(table.Get("p", "never", ReadPolicy::Offline()).status().code(), Code::kNotFound);
  EXPECT_EQ(counter_->Total(), 0);
  EXPECT_TRUE(TakeLog().empty());
}

TEST_F(CacheAzuriteTest, OfflineWorksWithAzuriteStopped) {
  auto own = Azurite::StartOwn();
  ASSERT_NE(own, nullptr);
  auto store = Open(true, {}, own->ConnectionString());
  auto table = *store->OpenTable("orders");
  for (const char* rk : {"a", "b", "c"}) ASSERT_TRUE(table.Insert(Row("p", rk, 1, 10)).ok());
  ASSERT_EQ(table.Query(Partition("p"))->entities.size(), 3u);
  own->Kill();
  TakeLog();
  auto a = table.Get("p", "a", ReadPolicy::Offline());
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  EXPECT_TRUE(a->stale());
  QueryOptions q = Partition("p");
  q.policy = ReadPolicy::Offline();
  auto page = table.Query(q);
  ASSERT_TRUE(page.ok()) << page.status().ToString();
  EXPECT_TRUE(page->stale);
  EXPECT_EQ(page->entities.size(), 3u);
  EXPECT_EQ(table.Get("p", "never", ReadPolicy::Offline()).status().code(), Code::kNotFound);
  EXPECT_TRUE(TakeLog().empty()) << "offline sends nothing";
}

// Killed under an open store: the first read of a cached entity tries once
// (a refused connection is not retried when the cache can answer), and
// answers stale; for the unreachable interval after, reads and queries try
// nothing at all.
TEST_F(CacheAzuriteTest, StaleIfErrorAnswersAtOnceWhenAzuriteIsKilled) {
  auto own = Azurite::StartOwn();
  ASSERT_NE(own, nullptr);
  StoreOptions o;
  o.cache.unreachable_interval = std::chrono::minutes(10);  // longer than the test
  auto store = Open(true, o, own->ConnectionString());
  auto table = *store->OpenTable("orders");
  for (const char* rk : {"a", "b"}) ASSERT_TRUE(table.Insert(Row("p", rk, 1, 10)).ok());
  ASSERT_TRUE(table.Get("p", "a").ok());
  ASSERT_TRUE(table.Query(Partition("p")).ok());  // listed whole: the cache knows the range
  own->Kill();
  TakeLog();
  auto a = table.Get("p", "a");
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  EXPECT_TRUE(a->stale());
  std::vector<std::string> tried = TakeLog();
  ASSERT_EQ(tried.size(), 1u);
  EXPECT_NE(tried[0].find("no response (Unavailable)"), std::string::npos) << tried[0];

  auto b = table.Get("p", "b");
  ASSERT_TRUE(b.ok());
  EXPECT_TRUE(b->stale());
  EXPECT_EQ(table.Get("p", "never").status().code(), Code::kUnavailable);
  auto page = table.Query(Partition("p"));
  ASSERT_TRUE(page.ok()) << page.status().ToString();
  EXPECT_TRUE(page->stale);
  EXPECT_EQ(page->entities.size(), 2u);
  EXPECT_TRUE(TakeLog().empty()) << "known unreachable: nothing is tried";
  EXPECT_GE(store->cache_stats()->stale, 3u);
}

// Frozen (connections accepted, nothing answers): a cached read answers
// stale once stale_if_error_deadline has passed on its one attempt, not
// after the retry schedule. (Real time: a transport's timeout cannot be
// faked; only the outcome and the attempts are asserted.)
TEST_F(CacheAzuriteTest, StaleIfErrorAnswersByItsDeadlineWhenRequestsHang) {
  auto own = Azurite::StartOwn();
  ASSERT_NE(own, nullptr);
  StoreOptions o;
  o.cache.stale_if_error_deadline = milliseconds(300);
  o.azure.request_timeout = std::chrono::seconds(30);
  auto store = Open(true, o, own->ConnectionString());
  auto table = *store->OpenTable("orders");
  ASSERT_TRUE(table.Insert(Row("p", "a", 1, 10)).ok());
  own->Freeze();
  TakeLog();
  auto a = table.Get("p", "a");
  own->Thaw();
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  EXPECT_TRUE(a->stale());
  EXPECT_EQ(TakeLog().size(), 1u) << "one attempt, cut to the deadline";
}

// The issue's targets: a 1,000-row partition of 1 KiB entities costs one
// listing page and no GET, with or without the cache.
TEST_F(CacheAzuriteTest, AThousandRowQueryOfSmallRowsCostsOneListing) {
  InsertRows("small", 1000, 1000);
  for (bool cache : {false, true}) {
    auto store = Open(cache);
    auto page = (*store->OpenTable("orders")).Query(Partition("small"));
    ASSERT_TRUE(page.ok()) << page.status().ToString();
    EXPECT_EQ(page->entities.size(), 1000u);
    EXPECT_EQ(*page->entities[500].FindAs<int32_t>("n"), 500);
    EXPECT_EQ(counter_->Counts(), (std::map<std::string, int>{{"list", 1}})) << "cache " << cache;
  }
  // The cache kept what the listing carried: max stale lists, offline
  // answers from it alone.
  auto store = Open();
  auto table = *store->OpenTable("orders");
  QueryOptions q = Partition("small");
  q.policy = ReadPolicy::MaxStale(std::chrono::minutes(5));
  EXPECT_EQ(table.Query(q)->entities.size(), 1000u);
  EXPECT_EQ(counter_->Counts(), (std::map<std::string, int>{{"list", 1}}));
  q.policy = ReadPolicy::Offline();
  counter_->Clear();
  auto offline = table.Query(q);
  EXPECT_EQ(offline->entities.size(), 1000u);
  EXPECT_TRUE(offline->stale);
  EXPECT_EQ(counter_->Total(), 0);
}

// 64 KiB rows (no inline copies): with the cache, only the rows changed
// behind the store's back are fetched (fresh, and max stale too: a listed
// ETag proves a copy old), a row deleted behind its back disappears, and
// offline costs nothing; without it, every row is a GET (sent many at once).
TEST_F(CacheAzuriteTest, OnlyRowsChangedBehindTheStoresBackAreFetched) {
  InsertRows("large", 1000, 64 << 10);
  auto store = Open();
  auto table = *store->OpenTable("orders");
  auto page = table.Query(Partition("large"));  // fills the cache
  ASSERT_TRUE(page.ok()) << page.status().ToString();
  ASSERT_EQ(page->entities.size(), 1000u);
  EXPECT_EQ(counter_->Counts(), (std::map<std::string, int>{{"list", 1}, {"get", 1000}}));

  auto other = Open(/*cache=*/false);
  auto theirs = *other->OpenTable("orders");
  auto change_one_in_a_hundred = [&](int n) {
    for (int i = 0; i < 1000; i += 100)
      ASSERT_TRUE(theirs.Upsert(Row("large", Rk(i), n * i, 64 << 10)).ok());
  };
  change_one_in_a_hundred(-1);
  ASSERT_TRUE(theirs.Delete("large", Rk(999), "*").ok());

  auto cached = Open();
  page = (*cached->OpenTable("orders")).Query(Partition("large"));
  ASSERT_TRUE(page.ok()) << page.status().ToString();
  ASSERT_EQ(page->entities.size(), 999u);
  EXPECT_EQ(*page->entities[100].FindAs<int32_t>("n"), -100);
  EXPECT_EQ(*page->entities[101].FindAs<int32_t>("n"), 101);
  EXPECT_EQ(counter_->Counts(), (std::map<std::string, int>{{"list", 1}, {"get", 10}}));

  change_one_in_a_hundred(2);
  QueryOptions q = Partition("large");
  q.policy = ReadPolicy::MaxStale(std::chrono::minutes(5));
  counter_->Clear();
  page = (*cached->OpenTable("orders")).Query(q);
  ASSERT_TRUE(page.ok());
  EXPECT_EQ(*page->entities[100].FindAs<int32_t>("n"), 200);
  EXPECT_EQ(counter_->Counts(), (std::map<std::string, int>{{"list", 1}, {"get", 10}}));
  q.policy = ReadPolicy::Offline();
  counter_->Clear();
  page = (*cached->OpenTable("orders")).Query(q);
  ASSERT_TRUE(page.ok());
  EXPECT_EQ(page->entities.size(), 999u);
  EXPECT_TRUE(page->stale);
  EXPECT_EQ(counter_->Total(), 0);

  auto uncached = Open(/*cache=*/false);
  page = (*uncached->OpenTable("orders")).Query(Partition("large"));
  ASSERT_TRUE(page.ok());
  EXPECT_EQ(page->entities.size(), 999u);
  EXPECT_EQ(counter_->Counts(), (std::map<std::string, int>{{"list", 1}, {"get", 999}}));
}

TEST_F(CacheAzuriteTest, EvictionKeepsTheSizeBound) {
  StoreOptions o;
  o.cache.max_bytes = 256 << 10;
  auto store = Open(true, o);
  auto table = *store->OpenTable("orders");
  for (int i = 0; i < 150; ++i) ASSERT_TRUE(table.Insert(Row("p", Rk(i), i, 4000)).ok());
  auto stats = store->cache_stats();
  ASSERT_TRUE(stats.ok());
  EXPECT_LE(stats->bytes, 256u << 10);
  EXPECT_GT(stats->evictions, 0u);
  EXPECT_TRUE(table.Get("p", Rk(149), ReadPolicy::Offline()).ok());  // the newest is kept
}

// ---- The CLI, one process per command, sharing one cache directory ----

class CacheCliTest : public CacheAzuriteTest {
 protected:
  ShellRun Cli(const std::string& args, const std::string& conn = "",
               const std::string& input = "") {
    return Shell(std::string(BLOBTABLE_CLI_PATH) + " --store " +
                     Quote(conn.empty() ? conn_ : conn) + " --container " + container_ +
                     " --cache " + Quote(cache_dir()) + " " + args,
                 input);
  }
  std::string cache_dir() const { return cache_dir_.path() + "/cli-cache"; }
  // The storage requests a -v run logged ("blobtable: GET ... -> 304 ...").
  static int Count(const ShellRun& run, const std::string& what) {
    int n = 0;
    for (size_t at = 0; (at = run.err.find(what, at)) != std::string::npos; ++at) ++n;
    return n;
  }
  static int Requests(const ShellRun& run) {
    int n = 0;
    for (size_t at = 0; (at = run.err.find(" -> ", at)) != std::string::npos; ++at) ++n;
    return n;
  }
};

// `get` with a warm cache costs exactly one request (a 304), with
// --max-stale or --offline none; two processes share the cache, and
// `cache stats` adds up what both counted.
TEST_F(CacheCliTest, AWarmGetCostsOneRequestAndMaxStaleOrOfflineNone) {
  ASSERT_EQ(Cli("put orders", "", R"({"PartitionKey":"p","RowKey":"r","n":1})").code, 0);
  ShellRun warm = Cli("-v get orders p r");
  ASSERT_EQ(warm.code, 0) << warm.err;
  EXPECT_EQ(Requests(warm), 1) << warm.err;
  EXPECT_NE(warm.err.find("GET t/orders/e/-p/-r -> 304"), std::string::npos) << warm.err;
  EXPECT_EQ(json::parse(warm.out)["n"], 1);
  ShellRun young = Cli("-v --max-stale 300 get orders p r");
  ASSERT_EQ(young.code, 0);
  EXPECT_EQ(Requests(young), 0) << young.err;
  ShellRun offline = Cli("-v --offline get orders p r");
  ASSERT_EQ(offline.code, 0);
  EXPECT_EQ(Requests(offline), 0) << offline.err;
  EXPECT_NE(offline.err.find("stale"), std::string::npos) << offline.err;
  EXPECT_EQ(Cli("--offline get orders p missing").code, 3);
  ShellRun cold = Cli("-v --no-cache get orders p r");
  EXPECT_NE(cold.err.find("GET t/orders/e/-p/-r -> 200"), std::string::npos) << cold.err;

  ShellRun stats = Cli("cache stats");
  ASSERT_EQ(stats.code, 0) << stats.err;
  json s = json::parse(stats.out);
  EXPECT_EQ(s["directory"], cache_dir());
  EXPECT_EQ(s["entries"], 1);
  EXPECT_EQ(s["not_modified"], 1);
  EXPECT_EQ(s["hits"], 2);  // max stale, offline
  EXPECT_EQ(s["stale"], 1);
  ASSERT_EQ(Cli("cache clear").code, 0);
  EXPECT_EQ(json::parse(Cli("cache stats").out)["entries"], 0);
}

// import writes a row a request, 16 in flight; export reads them back by
// listing (300 small rows: one listing).
TEST_F(CacheCliTest, ImportAndExportOnAzurite) {
  std::string lines;
  for (int n = 0; n < 300; ++n)
    lines += R"({"PartitionKey":"p","RowKey":")" + Rk(n) + R"(","n":)" + std::to_string(n) + "}\n";
  ShellRun in = Cli("-v import bulk", "", lines);
  ASSERT_EQ(in.code, 0) << in.err.substr(0, 2000);
  EXPECT_NE(in.err.find("300 written, 0 skipped (existing), 0 failed"), std::string::npos);
  // One write a row. (Other attempts vary: the first writers at once each
  // find the container missing and create it, and Azurite may ask for a retry.)
  EXPECT_EQ(Count(in, " -> 201") - Count(in, "CREATE-CONTAINER  -> 201"), 300)
      << in.err.substr(0, 3000);
  ShellRun out = Cli("-v export bulk --filter \"n ge 290\"");
  ASSERT_EQ(out.code, 0) << out.err;
  EXPECT_EQ(std::count(out.out.begin(), out.out.end(), '\n'), 10);
  EXPECT_EQ(Requests(out), 1) << "one listing answers for small rows";
}

TEST_F(CacheCliTest, ACorruptCacheFileIsMovedAsideAndRebuilt) {
  ASSERT_EQ(Cli("put orders", "", R"({"PartitionKey":"p","RowKey":"r","n":1})").code, 0);
  std::ofstream(cache_dir() + "/data.mdb", std::ios::trunc) << std::string(10000, 'z');
  ShellRun get = Cli("get orders p r");
  ASSERT_EQ(get.code, 0) << get.err;
  EXPECT_NE(get.err.find("moved aside"), std::string::npos) << get.err;
  EXPECT_EQ(json::parse(get.out)["n"], 1);
  ShellRun again = Cli("-v --offline get orders p r");  // cached again
  EXPECT_EQ(again.code, 0) << again.err;
  EXPECT_EQ(again.err.find("moved aside"), std::string::npos) << again.err;
}

TEST_F(CacheCliTest, AnswersWhileAzuriteIsDownAreFlaggedStale) {
  auto own = Azurite::StartOwn();
  ASSERT_NE(own, nullptr);
  const std::string conn = own->ConnectionString();
  ASSERT_EQ(Cli("put orders", conn, R"({"PartitionKey":"p","RowKey":"r","n":1})").code, 0);
  ASSERT_EQ(Cli("query orders --pk p", conn).code, 0);  // the partition listed once
  own->Kill();
  ShellRun get = Cli("get orders p r", conn);
  EXPECT_EQ(get.code, 0) << get.err;
  EXPECT_NE(get.err.find("warning: stale"), std::string::npos) << get.err;
  EXPECT_EQ(json::parse(get.out)["n"], 1);
  ShellRun query = Cli("query orders --pk p", conn);
  EXPECT_EQ(query.code, 0) << query.err;
  EXPECT_NE(query.err.find("warning: stale"), std::string::npos) << query.err;
  EXPECT_EQ(Cli("get orders p missing", conn).code, 6);  // not cached: unreachable
  // Never listed: unreachable, never "no rows" (issue 30, hole 5).
  ShellRun never = Cli("query orders --pk q", conn);
  EXPECT_EQ(never.code, 6) << never.err;
  EXPECT_EQ(never.out, "");
  EXPECT_EQ(Cli("export orders", conn).code, 6);  // the whole table was never listed
}

// Issue 33's shell commands on Azure: a put without JSON, csv, and a queue
// driven from the shell (take's output as done's handle, run on an item,
// an empty queue as exit 9).
TEST_F(CacheCliTest, ShellFriendlyCommandsWorkOnAzure) {
  ASSERT_EQ(Cli("put orders c42 o1 status=open Total:double=9.5 'note=a,b'").code, 0);
  ShellRun csv = Cli("query orders --format csv");
  ASSERT_EQ(csv.code, 0) << csv.err;
  EXPECT_EQ(csv.out, "PartitionKey,RowKey,Total,note,status\nc42,o1,9.5,\"a,b\",open\n");
  ASSERT_EQ(Cli("queue put jobs first").code, 0);
  ShellRun taken = Cli("queue take jobs --wait --timeout 30");
  ASSERT_EQ(taken.code, 0) << taken.err;
  EXPECT_EQ(Cli("queue extend jobs " + Quote(taken.out.substr(0, taken.out.size() - 1))).code, 0);
  EXPECT_EQ(Cli("queue done jobs " + Quote(taken.out.substr(0, taken.out.size() - 1))).code, 0);
  ShellRun empty = Cli("queue take jobs");
  EXPECT_EQ(empty.code, 9);
  EXPECT_EQ(empty.err, "");
  ASSERT_EQ(Cli("queue put jobs", "", "second\n").code, 0);
  ShellRun run = Cli("queue run jobs -- cat");
  ASSERT_EQ(run.code, 0) << run.err;
  EXPECT_EQ(run.out, "second\n");  // the body, byte for byte
  EXPECT_EQ(Cli("queue list jobs").out, "");
}

}  // namespace
// A table as a whole on Azurite: tables, count, delete with a selection
// (concurrent deletes: no atomic batches there) and drop, whose deletes
// leave nothing in the cache for an offline read to answer with.
TEST_F(CacheCliTest, TableWideCommandsWorkOnAzureAndLeaveNothingCached) {
  std::string lines;
  for (int i = 0; i < 12; ++i)
    lines += "{\"PartitionKey\":\"p\",\"RowKey\":\"r" + std::to_string(10 + i) +
             "\",\"n\":" + std::to_string(i) + "}\n";
  ASSERT_EQ(Cli("import orders --quiet", "", lines).code, 0);
  ASSERT_EQ(Cli("import audit --quiet", "", lines.substr(0, lines.find('\n') + 1)).code, 0);
  ShellRun tables = Cli("tables --counts");
  ASSERT_EQ(tables.code, 0) << tables.err;
  EXPECT_EQ(tables.out, "audit\t1\norders\t12\n");
  EXPECT_EQ(Cli("count orders --filter 'n ge 4'").out, "8\n");
  ASSERT_EQ(Cli("get orders p r10").code, 0);  // cached
  ShellRun deleted = Cli("delete orders --filter 'n lt 4'");
  ASSERT_EQ(deleted.code, 0) << deleted.err;
  EXPECT_NE(deleted.err.find("4 matched, 4 deleted"), std::string::npos) << deleted.err;
  EXPECT_EQ(Cli("--offline get orders p r10").code, 3);
  // An Azure store's backup is an export of every table, which restore
  // loads into an embedded store.
  const std::string dump = cache_dir_.path() + "/dump", local = cache_dir_.path() + "/local";
  ShellRun backup = Cli("backup " + Quote(dump));
  ASSERT_EQ(backup.code, 0) << backup.err;
  ShellRun restored = Shell(std::string(BLOBTABLE_CLI_PATH) + " --store " + Quote(local) +
                            " restore " + Quote(dump) + " --quiet && " + BLOBTABLE_CLI_PATH +
                            " --store " + Quote(local) + " tables --counts");
  EXPECT_EQ(restored.out, "audit\t1\norders\t8\n") << restored.err;
  ASSERT_EQ(Cli("get orders p r15").code, 0);  // cached
  ShellRun dropped = Cli("drop orders");
  ASSERT_EQ(dropped.code, 0) << dropped.err;
  EXPECT_NE(dropped.err.find("dropped table orders: 8 entities"), std::string::npos) << dropped.err;
  EXPECT_EQ(Cli("count orders").code, 3);  // no such table now (issue 56)
  EXPECT_EQ(Cli("--missing-table-ok count orders").out, "0\n");
  EXPECT_EQ(Cli("--offline get orders p r15").code, 3);
  EXPECT_EQ(Cli("tables").out, "audit\n");
}

}  // namespace blobtable::testing
