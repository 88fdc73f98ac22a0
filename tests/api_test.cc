// SPDX-License-Identifier: Apache-2.0
// The API helpers on the embedded store (the suite in api_suite.cc), and
// what only the embedded store can show: a write whose outcome is unknown is
// never retried.
#include <gtest/gtest.h>

#include <condition_variable>
#include <filesystem>
#include <mutex>

#include "blobtable/store.h"
#include "tests/api_suite.h"
#include "tests/test_util.h"

namespace blobtable::testing {
namespace {

INSTANTIATE_TEST_SUITE_P(Local, ApiTest, ::testing::Values(LocalBackend(), LocalAtomicBackend()),
                         PrintBackend);

// Every conditional write fails with an unknown outcome (an answer lost, as
// the Azure backend reports it when it cannot tell).
class UnknownWrites final : public BlobStoreWrapper {
 public:
  using BlobStoreWrapper::BlobStoreWrapper;
  Result<WriteResult> Put(std::string_view n, std::string_view d, const PutOptions& o) override {
    if (o.conditions.if_match || o.conditions.if_none_match) {
      ++refused;
      return Status::OutcomeUnknown("the answer was lost");
    }
    return BlobStoreWrapper::Put(n, d, o);
  }
  // A plain write on the local store: one batch with the check of the
  // table's index definitions.
  BatchResult CommitBatch(const std::vector<BatchOp>& ops) override {
    ++refused;
    return BatchResult{Status::OutcomeUnknown("the answer was lost"), ops.size(), {}};
  }
  int refused = 0;
};

// A local store in `dir` whose backend goes through a new W, kept in
// *wrapper.
template <typename W>
Result<std::unique_ptr<Store>> OpenWrapped(const TempDir& dir, std::shared_ptr<W>* wrapper) {
  StoreOptions o;
  o.wrap_blob_store = [wrapper](std::shared_ptr<BlobStore> b) -> std::shared_ptr<BlobStore> {
    *wrapper = std::make_shared<W>(std::move(b));
    return *wrapper;
  };
  return Store::Open(dir.path(), o);
}

TEST(ApiRetry, AnUnknownOutcomeIsNeverRetried) {
  TempDir dir;
  std::shared_ptr<UnknownWrites> unknown;
  auto store = OpenWrapped(dir, &unknown);
  ASSERT_TRUE(store.ok());
  auto t = (*store)->OpenTable("counters");
  int attempts = 0;
  auto r = t->Update(
      "p", "c", [](Entity& e, bool) { e.Set("n", 1); }, {}, &attempts);
  EXPECT_EQ(r.status().code(), Code::kOutcomeUnknown) << r.status().ToString();
  EXPECT_EQ(attempts, 1);
  EXPECT_EQ(unknown->refused, 1);
}

// Every store of a local directory commits in batches that check the
// index definitions they followed, so indexes are created and dropped there
// without the grace: a wrapper that hides the batches (here, one presenting
// the store as remote) would make its store commit through the lease
// coordinator beside them, and miss such an index. Open refuses it.
class HidesBatches final : public BlobStoreWrapper {
 public:
  using BlobStoreWrapper::BlobStoreWrapper;
  BlobStoreTraits traits() const override { return {}; }
};

// A NUL ends a path where the system reads it: "DIR\0x" would open DIR
// (review of issue 58: the C API's (pointer, length) strings can hold one).
TEST(StoreOpen, ALocationOrCacheDirectoryWithANulIsRefusedAndNothingIsMade) {
  TempDir dir;
  auto store = Store::Open(dir.path() + "/s" + std::string(1, '\0') + "x");
  ASSERT_FALSE(store.ok());
  EXPECT_EQ(store.status().code(), Code::kInvalidArgument);
  EXPECT_NE(store.status().message().find("NUL"), std::string::npos);
  StoreOptions o;
  o.cache.directory = dir.path() + "/c" + std::string(1, '\0') + "x";
  auto cached = Store::Open("UseDevelopmentStorage=true", o);
  ASSERT_FALSE(cached.ok());
  EXPECT_NE(cached.status().message().find("cache directory"), std::string::npos);
  EXPECT_FALSE(std::filesystem::exists(dir.path() + "/s"));
  EXPECT_FALSE(std::filesystem::exists(dir.path() + "/c"));
}

// A Table handle names its store: a transaction given one of another store
// wrote the entity into its own (review of issue 58).
TEST(TransactionTables, ATableOfAnotherStoreIsRefusedAndNothingIsWritten) {
  TempDir a_dir, b_dir;
  auto a = Store::Open(a_dir.path());
  auto b = Store::Open(b_dir.path());
  ASSERT_TRUE(a.ok() && b.ok());
  Table a_orders = *(*a)->OpenTable("orders");
  Table b_orders = *(*b)->OpenTable("orders");
  auto txn = (*a)->Begin();
  ASSERT_TRUE(txn.ok());
  Entity e("p", "r");
  for (const Status& s :
       {txn->Insert(b_orders, e), txn->Upsert(b_orders, e), txn->Delete(b_orders, "p", "r", "*"),
        txn->Check(b_orders, "p", "r", ""), txn->Get(b_orders, "p", "r").status()}) {
    EXPECT_EQ(s.code(), Code::kInvalidArgument) << s.ToString();
    EXPECT_NE(s.message().find("another store"), std::string::npos) << s.ToString();
  }
  ASSERT_TRUE(txn->Insert(a_orders, e).ok());
  ASSERT_TRUE(txn->Commit().ok());
  EXPECT_TRUE(a_orders.Get("p", "r").ok());
  EXPECT_TRUE(b_orders.Get("p", "r").status().IsNotFound());
}

TEST(StoreOpen, AWrapperThatHidesTheLocalStoresBatchesIsRefused) {
  TempDir dir;
  StoreOptions o;
  o.wrap_blob_store = [](std::shared_ptr<BlobStore> b) {
    return std::make_shared<HidesBatches>(std::move(b));
  };
  auto store = Store::Open(dir.path(), o);
  ASSERT_FALSE(store.ok());
  EXPECT_EQ(store.status().code(), Code::kInvalidArgument);
  EXPECT_NE(store.status().message().find("BlobStoreWrapper"), std::string::npos)
      << store.status().ToString();
  o.wrap_blob_store = [](std::shared_ptr<BlobStore> b) {  // forwards them
    return std::make_shared<BlobStoreWrapper>(std::move(b));
  };
  EXPECT_TRUE(Store::Open(dir.path(), o).ok());
}

// A store reads its backend's traits once: a wrapper whose traits change
// later (here, hiding the batches after Open looked) does not move its
// writes to the lease coordinator (which would miss an index created
// without the grace by the directory's other stores).
class HidesBatchesLater final : public BlobStoreWrapper {
 public:
  using BlobStoreWrapper::BlobStoreWrapper;
  BlobStoreTraits traits() const override {
    BlobStoreTraits t = BlobStoreWrapper::traits();
    if (++asked_ > 1) t.atomic_batch = false;  // only the first time
    return t;
  }
  BatchResult CommitBatch(const std::vector<BatchOp>& ops) override {
    ++batches;
    return BlobStoreWrapper::CommitBatch(ops);
  }
  Result<LeaseResult> AcquireLease(std::string_view n, int d, std::string_view p,
                                   const LeaseOptions& o) override {
    ++leases;
    return BlobStoreWrapper::AcquireLease(n, d, p, o);
  }
  std::atomic<int> batches{0}, leases{0};

