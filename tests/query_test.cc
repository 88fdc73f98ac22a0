// SPDX-License-Identifier: Apache-2.0
// Queries by listing, over local storage made to behave as a remote store
// (BlobStoreTraits::in_process false, so entities get inline copies and
// queries read concurrently): what a listing answers for, what it does not
// trust, and which reads go out together. Request counts come from a
// counter under the store; the same calls reach Azure
// (tests/cache_azurite_test.cc counts them on Azurite).
#include <gtest/gtest.h>

#include "blobtable/store.h"
#include "cache/caching_blob_store.h"
#include "model/blob_naming.h"
#include "model/entity_codec.h"
#include "model/inline_body.h"
#include "testing/counting_blob_store.h"
#include "testing/get_barrier.h"
#include "tests/dead_intent.h"
#include "tests/test_util.h"
#include "txn/intent.h"
#include "util/base64.h"
#include "util/digest.h"
#include "util/stored_format.h"

namespace blobtable::testing {
namespace {
using namespace internal;

// Local storage presented as a remote store.
class Remote final : public BlobStoreWrapper {
 public:
  using BlobStoreWrapper::BlobStoreWrapper;
  BlobStoreTraits traits() const override { return {.in_process = false}; }
};

class QueryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    storage_ = *OpenLocalBlobStore(dir_.path(), "query-test", {}, &clock_);
    counter_ = std::make_shared<CountingBlobStore>(std::make_shared<Remote>(storage_));
    Open(counter_);
  }
  void Open(std::shared_ptr<BlobStore> blobs, StoreOptions so = {}) {
    so.clock = &clock_;
    store_ = Store::FromBlobStore(std::move(blobs), so);
    table_.emplace(*store_->OpenTable("orders"));
  }
  const Table& table() { return *table_; }
  // Row ("p", Rk(i)) under the intent of a coordinator that died before its
  // commit point (it would have set n to 99).
  void PlaceDeadIntent(int i) { testing::PlaceDeadIntent(*storage_, table(), "p", Rk(i)); }
  // 30 rows over partitions p (odd i) and q (even), and a row with a
  // transaction's intent on it, placed by a coordinator that died before its
  // commit point (the second row of p): queries read the version before it.
  void InsertTwoPartitions() {
    for (int i = 0; i < 30; ++i) {
      Entity e(i % 2 ? "p" : "q", Rk(i));
      e.Set("n", i).Set("s", std::string(i % 7, 'x')).Set("b", i % 3 == 0);
      ASSERT_TRUE(table().Insert(e).ok());
    }
    PlaceDeadIntent(3);
  }
  // Queries of every kind over InsertTwoPartitions' rows, with pages that
  // end in the middle of them.
  static std::vector<QueryOptions> MixedQueries() {
    std::vector<QueryOptions> q(11);
    q[1].partition_key = "p";
    q[2].partition_key = "p", q[2].row_key_from = Rk(5), q[2].row_key_to = Rk(20);
    q[3].filter = "n ge 10 and s ne 'xxx'", q[3].top = 3;
    q[4].top = 4, q[4].partition_key = "p";
    q[5].row_key_prefix = "r001", q[5].partition_key = "p";
    q[6].select = {"s"}, q[6].top = 7;
    q[7].filter = "b eq true or n eq 3", q[7].select = {"n", "b"};
    q[8].row_key_from = Rk(20), q[8].row_key_to = Rk(27);  // in each partition
    // Pages of one row: one ends just before the marked row, which Visit
    // must leave to the next page, not ask Query for with no room (top 0).
    q[9].top = 1;
    q[10].top = 1, q[10].filter = "n ge 0";
    return q;
  }
  static std::string Rk(int i) {
    char rk[16];
    snprintf(rk, sizeof rk, "r%04d", i);
    return rk;
  }
  void InsertRows(int n, size_t pad) {
    for (int i = 0; i < n; ++i) {
      Entity e("p", Rk(i));
      e.Set("n", i).Set("pad", std::string(pad, 'x'));
      ASSERT_TRUE(table().Insert(e).ok());
    }
  }
  Result<QueryPage> QueryAll() {
    QueryOptions q;
    q.partition_key = "p";
    return table().Query(q);
  }

