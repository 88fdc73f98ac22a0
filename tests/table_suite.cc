// SPDX-License-Identifier: Apache-2.0
// The Table API suite (see table_suite.h): every operation, its conditions
// and errors, queries and paging, request counts.
#include "tests/table_suite.h"

#include <algorithm>

namespace blobtable::testing {

void TableTest::SetUp() {
  StoreOptions o;
  if (GetParam().fake_clock()) o.clock = &clock_;  // else the real clock: the server's time
  // Writes that meet a lease give up after 300 ms; with the fake clock the
  // backoff moves that clock instead of sleeping (FakeClock::SleepFor).
  o.busy_timeout = std::chrono::milliseconds(300);
  o.wrap_blob_store = [this](std::shared_ptr<BlobStore> b) {
    counter_ = std::make_shared<internal::CountingBlobStore>(std::move(b));
    return counter_;
  };
  o.container = FreshContainer("tables");
  auto store = OpenBackendStore(GetParam(), o);
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  store_ = std::move(*store);
  auto t = store_->OpenTable("Orders");
  ASSERT_TRUE(t.ok());
  table_.emplace(*t);
}

std::map<std::string, int> TableTest::counts() const { return counter_->Counts(); }

static Entity Make(const std::string& pk, const std::string& rk, int32_t n = 0) {
  Entity e(pk, rk);
  e.Set("n", n);
  return e;
}

TEST_P(TableTest, InsertThenGetRoundTripsEveryTypeWithETagAndTimestamp) {
  Entity e("p", "r");
  e.Set("s", std::string("x")).Set("b", Binary{"\x01"}).Set("t", true).Set("d", 1.5);
  e.Set("g", Guid{"0f8fad5b-d9cb-469f-a165-70867728950e"}).Set("i", int32_t{1});
  e.Set("l", int64_t{1} << 40).Set("w", *ParseDateTime("2020-01-01T00:00:00Z"));
  auto stored = table().Insert(e);
  ASSERT_TRUE(stored.ok()) << stored.status().ToString();
  EXPECT_FALSE(stored->etag().empty());
  if (GetParam().fake_clock()) {
    EXPECT_EQ(stored->timestamp(), std::chrono::time_point_cast<Ticks>(clock_.Now()));
  }
  auto got = table().Get("p", "r");
  ASSERT_TRUE(got.ok());
  EXPECT_TRUE(got->SameContent(e));
  EXPECT_EQ(got->etag(), stored->etag());
  EXPECT_EQ(got->timestamp(), stored->timestamp());
}

TEST_P(TableTest, EachSimpleOperationIsOneRequest) {
  ASSERT_TRUE(table().Insert(Make("p", "r")).ok());
  // And, the first write to a table (then at most once a second), a read of
  // its index definitions (docs/indexes.md#what-it-costs).
  EXPECT_EQ(counts(), (std::map<std::string, int>{{"get", 1}, {Write("put"), 1}}));
  counter_->Clear();
  auto got = table().Get("p", "r");
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(counts(), (std::map<std::string, int>{{"get", 1}}));
  counter_->Clear();
  ASSERT_TRUE(table().Replace(Make("p", "r", 2), got->etag()).ok());
  EXPECT_EQ(counts(), (std::map<std::string, int>{{Write("put"), 1}}));
  counter_->Clear();
  ASSERT_TRUE(table().Upsert(Make("p", "r", 3)).ok());
  EXPECT_EQ(counts(), (std::map<std::string, int>{{Write("put"), 1}}));
  counter_->Clear();
  auto cur = table().Get("p", "r");
  counter_->Clear();
  ASSERT_TRUE(table().Delete("p", "r", cur->etag()).ok());
  EXPECT_EQ(counts(), (std::map<std::string, int>{{Write("delete"), 1}}));
}

// "*" (any existing version) costs a HEAD first: If-Match "*" would also
// match a transaction's reservation for an entity that does not exist yet.
TEST_P(TableTest, AnyVersionWritesReadTheETagFirst) {
  ASSERT_TRUE(table().Insert(Make("p", "r")).ok());
  counter_->Clear();
  ASSERT_TRUE(table().Replace(Make("p", "r", 2), "*").ok());
  EXPECT_EQ(counts(), (std::map<std::string, int>{{"head", 1}, {Write("put"), 1}}));
  counter_->Clear();
  ASSERT_TRUE(table().Delete("p", "r", "*").ok());
  EXPECT_EQ(counts(), (std::map<std::string, int>{{"head", 1}, {Write("delete"), 1}}));
}

TEST_P(TableTest, InsertOfExistingEntityIsConflict) {
  ASSERT_TRUE(table().Insert(Make("p", "r", 1)).ok());
  auto again = table().Insert(Make("p", "r", 2));
  EXPECT_EQ(again.status().code(), Code::kConflict);
  EXPECT_NE(again.status().message().find("already exists"), std::string::npos);
  EXPECT_EQ(*table().Get("p", "r")->FindAs<int32_t>("n"), 1);
}

TEST_P(TableTest, ReplaceHonoursETag) {
  auto v1 = table().Insert(Make("p", "r", 1));
  auto v2 = table().Replace(Make("p", "r", 2), v1->etag());
  ASSERT_TRUE(v2.ok()) << v2.status().ToString();
  EXPECT_NE(v2->etag(), v1->etag());
  auto stale = table().Replace(Make("p", "r", 3), v1->etag());
  EXPECT_EQ(stale.status().code(), Code::kConflict);
  EXPECT_NE(stale.status().message().find("no longer matches"), std::string::npos);
  EXPECT_TRUE(table().Replace(Make("p", "r", 4), "*").ok());
  EXPECT_EQ(*table().Get("p", "r")->FindAs<int32_t>("n"), 4);
  EXPECT_EQ(table().Replace(Make("p", "missing"), "*").status().code(), Code::kNotFound);
  EXPECT_EQ(table().Replace(Make("p", "missing"), v1->etag()).status().code(), Code::kNotFound);
  EXPECT_EQ(table().Replace(Make("p", "r"), "").status().code(), Code::kInvalidArgument);
}

TEST_P(TableTest, ReplaceDropsPropertiesMergeKeepsThem) {
  Entity e("p", "r");
  e.Set("a", 1).Set("b", 2);
  auto v1 = table().Insert(e);
  Entity patch("p", "r");
  patch.Set("b", std::string("two")).Set("c", 3);
  auto merged = table().Merge(patch, v1->etag());
  ASSERT_TRUE(merged.ok()) << merged.status().ToString();
  auto got = table().Get("p", "r");
  EXPECT_EQ(*got->FindAs<int32_t>("a"), 1);
  EXPECT_EQ(*got->FindAs<std::string>("b"), "two");
  EXPECT_EQ(*got->FindAs<int32_t>("c"), 3);
  EXPECT_EQ(table().Merge(patch, v1->etag()).status().code(), Code::kConflict);
  EXPECT_EQ(table().Merge(Make("p", "none"), "*").status().code(), Code::kNotFound);
  ASSERT_TRUE(table().Replace(Make("p", "r", 9), "*").ok());
  got = table().Get("p", "r");
  EXPECT_EQ(got->properties().size(), 1u);
}

TEST_P(TableTest, MergeThatWouldExceedThePropertyLimitIsRefused) {
  Entity a("p", "wide");
  for (int i = 0; i < 200; ++i) a.Set("a" + std::to_string(i), i);
  ASSERT_TRUE(table().Insert(a).ok());
  Entity b("p", "wide");
  for (int i = 0; i < 200; ++i) b.Set("b" + std::to_string(i), i);
  auto merged = table().Merge(b, "*");
  EXPECT_EQ(merged.status().code(), Code::kInvalidArgument);
  EXPECT_NE(merged.status().message().find("252"), std::string::npos);
  EXPECT_EQ(table().UpsertMerge(b).status().code(), Code::kInvalidArgument);
  auto got = table().Get("p", "wide");  // still readable, unchanged
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ(got->properties().size(), 200u);
}

// Deletes the blob it is about to write, once: a writer racing the caller.
class DeleteBeforePut final : public BlobStoreWrapper {
 public:
  using BlobStoreWrapper::BlobStoreWrapper;
  Result<WriteResult> Put(std::string_view n, std::string_view d, const PutOptions& o) override {
    Race(n);
    return BlobStoreWrapper::Put(n, d, o);
  }
  // Where a write is a batch (with the check of the index definitions).
  BatchResult CommitBatch(const std::vector<BatchOp>& ops) override {
    if (!ops.empty() && ops[0].kind == BatchOp::Kind::kPut) Race(ops[0].blob);
    return BlobStoreWrapper::CommitBatch(ops);
  }
  void Race(std::string_view n) {
    if (armed) {
      armed = false;
      EXPECT_TRUE(target().Delete(n, {}).ok());
    }
  }
  bool armed = true;
};

TEST_P(TableTest, MergeThatLosesARaceToADeleteIsNotFound) {
  auto v1 = table().Insert(Make("p", "gone"));
  auto racing = std::make_shared<DeleteBeforePut>(
      std::shared_ptr<BlobStore>(&store_->blob_store(), [](BlobStore*) {}));
  auto store = Store::FromBlobStore(racing);  // same backend, racing writer below
  Entity patch("p", "gone");
  patch.Set("x", 1);
  auto r = store->OpenTable("orders")->Merge(patch, v1->etag());
  EXPECT_EQ(r.status().code(), Code::kNotFound) << r.status().ToString();
}

TEST_P(TableTest, UpsertAndUpsertMerge) {
  ASSERT_TRUE(table().Upsert(Make("p", "u", 1)).ok());
  Entity more("p", "u");
  more.Set("extra", true);
  ASSERT_TRUE(table().UpsertMerge(more).ok());
  auto got = table().Get("p", "u");
  EXPECT_EQ(*got->FindAs<int32_t>("n"), 1);
  EXPECT_TRUE(*got->FindAs<bool>("extra"));
  ASSERT_TRUE(table().Upsert(Make("p", "u", 2)).ok());
  got = table().Get("p", "u");
  EXPECT_EQ(got->FindAs<bool>("extra"), nullptr);
  ASSERT_TRUE(table().UpsertMerge(more.Set("n", 5)).ok());  // merges into the existing one
  EXPECT_EQ(*table().Get("p", "u")->FindAs<int32_t>("n"), 5);
  Entity fresh("p", "new");
  fresh.Set("x", 1);
  ASSERT_TRUE(table().UpsertMerge(fresh).ok());
  EXPECT_EQ(*table().Get("p", "new")->FindAs<int32_t>("x"), 1);
}

TEST_P(TableTest, DeleteHonoursETag) {
  auto v1 = table().Insert(Make("p", "d"));
  ASSERT_TRUE(table().Replace(Make("p", "d", 2), "*").ok());
  EXPECT_EQ(table().Delete("p", "d", v1->etag()).code(), Code::kConflict);
  auto v2 = table().Get("p", "d");
  EXPECT_TRUE(table().Delete("p", "d", v2->etag()).ok());
  EXPECT_EQ(table().Get("p", "d").status().code(), Code::kNotFound);
  EXPECT_EQ(table().Delete("p", "d", "*").code(), Code::kNotFound);
}

TEST_P(TableTest, InvalidInputIsNamed) {
  auto bad = table().Insert(Make("p", "a#b"));
  EXPECT_EQ(bad.status().code(), Code::kInvalidArgument);
  EXPECT_NE(bad.status().message().find("RowKey"), std::string::npos);
  EXPECT_EQ(store_->OpenTable("no-dashes").status().code(), Code::kInvalidArgument);
  EXPECT_EQ(table().Get("p/q", "r").status().code(), Code::kInvalidArgument);
}

TEST_P(TableTest, TableNamesAreCaseInsensitive) {
  ASSERT_TRUE(table().Insert(Make("p", "r")).ok());
  EXPECT_TRUE(store_->OpenTable("ORDERS")->Get("p", "r").ok());
  EXPECT_TRUE(store_->OpenTable("other")->Get("p", "r").status().IsNotFound());
}

TEST_P(TableTest, LongKeysWork) {
  std::string pk(900, 'p'), rk(60, 'r');
  ASSERT_TRUE(table().Insert(Make(pk, rk)).ok());
  EXPECT_TRUE(table().Get(pk, rk).ok());
  EXPECT_EQ(table().Insert(Make(std::string(1000, 'p'), std::string(100, 'r'))).status().code(),
            Code::kInvalidArgument);
}

static std::vector<std::string> RowKeys(const QueryPage& page) {
  std::vector<std::string> out;
  for (const auto& e : page.entities) out.push_back(e.row_key());
  return out;
}

TEST_P(TableTest, QueryReturnsRowKeyOrderWithInclusiveRange) {
  std::vector<std::string> keys = {"b", "a", "a b", "a.b", "a%", "\xc3\xa9", "Z", "0", "", "~"};
  for (const auto& k : keys) ASSERT_TRUE(table().Insert(Make("p", k)).ok()) << k;
  ASSERT_TRUE(table().Insert(Make("other", "a")).ok());
  std::vector<std::string> sorted = keys;
  std::sort(sorted.begin(), sorted.end());
  QueryOptions q;
  q.partition_key = "p";
  auto all = table().Query(q);
  ASSERT_TRUE(all.ok()) << all.status().ToString();
  EXPECT_EQ(RowKeys(*all), sorted);
  EXPECT_TRUE(all->continuation.empty());
  q.row_key_from = "a";
  q.row_key_to = "b";
  EXPECT_EQ(RowKeys(*table().Query(q)), (std::vector<std::string>{"a", "a b", "a%", "a.b", "b"}));
  q.row_key_from = "a!";  // not a key itself
  q.row_key_to = "a.";
  EXPECT_EQ(RowKeys(*table().Query(q)), (std::vector<std::string>{"a%"}));
}

TEST_P(TableTest, QueryPagesWithTopAndContinuation) {
  for (int i = 0; i < 25; ++i) {
    char rk[16];
    snprintf(rk, sizeof(rk), "r%02d", i);
    ASSERT_TRUE(table().Insert(Make("p", rk, i)).ok());
  }
  QueryOptions q;
  q.partition_key = "p";
  q.top = 10;
  std::vector<int> seen;
  int pages = 0;
  do {
    auto page = table().Query(q);
    ASSERT_TRUE(page.ok()) << page.status().ToString();
    ++pages;
    for (const auto& e : page->entities) seen.push_back(*e.FindAs<int32_t>("n"));
    q.continuation = page->continuation;
  } while (!q.continuation.empty());
  EXPECT_EQ(pages, 3);
  ASSERT_EQ(seen.size(), 25u);
  for (int i = 0; i < 25; ++i) EXPECT_EQ(seen[i], i);
  // Exactly `top` matching entities: no empty extra page.
  q = {};
  q.partition_key = "p";
  q.top = 25;
  EXPECT_TRUE(table().Query(q)->continuation.empty());
  q.top = 0;
  EXPECT_EQ(table().Query(q).status().code(), Code::kInvalidArgument);
  q.top = 10;
  q.continuation = "garbage";
  EXPECT_EQ(table().Query(q).status().code(), Code::kInvalidArgument);
}

TEST_P(TableTest, WholeTableQueryIsPartitionThenRowOrder) {
  for (const char* pk : {"b", "a", "ab", ""})
    for (const char* rk : {"2", "1"}) ASSERT_TRUE(table().Insert(Make(pk, rk)).ok());
  auto page = table().Query({});
  ASSERT_TRUE(page.ok());
  std::vector<std::string> got;
  for (const auto& e : page->entities) got.push_back(e.partition_key() + "|" + e.row_key());
  EXPECT_EQ(got,
            (std::vector<std::string>{"|1", "|2", "a|1", "a|2", "ab|1", "ab|2", "b|1", "b|2"}));
  QueryOptions q;
  q.row_key_from = "2";
  EXPECT_EQ(table().Query(q)->entities.size(), 4u);
}

TEST_P(TableTest, CorruptEntityBlobIsCorruptionNamingIt) {
  auto name = table().EntityBlobName("p", "bad");
  ASSERT_TRUE(store_->blob_store().Put(*name, "not an entity", {}).ok());
  auto got = table().Get("p", "bad");
  EXPECT_EQ(got.status().code(), Code::kCorruption);
  EXPECT_NE(got.status().message().find(*name), std::string::npos);
}

TEST_P(TableTest, LeasedEntityIsBusy) {
  auto v1 = table().Insert(Make("p", "locked"));
  auto name = table().EntityBlobName("p", "locked");
  ASSERT_TRUE(store_->blob_store().AcquireLease(*name, 15, "", {}).ok());
  auto r = table().Replace(Make("p", "locked", 2), "*");
  EXPECT_EQ(r.status().code(), Code::kBusy);
  EXPECT_EQ(r.status().storage_code(), "LeaseIdMissing");
  EXPECT_TRUE(table().Get("p", "locked").ok());  // reads are not blocked
  if (GetParam().fake_clock()) {
    clock_.Advance(std::chrono::seconds(15));  // the lease expires
  } else {
    ASSERT_TRUE(store_->blob_store().BreakLease(*name, 0, {}).ok());
  }
  EXPECT_TRUE(table().Replace(Make("p", "locked", 3), "*").ok());
}

GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(TableTest);

}  // namespace blobtable::testing