 private:
  mutable std::atomic<int> asked_{0};
};

TEST(StoreOpen, TheTraitsAreReadOnceWhenTheStoreIsMade) {
  TempDir dir;
  std::shared_ptr<HidesBatchesLater> wrapper;
  auto store = OpenWrapped(dir, &wrapper);
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  auto t = (*store)->OpenTable("things");
  ASSERT_TRUE(t.ok());
  ASSERT_TRUE(t->Upsert(Entity("p", "r")).ok());
  auto txn = (*store)->Begin();
  ASSERT_TRUE(txn.ok());
  ASSERT_TRUE(txn->Upsert(*t, Entity("p", "s")).ok());
  ASSERT_TRUE(txn->Commit().ok());
  EXPECT_EQ(wrapper->batches, 2);
  EXPECT_EQ(wrapper->leases, 0);
}

TEST(ApiRetry, TheBackoffStaysWithinThePolicyAndItsTimeBound) {
  FakeClock clock;
  std::vector<std::chrono::milliseconds> waits;
  clock.set_sleep([&](std::chrono::milliseconds d) {
    waits.push_back(d);
    clock.Advance(d);
  });
  TempDir dir;
  StoreOptions o;
  o.clock = &clock;
  auto store = Store::Open(dir.path(), o);
  ASSERT_TRUE(store.ok());
  auto t = (*store)->OpenTable("counters");
  RetryPolicy p;
  p.max_attempts = 50;
  p.initial_delay = std::chrono::milliseconds(8);
  p.max_delay = std::chrono::milliseconds(100);
  p.max_total = std::chrono::milliseconds(1'000);
  int attempts = 0;
  auto r = t->Update(
      "p", "c",
      [&](Entity& e, bool) {
        EXPECT_TRUE(t->Upsert(Entity("p", "c").Set("x", 1)).ok());  // always raced
        e.Set("n", 1);
      },
      p, &attempts);
  EXPECT_EQ(r.status().code(), Code::kConflict);
  EXPECT_NE(r.status().message().find("max_total"), std::string::npos) << r.status().message();
  ASSERT_EQ(waits.size(), static_cast<size_t>(attempts - 1));
  std::chrono::milliseconds total{0};
  for (size_t i = 0; i < waits.size(); ++i) {
    const auto bound =
        std::min(p.max_delay, p.initial_delay * (int64_t{1} << std::min<size_t>(i, 30)));
    EXPECT_LT(waits[i], bound) << "wait " << i;  // full jitter: [0, bound)
    total += waits[i];
  }
  EXPECT_LE(total, p.max_total);
  EXPECT_GT(attempts, 10);  // 1 s of waits averaging under 50 ms
}

// A store that costs round trips (as a remote one does), whose reads each
// wait until `expected` of them are in flight at once, or give up after
// 10 s (a failure, never a pass): the test sees the reads overlap.
class OverlapCheckingStore final : public BlobStoreWrapper {
 public:
  OverlapCheckingStore(std::shared_ptr<BlobStore> target, int expected)
      : BlobStoreWrapper(std::move(target)), expected_(expected) {}
  BlobStoreTraits traits() const override {
    BlobStoreTraits t = BlobStoreWrapper::traits();
    t.in_process = false;
    t.list_data = false;
    return t;
  }
  Result<GetResult> Get(std::string_view n, const ReadOptions& o) override {
    {
      std::unique_lock<std::mutex> lock(mu_);
      max_in_flight = std::max(max_in_flight, ++in_flight_);
      cv_.notify_all();
      if (!cv_.wait_for(lock, std::chrono::seconds(10), [&] { return max_in_flight >= expected_; }))
        timed_out = true;
    }
    auto r = BlobStoreWrapper::Get(n, o);
    std::lock_guard<std::mutex> lock(mu_);
    --in_flight_;
    return r;
  }
  int max_in_flight = 0;
  bool timed_out = false;

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  int in_flight_ = 0;
  const int expected_;
};

TEST(ApiGetMany, ReadsGoOutConcurrentlyOnARemoteStore) {
  TempDir dir;
  {
    auto store = Store::Open(dir.path());
    ASSERT_TRUE(store.ok());
    auto t = (*store)->OpenTable("orders");
    for (const char* rk : {"1", "2", "3", "4"}) ASSERT_TRUE(t->Insert(Entity("p", rk)).ok());
  }
  std::shared_ptr<OverlapCheckingStore> overlap;
  StoreOptions o;
  o.max_parallel_reads = 4;
  o.wrap_blob_store = [&](std::shared_ptr<BlobStore> b) {
    overlap = std::make_shared<OverlapCheckingStore>(std::move(b), 4);
    return overlap;
  };
  auto store = Store::Open(dir.path(), o);
  ASSERT_TRUE(store.ok());
  auto got =
      (*store)->OpenTable("orders")->GetMany({{"p", "1"}, {"p", "2"}, {"p", "3"}, {"p", "4"}});
  for (const auto& r : got) EXPECT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_FALSE(overlap->timed_out);
  EXPECT_EQ(overlap->max_in_flight, 4);  // all four at once: one round trip, not four
}

}  // namespace
}  // namespace blobtable::testing