  FakeClock clock_;
  TempDir dir_;
  std::shared_ptr<BlobStore> storage_;
  std::shared_ptr<CountingBlobStore> counter_;
  std::unique_ptr<Store> store_;
  std::optional<Table> table_;
};

TEST(InlineBody, IsAddedUpToItsBoundAndWithinTheMetadataLimit) {
  Metadata m;
  EXPECT_TRUE(AddInlineBody(m, "body", 4096));
  EXPECT_EQ(m.at(kInlineBodyMetadata), Base64Encode("body"));
  EXPECT_FALSE(AddInlineBody(m, std::string(4097, 'x'), 4096));
  EXPECT_EQ(m.count(kInlineBodyMetadata), 0u) << "a copy of another body is dropped";
  Metadata full = {{"big", std::string(4000, 'v')}};
  EXPECT_FALSE(AddInlineBody(full, std::string(3000, 'x'), 4096)) << "8 KiB less the reserve";
  EXPECT_TRUE(ValidateMetadata(full).ok());
  Metadata fits;
  ASSERT_TRUE(AddInlineBody(fits, std::string(4096, 'x'), 4096));
  fits["blobtablewriteid"] = std::string(36, 'g');
  fits[kPrewriteMetadata] = std::string(36, 't');
  EXPECT_TRUE(ValidateMetadata(fits).ok()) << "the marks added later still fit";
}

TEST(InlineBody, IsTrustedOnlyWhenItIsTheBody) {
  BlobProperties p;
  p.metadata[kInlineBodyMetadata] = Base64Encode("v1");
  EXPECT_FALSE(InlineBody(p)) << "no Content-MD5: nothing ties it to the body";
  p.content_md5 = Md5Base64("v1");
  ASSERT_TRUE(InlineBody(p));
  EXPECT_EQ(*InlineBody(p), "v1");
  p.content_md5 = Md5Base64("v2");  // the body was rewritten, the metadata kept
  EXPECT_FALSE(InlineBody(p));
  p.metadata[kInlineBodyMetadata] = "not base64!";
  EXPECT_FALSE(InlineBody(p));
}

// The issue's target without a cache: 1,000 rows of 1 KiB, one listing.
TEST_F(QueryTest, SmallRowsCostOneListingAndNoGet) {
  InsertRows(1000, 1000);
  counter_->Clear();
  auto page = QueryAll();
  ASSERT_TRUE(page.ok()) << page.status().ToString();
  ASSERT_EQ(page->entities.size(), 1000u);
  EXPECT_EQ(counter_->Counts(), (std::map<std::string, int>{{"list", 1}}));
  EXPECT_EQ(*page->entities[7].FindAs<int32_t>("n"), 7);
  EXPECT_FALSE(page->entities[7].etag().empty());
  EXPECT_EQ(page->entities[7].etag(), table().Get("p", Rk(7))->etag());
}

// Paging: every page costs one listing, continued pages included (a
// continuation lists from the previous page's last row, which takes a slot:
// a page that filled up used to list again to learn whether more follow).
TEST_F(QueryTest, EveryPageCostsOneListing) {
  InsertRows(25, 100);
  QueryOptions q;
  q.partition_key = "p";
  q.top = 10;
  std::vector<size_t> sizes;
  std::vector<int> listings;
  do {
    counter_->Clear();
    auto page = table().Query(q);
    ASSERT_TRUE(page.ok()) << page.status().ToString();
    sizes.push_back(page->entities.size());
    listings.push_back(counter_->Counts()["list"]);
    q.continuation = page->continuation;
  } while (!q.continuation.empty());
  EXPECT_EQ(sizes, (std::vector<size_t>{10, 10, 5}));
  EXPECT_EQ(listings, (std::vector<int>{1, 1, 1}));
}

