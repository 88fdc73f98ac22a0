// The Lock suite (coord_suite.cc) on the embedded store, with the fake clock.
#include "tests/coord_suite.h"

#include <atomic>
#include <condition_variable>
#include <future>
#include <mutex>
#include <thread>
#include "tests/counting_blob_store.h"

namespace blobtable::testing {
namespace {

INSTANTIATE_TEST_SUITE_P(Local, CoordTest, ::testing::Values(LocalBackend()), PrintBackend);

// Renewals that fail Unavailable the first `failures` times; counts them
// and lets a test wait for the n-th (a condition, not a sleep).
class FlakyRenewals final : public BlobStoreWrapper {
 public:
  FlakyRenewals(std::shared_ptr<BlobStore> target, int failures)
      : BlobStoreWrapper(std::move(target)), failures_(failures) {}
  Result<LeaseResult> RenewLease(std::string_view n, std::string_view id,
                                 const AccessConditions& c) override {
    std::lock_guard<std::mutex> g(mu_);
    ++attempts_;
    cv_.notify_all();
    if (attempts_ <= failures_) return Status::Unavailable("injected: storage unreachable");
    return BlobStoreWrapper::RenewLease(n, id, c);
  }
  bool WaitForAttempts(int n) {
    std::unique_lock<std::mutex> lk(mu_);
    return cv_.wait_for(lk, std::chrono::seconds(10), [&] { return attempts_ >= n; });
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  int attempts_ = 0;
  const int failures_;
};

class LockRenewalTest : public ::testing::Test {
 protected:
  std::unique_ptr<Lock> Hold(int failures) {
    StoreOptions o;
    o.clock = &clock_;
    o.wrap_blob_store = [&](std::shared_ptr<BlobStore> b) {
      flaky_ = std::make_shared<FlakyRenewals>(std::move(b), failures);
      return flaky_;
    };
    auto store = Store::Open(dir_.path(), o);
    EXPECT_TRUE(store.ok());
    store_ = std::move(*store);
    LockOptions lo;
    lo.lease_seconds = 15;  // renewed every 5 s; a failed renewal retried every second
    lo.on_lost = [this](const Status&) {
      if (++lost_ == 1) lost_signal_.set_value();
    };
    auto lock = Lock::Acquire(*store_, "renewed", lo);
    EXPECT_TRUE(lock.ok()) << lock.status().ToString();
    return lock.ok() ? std::move(*lock) : nullptr;
  }
  // Moves the fake clock by `d` and waits until the renewal thread has made
  // its n-th renewal attempt.
  void Step(std::chrono::milliseconds d, int n) {
    clock_.Advance(d);
    ASSERT_TRUE(flaky_->WaitForAttempts(n)) << "renewal attempt " << n;
  }

