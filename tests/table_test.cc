// SPDX-License-Identifier: Apache-2.0
// The Table API on the embedded store: every operation, its conditions and
// errors, queries and paging, and concurrent writers (threads and processes).
#include "blobtable/table.h"

#include <gtest/gtest.h>

#include <atomic>
#include <filesystem>
#include <map>
#include <thread>

#include "blobtable/store.h"
#include "tests/table_suite.h"
#include "tests/test_util.h"

namespace blobtable {
namespace {

using testing::FakeClock;
using testing::TempDir;

using testing::TableTest;
INSTANTIATE_TEST_SUITE_P(Local, TableTest,
                         ::testing::Values(testing::LocalBackend(), testing::LocalAtomicBackend()),
                         testing::PrintBackend);

Entity Make(const std::string& pk, const std::string& rk, int32_t n = 0) {
  Entity e(pk, rk);
  e.Set("n", n);
  return e;
}

TEST(StoreOpen, ConnectionStringsAndBadOptionsAreRefusedClearly) {
  auto typo = Store::Open("UseDevelopmentStorage=true;AcountKey=abc");
  EXPECT_EQ(typo.status().code(), Code::kInvalidArgument);
  EXPECT_NE(typo.status().message().find("AcountKey"), std::string::npos);
  EXPECT_TRUE(IsConnectionString("DefaultEndpointsProtocol=https;AccountName=a;AccountKey=k"));
  EXPECT_FALSE(IsConnectionString("/var/lib/data"));
  TempDir dir;
  StoreOptions o;
  o.container = "Bad_Name";
  EXPECT_EQ(Store::Open(dir.path(), o).status().code(), Code::kInvalidArgument);
  EXPECT_EQ(Store::Open("").status().code(), Code::kInvalidArgument);
}

TEST(StoreOpen, WithoutCreateIfMissingADirectoryWithoutAStoreIsNotFound) {
  TempDir dir;
  StoreOptions o;
  o.create_if_missing = false;
  const std::string missing = dir.path() + "/nowhere";
  auto none = Store::Open(missing, o);
  EXPECT_EQ(none.status().code(), Code::kNotFound);
  EXPECT_NE(none.status().message().find("no store at " + missing), std::string::npos);
  EXPECT_FALSE(std::filesystem::exists(missing));
  EXPECT_EQ(Store::Open(dir.path(), o).status().code(), Code::kNotFound);  // empty directory
  ASSERT_TRUE(Store::Open(missing).ok());                                  // the default makes it
  EXPECT_TRUE(Store::Open(missing, o).ok());
}

// Read-modify-write with ETag retries on one counter entity.
Status Increment(const Table& table) {
  for (;;) {
    auto cur = table.Get("counter", "c");
    if (!cur.ok()) return cur.status();
    Entity next = *cur;
    next.Set("n", *cur->FindAs<int32_t>("n") + 1);
    auto r = table.Replace(next, cur->etag());
    if (r.ok()) return Status::OK();
    if (!r.status().IsConflict()) return r.status();
  }
}

TEST(TableConcurrency, ThreadsIncrementingOneEntityLoseNothing) {
  TempDir dir;
  auto store = Store::Open(dir.path());
  ASSERT_TRUE(store.ok());
  auto table = (*store)->OpenTable("counters");
  ASSERT_TRUE(table->Insert(Make("counter", "c", 0)).ok());
  std::vector<std::thread> threads;
  std::atomic<int> failures{0};
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&] {
      for (int i = 0; i < 50; ++i)
        if (!Increment(*table).ok()) ++failures;
    });
  for (auto& t : threads) t.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_EQ(*table->Get("counter", "c")->FindAs<int32_t>("n"), 200);
}

TEST(TableConcurrency, ProcessesIncrementingOneEntityLoseNothing) {
  TempDir dir;
  {
    auto store = Store::Open(dir.path());
    ASSERT_TRUE(store.ok());
    ASSERT_TRUE((*store)->OpenTable("counters")->Insert(Make("counter", "c", 0)).ok());
  }
  constexpr int kProcs = 4, kEach = 50;
  std::vector<pid_t> pids;
  for (int p = 0; p < kProcs; ++p)
    pids.push_back(testing::ForkChild([&] {
      auto store = Store::Open(dir.path());
      if (!store.ok()) return 2;
      auto table = (*store)->OpenTable("counters");
      for (int i = 0; i < kEach; ++i)
        if (!Increment(*table).ok()) return 3;
      return 0;
    }));
  for (pid_t pid : pids) EXPECT_EQ(testing::WaitChild(pid), 0);
  auto store = Store::Open(dir.path());
  EXPECT_EQ(*(*store)->OpenTable("counters")->Get("counter", "c")->FindAs<int32_t>("n"),
            kProcs * kEach);
}

// A service handing out new markers forever: every listing loop (a query,
// recovery) stops with Corruption instead of following it.
class EndlessListing final : public BlobStoreWrapper {
 public:
  using BlobStoreWrapper::BlobStoreWrapper;
  Result<ListPage> List(const ListOptions&) override {
    ListPage page;
    page.next_marker = "m" + std::to_string(++pages);
    return page;
  }
  int pages = 0;
};

TEST(Listing, AListingThatNeverEndsStops) {
  testing::TempDir dir;
  StoreOptions o;
  EndlessListing* endless = nullptr;
  o.wrap_blob_store = [&](std::shared_ptr<BlobStore> b) {
    auto e = std::make_shared<EndlessListing>(std::move(b));
    endless = e.get();
    return e;
  };
  auto store = Store::Open(dir.path(), o);
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  auto query = (*store)->OpenTable("things")->Query(QueryOptions{});
  EXPECT_EQ(query.status().code(), Code::kCorruption) << query.status().ToString();
  EXPECT_EQ(endless->pages, kMaxListPages);
  EXPECT_EQ((*store)->Recover().status().code(), Code::kCorruption);
}

}  // namespace
}  // namespace blobtable