// $filter: key conditions narrow the listing, other conditions are checked
// on the listing's copies (no GET for rows that do not match), $select
// keeps the named properties.
TEST_F(QueryTest, AFilterIsCheckedOnTheListingsCopiesAndSelectKeepsWhatItNames) {
  InsertRows(1000, 100);
  counter_->Clear();
  QueryOptions q;
  q.filter = "PartitionKey eq 'p' and n ge 990";
  q.select = {"n"};
  auto page = table().Query(q);
  ASSERT_TRUE(page.ok()) << page.status().ToString();
  ASSERT_EQ(page->entities.size(), 10u);
  EXPECT_EQ(counter_->Counts(), (std::map<std::string, int>{{"list", 1}}));
  EXPECT_EQ(*page->entities[0].FindAs<int32_t>("n"), 990);
  EXPECT_EQ(page->entities[0].Find("pad"), nullptr) << "not selected";
  EXPECT_EQ(page->entities[0].row_key(), Rk(990));
  EXPECT_FALSE(page->entities[0].etag().empty());
  EXPECT_TRUE(page->continuation.empty());

  // Type rules: n is Int32, so an Int64 literal matches nothing.
  q.filter = "n ge 990L";
  ASSERT_TRUE(table().Query(q).ok());
  EXPECT_TRUE(table().Query(q)->entities.empty());
}

TEST_F(QueryTest, KeyConditionsInAFilterNarrowTheRangeListed) {
  InsertRows(50, 10);
  counter_->Clear();
  QueryOptions q;
  q.filter = "RowKey ge '" + Rk(10) + "' and RowKey le '" + Rk(19) + "' and PartitionKey eq 'p'";
  q.top = 10;
  auto page = table().Query(q);
  ASSERT_TRUE(page.ok()) << page.status().ToString();
  ASSERT_EQ(page->entities.size(), 10u);
  EXPECT_EQ(page->entities.front().row_key(), Rk(10));
  EXPECT_EQ(page->entities.back().row_key(), Rk(19));
  EXPECT_TRUE(page->continuation.empty());
  EXPECT_EQ(counter_->Counts(), (std::map<std::string, int>{{"list", 1}}));

  counter_->Clear();
  q.filter = "PartitionKey eq 'p' and PartitionKey eq 'q'";
  page = table().Query(q);
  ASSERT_TRUE(page.ok());
  EXPECT_TRUE(page->entities.empty());
  EXPECT_TRUE(counter_->Counts().empty()) << "a filter nothing can match sends nothing";
  q.filter = "PartitionKey eq 'p'";
  q.partition_key = "q";
  EXPECT_TRUE(table().Query(q)->entities.empty());
}

// As in Azure, a filtered page holds the matches of one listing: fewer than
// `top` rows, even none, with a continuation while more may follow; the
// pages together hold every match once.
TEST_F(QueryTest, FilteredPagesMayBeShortAndTogetherHoldEveryMatch) {
  InsertRows(95, 10);
  QueryOptions q;
  q.partition_key = "p";
  q.filter = "n ge 40 and n lt 45 or n eq 90";
  q.top = 10;
  std::vector<int> seen;
  int pages = 0;
  do {
    counter_->Clear();
    auto page = table().Query(q);
    ASSERT_TRUE(page.ok()) << page.status().ToString();
    EXPECT_LE(counter_->Counts()["list"], 1);
    for (const Entity& e : page->entities) seen.push_back(*e.FindAs<int32_t>("n"));
    q.continuation = page->continuation;
    ++pages;
  } while (!q.continuation.empty());
  EXPECT_EQ(seen, (std::vector<int>{40, 41, 42, 43, 44, 90}));
  EXPECT_GE(pages, 9) << "each page lists at most top + 2 rows";
}

TEST_F(QueryTest, AMalformedFilterIsInvalidArgumentWithItsPositionAndSendsNothing) {
  counter_->Clear();
  QueryOptions q;
  q.filter = "n eq";
  auto page = table().Query(q);
  ASSERT_FALSE(page.ok());
  EXPECT_EQ(page.status().code(), Code::kInvalidArgument);
  EXPECT_NE(page.status().message().find("at 5"), std::string::npos) << page.status().ToString();
  EXPECT_TRUE(counter_->Counts().empty());
}