  TempDir dir_;
  FakeClock clock_;
  std::shared_ptr<FlakyRenewals> flaky_;
  std::unique_ptr<Store> store_;
  std::atomic<int> lost_{0};
  std::promise<void> lost_signal_;
};

TEST_F(LockRenewalTest, ARenewalThatFailsTransientlyIsRetriedAndTheLockKept) {
  auto lock = Hold(/*failures=*/2);
  ASSERT_NE(lock, nullptr);
  Step(std::chrono::seconds(5), 1);  // due: fails
  Step(std::chrono::seconds(1), 2);  // retried: fails
  Step(std::chrono::seconds(1), 3);  // retried: renewed
  // Renewed at 7 s: held until its next renewal is due, whatever storage did.
  Step(std::chrono::seconds(5), 4);
  EXPECT_TRUE(lock->held());
  EXPECT_TRUE(lock->status().ok());
  EXPECT_EQ(lost_.load(), 0);
}

TEST_F(LockRenewalTest, RenewalsFailingForTheWholeLeaseLoseTheLock) {
  auto lock = Hold(/*failures=*/1000);
  ASSERT_NE(lock, nullptr);
  Step(std::chrono::seconds(5), 1);
  int attempts = 1;
  // Retried every second until the lease (less its margin, 13.5 s) is spent.
  for (int t = 6; t <= 13; ++t) Step(std::chrono::seconds(1), ++attempts);
  EXPECT_TRUE(lock->held());  // 13 s: still within 13.5 s
  clock_.Advance(std::chrono::seconds(1));
  EXPECT_FALSE(lock->held());  // by its own clock, before storage would let anyone in
  // The attempt at 14 s fails past the lease: lost, reported once.
  ASSERT_EQ(lost_signal_.get_future().wait_for(std::chrono::seconds(10)),
            std::future_status::ready);
  EXPECT_EQ(lost_.load(), 1);
  EXPECT_FALSE(lock->status().ok());
  EXPECT_NE(lock->status().message().find("could not renew"), std::string::npos)
      << lock->status().ToString();
  EXPECT_TRUE(lock->Release().ok());
}

// What each call costs in requests (README "Coordination").
TEST(CoordCost, RequestsPerCall) {
  TempDir dir;
  std::shared_ptr<CountingBlobStore> counter;
  StoreOptions o;
  o.wrap_blob_store = [&](std::shared_ptr<BlobStore> b) {
    counter = std::make_shared<CountingBlobStore>(std::move(b));
    return counter;
  };
  auto store = Store::Open(dir.path(), o);
  ASSERT_TRUE(store.ok());
  LockOptions once;
  once.timeout = std::chrono::milliseconds(0);
  {
    auto first = Lock::Acquire(**store, "l", once);  // the lock's blob is made first
    ASSERT_TRUE(first.ok());
    EXPECT_EQ(counter->Counts(), (std::map<std::string, int>{
                                     {"lease", 2}, {"put", 1}, {"head", 1}, {"metadata", 1}}));
  }
  counter->Clear();
  {
    auto again = Lock::Acquire(**store, "l", once);
    ASSERT_TRUE(again.ok());
    EXPECT_EQ(counter->Counts(),
              (std::map<std::string, int>{{"lease", 1}, {"head", 1}, {"metadata", 1}}));
    counter->Clear();
  }
  EXPECT_EQ(counter->Counts(), (std::map<std::string, int>{{"release", 1}}));
  auto c = Counter::Open(**store, "c");
  ASSERT_TRUE(c->Add(1).ok());
  counter->Clear();
  ASSERT_TRUE(c->Add(1).ok());
  EXPECT_EQ(counter->Counts(), (std::map<std::string, int>{{"head", 1}, {"put", 1}}));
  counter->Clear();
  ASSERT_TRUE(c->Get().ok());
  EXPECT_EQ(counter->Counts(), (std::map<std::string, int>{{"list", 1}}));
  auto q = WorkQueue::Open(**store, "q");
  counter->Clear();
  ASSERT_TRUE(q->Enqueue("x").ok());
  EXPECT_EQ(counter->Counts(), (std::map<std::string, int>{{"put", 1}}));
  counter->Clear();
  auto item = q->Dequeue();
  ASSERT_TRUE(item.ok() && *item);
  EXPECT_EQ(counter->Counts(), (std::map<std::string, int>{
                                   {"list", 1}, {"lease", 1}, {"get", 1}, {"metadata", 1}}));
  counter->Clear();
  ASSERT_TRUE(q->Complete(**item).ok());
  EXPECT_EQ(counter->Counts(), (std::map<std::string, int>{{"delete", 1}}));
  // A watch: an idle poll is one GET answered "not modified" (no body).
  auto config = *(*store)->OpenTable("config");
  ASSERT_TRUE(config.Upsert(Entity("s", "limits")).ok());
  WatchOptions manual;
  manual.background = false;
  auto watch = EntityWatch::Start(config, "s", "limits", [](const Result<Entity>&) {}, manual);
  ASSERT_TRUE(watch.ok());
  counter->Clear();
  for (int i = 0; i < 3; ++i) EXPECT_FALSE((*watch)->Poll());
  EXPECT_EQ(counter->Counts(), (std::map<std::string, int>{{"get", 3}}));
  EXPECT_EQ(counter->NotModified(), 3);
}

}  // namespace
}  // namespace blobtable::testing
