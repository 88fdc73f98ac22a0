// SPDX-License-Identifier: Apache-2.0
// Transactions on one partition (issue 32, goal 1): a partition's lock is
// kLockStripes lock blobs, a transaction leases one of them, and whoever
// meets one of its intents undecided judges its coordinator by the stripe
// that intent names (docs/protocol.md, invariant L2). Part of the TxnTest
// suite, run on every backend.
#include <atomic>
#include <future>
#include <memory>
#include <thread>

#include "model/blob_naming.h"
#include "testing/hooks.h"
#include "util/macros.h"
#include "tests/txn_suite.h"

namespace blobtable::testing {
namespace {
using namespace internal;

// A coordinator on a store whose transactions try lock stripe `first` first.
std::unique_ptr<Store> OpenWithFirstStripe(StoreOptions o, const Backend& backend, int first) {
  o = WithAtomicCommits(o, false);
  TestingHooks hooks = HooksOf(o);
  hooks.first_lock_stripe = first;
  o.testing = std::make_shared<const TestingHooks>(hooks);
  auto s = OpenBackendStore(backend, o);
  EXPECT_TRUE(s.ok()) << s.status().ToString();
  return s.ok() ? std::move(*s) : nullptr;
}

// A transaction adding `amount` to (eu, rk), held at sync point
// "txn.prewritten" (every intent leased, the commit point not yet sent)
// until `go` is set; `reached` is set once it is held there.
std::thread HeldTransfer(Store& store, const TransactionOptions& options, const std::string& rk,
                         int amount, std::promise<void>& reached, std::shared_future<void> go,
                         Status* result) {
  auto once = std::make_shared<std::atomic<bool>>(false);
  SyncPoints::Set("txn.prewritten", [&reached, go, once] {
    if (once->exchange(true)) return;  // only the first one to get there
    reached.set_value();
    go.wait();
  });
  return std::thread([&store, options, rk, amount, result] {
    auto txn = store.Begin(options);
    auto accounts = *store.OpenTable("accounts");
    auto e = txn->Get(accounts, "eu", rk);
    if (!e.ok()) {
      *result = e.status();
      return;
    }
    Entity next = *e;
    next.Set("balance", *e->FindAs<int32_t>("balance") + amount);
    *result = txn->Replace(accounts, next, e->etag());
    if (result->ok()) *result = txn->Commit().status();
  });
}

// Two transactions of one store on disjoint rows of one partition: the
// second commits while the first is held between its rounds, without a
// wait (one partition lock would have made it wait for the first, which
// only goes on once the second is done: LockTimeout).
TEST_P(TxnTest, TransactionsOnDisjointRowsOfOnePartitionDoNotWaitForEachOther) {
  if (atomic()) GTEST_SKIP() << kNoCoordinator;
  if (!SyncPoints::Enabled()) GTEST_SKIP() << "sync points are compiled out (Release build)";
  Seed();
  std::promise<void> reached, go;
  Status first;
  std::thread t1 =
      HeldTransfer(*store_, TxnOptions(), "alice", 1, reached, go.get_future().share(), &first);
  reached.get_future().wait();
  TransactionOptions quick = TxnOptions();
  quick.lock_timeout = std::chrono::milliseconds(2000);
  auto t2 = store_->Begin(quick);
  Status second = [&] {
    auto bob = t2->Get(*accounts_, "eu", "bob");
    if (!bob.ok()) return bob.status();
    Entity next = *bob;
    next.Set("balance", 150);
    BT_RETURN_IF_ERROR(t2->Replace(*accounts_, next, bob->etag()));
    return t2->Commit().status();
  }();
  go.set_value();
  t1.join();
  EXPECT_TRUE(second.ok()) << second.ToString();
  EXPECT_EQ(t2->commit_stats().lock_waits, 0);
  EXPECT_TRUE(first.ok()) << first.ToString();
  EXPECT_EQ(Balance(*accounts_, "eu", "alice"), 101);
  EXPECT_EQ(Balance(*accounts_, "eu", "bob"), 150);
  ExpectNoLeftovers();
}

// Invariant L2: a writer that meets a leased intent of a transaction not
// yet decided looks at the lock stripe the intent names, the one its
// coordinator holds (here not the partition's first lock blob, which is
// free): it waits, and the transaction commits. Were the intent to name
// another stripe than the one held, the writer would take the coordinator
// for gone and decide the transaction aborted under it.
TEST_P(TxnTest, AWriterJudgesACoordinatorByTheLockStripeItHolds) {
  if (atomic()) GTEST_SKIP() << kNoCoordinator;
  if (!SyncPoints::Enabled()) GTEST_SKIP() << "sync points are compiled out (Release build)";
  Seed();
  std::unique_ptr<Store> coordinator = OpenWithFirstStripe(Options(), GetParam(), 3);
  ASSERT_NE(coordinator, nullptr);
  std::promise<void> reached, go;
  Status committed;
  std::thread t1 = HeldTransfer(*coordinator, TxnOptions(), "alice", 1, reached,
                                go.get_future().share(), &committed);
  reached.get_future().wait();
  const std::string lock = *accounts_->LockBlobName("eu");
  auto first = store_->blob_store().Head(lock, {});
  EXPECT_TRUE(!first.ok() || first->properties.lease_status != LeaseStatus::kLocked)
      << "the partition's first lock blob is free";
  auto third = store_->blob_store().Head(naming::LockStripeBlobName(lock, 3), {});
  EXPECT_TRUE(third.ok() && third->properties.lease_status == LeaseStatus::kLocked)
      << "the coordinator holds stripe 3";
  // A writer that gives up after a second (before the coordinator's lease
  // could run out, even on the fake clock its waits move).
  StoreOptions o = Options();
  o.busy_timeout = std::chrono::milliseconds(1000);
  Status wrote = [&] {
    BT_ASSIGN_OR_RETURN(std::unique_ptr<Store> writer, OpenBackendStore(GetParam(), o));
    Entity alice("eu", "alice");
    alice.Set("balance", 7);
    return writer->OpenTable("accounts")->Replace(alice, "*").status();
  }();
  go.set_value();
  t1.join();
  EXPECT_TRUE(wrote.IsBusy() || wrote.code() == Code::kLockTimeout) << wrote.ToString();
  EXPECT_TRUE(committed.ok()) << committed.ToString();
  EXPECT_EQ(Balance(*accounts_, "eu", "alice"), 101);
  coordinator->WaitForFinishing();
  ExpectNoLeftovers();
}

// Fails the first release of a lease on a lock blob, without applying it.
class FailFirstLockRelease final : public BlobStoreWrapper {
 public:
  using BlobStoreWrapper::BlobStoreWrapper;
  std::atomic<bool> failed{false};
  Result<LeaseResult> ReleaseLease(std::string_view n, std::string_view id,
                                   const LeaseOptions& c) override {
    if (n.find("/l/") != std::string_view::npos && !failed.exchange(true))
      return Status::Unavailable("injected: the release of " + std::string(n) + " failed");
    return BlobStoreWrapper::ReleaseLease(n, id, c);
  }
};

// A stripe whose release failed is still leased: the store's next
// transaction on the partition takes another instead of waiting for that
// lease to run out (LockTimeout here, were it handed back at once).
TEST_P(TxnTest, AStripeWhoseReleaseFailedIsNotTakenAgainWhileLeased) {
  if (atomic()) GTEST_SKIP() << kNoCoordinator;
  Seed();
  StoreOptions o = WithAtomicCommits(Options(), false);
  FailFirstLockRelease* hook = nullptr;
  o.wrap_blob_store = [&hook](std::shared_ptr<BlobStore> b) {
    auto x = std::make_shared<FailFirstLockRelease>(std::move(b));
    hook = x.get();
    return x;
  };
  auto opened = OpenBackendStore(GetParam(), o);
  ASSERT_TRUE(opened.ok()) << opened.status().ToString();
  Store& store = **opened;
  auto accounts = *store.OpenTable("accounts");
  TransactionOptions quick = TxnOptions();
  quick.lock_timeout = std::chrono::milliseconds(2000);
  for (const char* rk : {"alice", "bob"}) {
    auto txn = store.Begin(quick);
    auto e = txn->Get(accounts, "eu", rk);
    ASSERT_TRUE(e.ok()) << e.status().ToString();
    Entity next = *e;
    next.Set("balance", 1);
    ASSERT_TRUE(txn->Replace(accounts, next, e->etag()).ok());
    auto done = txn->Commit();
    ASSERT_TRUE(done.ok()) << rk << ": " << done.status().ToString();
    EXPECT_EQ(txn->commit_stats().lock_waits, 0) << rk;
    store.WaitForFinishing();
  }
  EXPECT_TRUE(hook->failed.load());
  Expire();  // the lease left on the first stripe
  ExpectNoLeftovers();
}

}  // namespace
}  // namespace blobtable::testing