// A client that rewrote the body and kept the old metadata (copy and all):
// the copy is not the body any more, so the row is read.
TEST_F(QueryTest, ACopyThatIsNotTheBodyIsNotTrusted) {
  InsertRows(3, 10);
  const std::string blob = *table().EntityBlobName("p", Rk(1));
  auto head = storage_->Head(blob, {});
  ASSERT_TRUE(head.ok());
  ASSERT_EQ(head->properties.metadata.count(kInlineBodyMetadata), 1u);
  Entity other("p", Rk(1));
  other.Set("n", 100);
  auto store = Store::FromBlobStore(storage_, {});  // in-process: writes no copy
  ASSERT_TRUE(store->OpenTable("orders")->Upsert(other).ok());
  ASSERT_TRUE(storage_->SetMetadata(blob, head->properties.metadata, {}).ok());  // old copy back
  counter_->Clear();
  auto page = QueryAll();
  ASSERT_TRUE(page.ok());
  ASSERT_EQ(page->entities.size(), 3u);
  EXPECT_EQ(*page->entities[1].FindAs<int32_t>("n"), 100);
  EXPECT_EQ(counter_->Counts(), (std::map<std::string, int>{{"list", 1}, {"get", 1}}));
}

// Rows too big for a copy are read, up to max_parallel_reads at once.
TEST_F(QueryTest, RowsTheListingCannotAnswerAreReadTogether) {
  auto barrier = std::make_shared<GetBarrier>(counter_, 8, [](std::string_view name) {
    return name.find('~') == std::string_view::npos;  // a table's index definitions: a write's
  });
  Open(barrier);
  InsertRows(40, 5000);
  counter_->Clear();
  auto page = QueryAll();
  ASSERT_TRUE(page.ok()) << page.status().ToString();
  EXPECT_EQ(page->entities.size(), 40u);
  EXPECT_EQ(counter_->Counts(), (std::map<std::string, int>{{"list", 1}, {"get", 40}}));
  EXPECT_FALSE(barrier->timed_out());
  EXPECT_EQ(barrier->most(), 8);
  for (int i = 0; i < 40; ++i) EXPECT_EQ(*page->entities[i].FindAs<int32_t>("n"), i);
}

// Reads that find rows gone make room on the page for the next ones, in
// order, and the continuation resumes after the last row returned.
TEST_F(QueryTest, RowsDeletedSinceTheListingMakeRoomInOrder) {
  InsertRows(12, 5000);
  // Deleted between the listing and the reads: a wrapper that lists, then
  // removes two rows before any GET.
  class DeleteAfterList final : public BlobStoreWrapper {
   public:
    DeleteAfterList(std::shared_ptr<BlobStore> t, std::vector<std::string> gone)
        : BlobStoreWrapper(std::move(t)), gone_(std::move(gone)) {}
    Result<ListPage> List(const ListOptions& o) override {
      auto page = BlobStoreWrapper::List(o);
      for (const std::string& b : gone_) (void)target().Delete(b, {});
      gone_.clear();
      return page;
    }

   private:
    std::vector<std::string> gone_;
  };
  Open(std::make_shared<DeleteAfterList>(
      counter_, std::vector<std::string>{*table().EntityBlobName("p", Rk(1)),
                                         *table().EntityBlobName("p", Rk(3))}));
  QueryOptions q;
  q.partition_key = "p";
  q.top = 5;
  auto page = table().Query(q);
  ASSERT_TRUE(page.ok()) << page.status().ToString();
  std::vector<std::string> got;
  for (const Entity& e : page->entities) got.push_back(e.row_key());
  EXPECT_EQ(got, (std::vector<std::string>{Rk(0), Rk(2), Rk(4), Rk(5), Rk(6)}));
  q.continuation = page->continuation;
  page = table().Query(q);
  ASSERT_TRUE(page.ok());
  ASSERT_FALSE(page->entities.empty());
  EXPECT_EQ(page->entities.front().row_key(), Rk(7));
}

// Rows written by transactions carry copies too; a row a transaction has
// marked is read (and settled), never answered from its old copy.
TEST_F(QueryTest, TransactionsWriteCopiesAndMarkedRowsAreRead) {
  InsertRows(2, 10);
  auto txn = store_->Begin();
  Entity e("p", Rk(0));
  e.Set("n", 50);
  ASSERT_TRUE(txn->Upsert(table(), e).ok());
  ASSERT_TRUE(txn->Commit().ok());
  store_->WaitForFinishing();  // its intent rewritten plain, with a copy
  counter_->Clear();
  auto page = QueryAll();
  ASSERT_TRUE(page.ok());
  EXPECT_EQ(*page->entities[0].FindAs<int32_t>("n"), 50);
  EXPECT_EQ(counter_->Counts(), (std::map<std::string, int>{{"list", 1}}));

  // An intent left by a coordinator that died before its commit point: the
  // row is read, and the reader takes the version before it.
  PlaceDeadIntent(1);
  counter_->Clear();
  page = QueryAll();
  ASSERT_TRUE(page.ok()) << page.status().ToString();
  EXPECT_EQ(*page->entities[1].FindAs<int32_t>("n"), 1);
  EXPECT_GE(counter_->Counts()["get"], 1);
}

// With a cache, rows a listing answered for are kept: an offline query
// then has them.
TEST_F(QueryTest, TheCacheKeepsWhatTheListingCarried) {
  TempDir cache_dir;
  auto cache = BlobCache::Open(cache_dir.path(), uint64_t{1} << 30, &clock_, nullptr);
  ASSERT_TRUE(cache.ok());
  CachingOptions co;
  co.clock = &clock_;
  co.cacheable = naming::IsEntityBlobName;
  Open(std::make_shared<CachingBlobStore>(counter_, *cache, co));
  InsertRows(100, 100);
  ASSERT_TRUE((*cache)->Clear().ok());
  counter_->Clear();
  ASSERT_EQ(QueryAll()->entities.size(), 100u);
  EXPECT_EQ(counter_->Counts(), (std::map<std::string, int>{{"list", 1}}));
  QueryOptions q;
  q.partition_key = "p";
  q.policy = ReadPolicy::Offline();
  auto offline = table().Query(q);
  ASSERT_TRUE(offline.ok());
  EXPECT_TRUE(offline->stale);
  EXPECT_EQ(offline->entities.size(), 100u);
  EXPECT_EQ(counter_->Counts(), (std::map<std::string, int>{{"list", 1}}));
  EXPECT_EQ((*cache)->Stats().entries, 100u);
}

// The local backend with nothing stacked on it hands queries its pages in
// place (storage/in_place.h): every query answers as through List (here a
// counting wrapper, which turns in-place reading off), marked rows read
// through the protocol.
TEST_F(QueryTest, InPlaceListingsAnswerAsListingsDo) {
  InsertTwoPartitions();
  auto in_place = Store::FromBlobStore(storage_, {});
  auto in_place_table = in_place->OpenTable("orders");
  ASSERT_TRUE(in_place_table.ok());
  const std::vector<QueryOptions> queries = MixedQueries();
  for (size_t i = 0; i < queries.size(); ++i) {
    for (QueryOptions q = queries[i];;) {
      auto want = table().Query(q);
      auto got = in_place_table->Query(q);
      ASSERT_TRUE(want.ok() && got.ok()) << i << ": " << got.status().ToString();
      ASSERT_EQ(got->entities.size(), want->entities.size()) << i;
      for (size_t j = 0; j < got->entities.size(); ++j) {
        EXPECT_TRUE(got->entities[j].SameContent(want->entities[j])) << i << ", " << j;
        EXPECT_EQ(got->entities[j].etag(), want->entities[j].etag()) << i << ", " << j;
      }
      EXPECT_EQ(got->continuation, want->continuation) << i;
      if (got->continuation.empty()) break;
      q.continuation = got->continuation;
    }
  }
}

// A filtered query decodes a listed row in part (the properties its filter
// reads) before it decodes it whole: damage in another property of a row it
// does not return is not seen; a row it returns is checked whole.
TEST_F(QueryTest, AFilterChecksWhatItReadsAndTheRowsItReturnsWhole) {
  Entity e("p", "damaged");
  e.Set("n", 1).Set("s", std::string("marker-text"));
  std::string body = *EncodeEntity(e);
  body[body.find("marker-text")] = '\xff';  // no longer UTF-8
  auto name = naming::EntityBlobName("orders", "p", "damaged");
  ASSERT_TRUE(storage_->Put(*name, body, {}).ok());
  InsertRows(3, 10);
  for (bool in_place : {true, false}) {
    if (in_place)
      Open(storage_);
    else  // lists with data, not in place
      Open(std::make_shared<CountingBlobStore>(storage_));
    QueryOptions q;
    q.filter = "n eq 2";
    auto other = table().Query(q);
    ASSERT_TRUE(other.ok()) << other.status().ToString();
    EXPECT_EQ(other->entities.size(), 1u);
    q.filter = "n eq 1";
    EXPECT_EQ(table().Query(q).status().code(), Code::kCorruption) << in_place;
    q.filter = "s eq 'x'";
    EXPECT_EQ(table().Query(q).status().code(), Code::kCorruption) << in_place;
    EXPECT_EQ(table().Query({}).status().code(), Code::kCorruption) << in_place;
  }
}

// Visit hands over, as views, the rows Query returns, with the same
// continuations: in place (the local backend alone, a marked row in the
// middle of a page left to Query) and through a wrapper (every page read by
// Query).
TEST_F(QueryTest, VisitHandsOverTheRowsQueryReturns) {
  InsertTwoPartitions();
  auto in_place = Store::FromBlobStore(storage_, {});
  auto in_place_table = in_place->OpenTable("orders");
  ASSERT_TRUE(in_place_table.ok());
  const std::vector<QueryOptions> queries = MixedQueries();
  for (const Table& visited : {table(), *in_place_table}) {
    for (size_t i = 0; i < queries.size(); ++i) {
      for (QueryOptions q = queries[i];;) {
        auto want = table().Query(q);
        ASSERT_TRUE(want.ok()) << i << ": " << want.status().ToString();
        std::vector<Entity> got;
        auto page = visited.Visit(q, [&](const EntityView& row) { got.push_back(row.ToEntity()); });
        ASSERT_TRUE(page.ok()) << i << ": " << page.status().ToString();
        ASSERT_EQ(got.size(), want->entities.size()) << i;
        EXPECT_EQ(page->rows, static_cast<int64_t>(got.size())) << i;
        for (size_t j = 0; j < got.size(); ++j) {
          EXPECT_TRUE(got[j].SameContent(want->entities[j])) << i << ", " << j;
          EXPECT_EQ(got[j].etag(), want->entities[j].etag()) << i << ", " << j;
        }
        EXPECT_EQ(page->continuation, want->continuation) << i;
        if (page->continuation.empty()) break;
        q.continuation = page->continuation;
      }
    }
  }
}

// A visitor's error ends the visit, which returns it; a damaged row is
// Corruption, as Query says, whether the row is read in place or not.
TEST_F(QueryTest, VisitStopsAtTheVisitorsErrorAndAtDamage) {
  InsertRows(10, 3);
  for (bool in_place : {false, true}) {
    if (in_place) Open(storage_);
    int seen = 0;
    auto stopped = table().Visit({}, [&](const EntityView& row) {
      return ++seen == 3 ? Status::Busy("enough at " + std::string(row.row_key())) : Status::OK();
    });
    EXPECT_EQ(stopped.status().code(), Code::kBusy) << in_place;
    EXPECT_EQ(stopped.status().message(), "enough at " + Rk(2)) << in_place;
    EXPECT_EQ(seen, 3) << in_place;
  }
  Entity e("p", "damaged");
  e.Set("n", 1).Set("s", std::string("marker-text"));
  std::string body = *EncodeEntity(e);
  body[body.find("marker-text")] = '\xff';  // no longer UTF-8
  ASSERT_TRUE(storage_->Put(*naming::EntityBlobName("orders", "p", "damaged"), body, {}).ok());
  for (bool in_place : {false, true}) {
    if (in_place)
      Open(storage_);
    else  // lists with data, not in place
      Open(std::make_shared<CountingBlobStore>(storage_));
    QueryOptions q;
    q.filter = "n eq 2";  // reads only n of the damaged row
    auto one = table().Visit(q, [](const EntityView& row) { EXPECT_EQ(row.row_key(), Rk(2)); });
    ASSERT_TRUE(one.ok()) << one.status().ToString();
    EXPECT_EQ(one->rows, 1);
    EXPECT_EQ(table().Visit({}, [](const EntityView&) {}).status().code(), Code::kCorruption)
        << in_place;
  }
}

// A body that is not the entity its name says (another PartitionKey, or
// another RowKey, under the name of a row in range) is not handed over as
// that row: a visit of the partition answers what Query answers, in place or
// not.
TEST_F(QueryTest, VisitOfAPartitionChecksEachBodyIsTheRowItsNameSays) {
  InsertRows(6, 3);
  for (const auto& [pk, rk] : {std::pair<std::string, std::string>{"q", Rk(2)}, {"p", Rk(9)}}) {
    Entity stray(pk, rk);
    stray.Set("n", 2);
    ASSERT_TRUE(
        storage_->Put(*naming::EntityBlobName("orders", "p", Rk(2)), *EncodeEntity(stray), {})
            .ok());
    for (bool in_place : {false, true}) {
      if (in_place)
        Open(storage_);
      else
        Open(std::make_shared<CountingBlobStore>(storage_));
      QueryOptions q;
      q.partition_key = "p";
      auto want = table().Query(q);
      std::vector<std::string> got;
      auto page = table().Visit(q, [&](const EntityView& row) { got.emplace_back(row.row_key()); });
      EXPECT_EQ(page.status().code(), want.status().code()) << pk << in_place;
      EXPECT_FALSE(page.ok()) << pk << in_place << ": " << ::testing::PrintToString(got);
      EXPECT_EQ(std::count(got.begin(), got.end(), rk), 0) << pk << in_place;
    }
  }
}

// GetView hands over, as a view, what Get returns, in place (the local
// backend alone) and through a wrapper: every row, one under a dead
// coordinator's intent, a missing one, a bad key and a body of another
// entity; the visitor's own error comes back as it is.
TEST_F(QueryTest, GetViewHandsOverWhatGetReturns) {
  InsertTwoPartitions();  // ("p", Rk(3)) under a dead coordinator's intent
  Entity stray("q", "elsewhere");
  stray.Set("n", 1);
  ASSERT_TRUE(
      storage_->Put(*naming::EntityBlobName("orders", "p", "stray"), *EncodeEntity(stray), {})
          .ok());
  std::vector<std::pair<std::string, std::string>> keys = {
      {"p", Rk(3)}, {"p", "missing"}, {"p", "stray"}, {"p", "a/b"}};
  for (int i = 0; i < 30; ++i) keys.emplace_back(i % 2 ? "p" : "q", Rk(i));
  for (bool in_place : {false, true}) {
    Open(in_place ? std::shared_ptr<BlobStore>(storage_) : counter_);
    for (const auto& [pk, rk] : keys) {
      SCOPED_TRACE(pk + "/" + rk + (in_place ? " in place" : " wrapped"));
      std::optional<Entity> got;  // viewed first: a read may settle what it meets
      const Status viewed = table().GetView(pk, rk, [&](const EntityView& v) {
        got = v.ToEntity();
        return Status::OK();
      });
      auto want = table().Get(pk, rk);
      EXPECT_EQ(viewed.code(), want.status().code());
      EXPECT_EQ(viewed.message(), want.status().message());
      ASSERT_EQ(got.has_value(), want.ok());
      if (!got) continue;
      EXPECT_TRUE(got->SameContent(*want));
      EXPECT_EQ(got->etag(), want->etag());
      EXPECT_EQ(got->stale(), want->stale());
    }
    const Status mine =
        table().GetView("p", Rk(1), [](const EntityView&) { return Status::Busy("mine"); });
    EXPECT_EQ(mine.code(), Code::kBusy);
    EXPECT_EQ(mine.message(), "mine");
  }
}

// A visitor may read the store: a GetView inside another's visitor (and a
// Get inside that) builds its name and property views in buffers of its own
// (util/thread_spare.h), so the outer view still holds its entity after
// them, and the next read on the thread answers as the first did.
TEST_F(QueryTest, AGetViewInsideAnotherLeavesTheOuterViewWhole) {
  InsertTwoPartitions();
  Open(storage_);  // in place
  auto same = [](const Entity& a, const Entity& b) {
    return a.SameContent(b) && a.etag() == b.etag();
  };
  // ("p", Rk(3)) is under an intent: read the protocol's way and viewed.
  for (const auto& [pk, i] : std::vector<std::pair<std::string, int>>{{"q", 4}, {"p", 3}}) {
    SCOPED_TRACE(pk + "/" + Rk(i));
    std::vector<Entity> seen;
    const Status outer = table().GetView(pk, Rk(i), [&](const EntityView& a) {
      const Entity before = a.ToEntity();
      const Status inner = table().GetView("p", Rk(5), [&](const EntityView& b) {
        seen.push_back(b.ToEntity());
        auto got = table().Get("q", Rk(6));
        EXPECT_TRUE(got.ok()) << got.status().ToString();
        return Status::OK();
      });
      EXPECT_TRUE(inner.ok()) << inner.ToString();
      EXPECT_TRUE(same(a.ToEntity(), before));  // the outer view, after the inner reads
      seen.push_back(before);
      return Status::OK();
    });
    ASSERT_TRUE(outer.ok()) << outer.ToString();
    ASSERT_EQ(seen.size(), 2u);
    EXPECT_TRUE(same(seen[0], *table().Get("p", Rk(5))));
    EXPECT_TRUE(same(seen[1], *table().Get(pk, Rk(i))));
  }
  for (const auto& [pk, i] : std::vector<std::pair<std::string, int>>{{"q", 4}, {"p", 5}}) {
    std::optional<Entity> again;  // the next reads on the thread, in the buffers given back
    ASSERT_TRUE(table()
                    .GetView(pk, Rk(i),
                             [&](const EntityView& v) {
                               again = v.ToEntity();
                               return Status::OK();
                             })
                    .ok());
    ASSERT_TRUE(again.has_value());
    EXPECT_TRUE(same(*again, *table().Get(pk, Rk(i))));
  }
}

// A read checks its keys as ValidateKey does, with its message, whichever
// key is at fault: the keys are walked only when the name's encoding meets
// a byte ValidateKey must judge or the name comes out too long (kv/table.cc).
TEST_F(QueryTest, AReadRefusesABadKeyWithValidateKeysMessage) {
  Open(storage_);
  ASSERT_TRUE(table().Insert(Entity("p\xc3\xa9", "r\xc3\xa9")).ok());
  const std::vector<std::string> bad = {"a/b",
                                        "a\x7f",
                                        "\xc2\x80",  // U+0080, a C1 control
                                        "\xff",
                                        std::string(1025, 'a'),
                                        std::string(1000, 'a') + "#",
                                        std::string(100'000, 'b')};
  auto read = [&](const std::string& pk, const std::string& rk) {
    Status viewed = table().GetView(pk, rk, [](const EntityView&) { return Status::OK(); });
    Status got = table().Get(pk, rk).status();
    EXPECT_EQ(viewed.code(), got.code());
    EXPECT_EQ(viewed.message(), got.message());
    return got;
  };
  for (const std::string& key : bad) {
    for (bool in_pk : {true, false}) {
      SCOPED_TRACE(key.substr(0, 8) + (in_pk ? " as the PartitionKey" : " as the RowKey"));
      const Status want = ValidateKey(key, in_pk ? "PartitionKey" : "RowKey");
      ASSERT_FALSE(want.ok());
      const Status got = in_pk ? read(key, "r") : read("p", key);
      EXPECT_EQ(got.code(), Code::kInvalidArgument);
      EXPECT_NE(got.message().find(want.message()), std::string::npos) << got.ToString();
    }
  }
  // Both keys at fault, or one at fault and the other too long: the
  // PartitionKey's fault is named.
  const Status both = read("a/b", std::string(2000, 'r'));
  EXPECT_NE(both.message().find(ValidateKey("a/b", "PartitionKey").message()), std::string::npos)
      << both.ToString();
  // Keys each within the limit, a name over Azure's: the name's message.
  const Status name = read(std::string(600, 'p'), std::string(600, 'r'));
  EXPECT_EQ(name.code(), Code::kInvalidArgument);
  EXPECT_NE(name.message().find("too long together"), std::string::npos) << name.ToString();
  // Keys with bytes ValidateKey must judge, and accepts: read.
  EXPECT_TRUE(read("p\xc3\xa9", "r\xc3\xa9").ok());
  EXPECT_TRUE(read("p ~%", "").IsNotFound());
}

}  // namespace
}  // namespace blobtable::testing
