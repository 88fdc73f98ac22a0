// SPDX-License-Identifier: Apache-2.0
// The local store's atomic batch (BlobStore::CommitBatch), and transactions
// committed as one batch: all or nothing, validated at the version read,
// waiting for leases, racing writers, and lost answers settled by reading
// back. (The transaction suite runs on this path too, as Local_Atomic.)
#include <gtest/gtest.h>

#include "blobtable/fault_injection.h"
#include "blobtable/store.h"
#include "testing/counting_blob_store.h"
#include "tests/test_util.h"
#include "util/macros.h"
#include "testing/sync_point.h"

namespace blobtable::testing {
namespace {

using Kind = BatchOp::Kind;

BatchOp Op(Kind kind, std::string blob, AccessConditions c = {}, std::string data = "") {
  BatchOp op;
  op.kind = kind;
  op.blob = std::move(blob);
  op.conditions = std::move(c);
  op.data = std::move(data);
  return op;
}
AccessConditions IfAbsent() { return IfNoneMatch(std::string(kAnyETag)); }

class LocalBatchTest : public ::testing::Test {
 protected:
  void SetUp() override { blobs_ = *OpenLocalBlobStore(dir_.path(), "batch", {}, &clock_); }
  std::string Data(const std::string& name) { return blobs_->Get(name, {})->data; }

  FakeClock clock_;
  TempDir dir_;
  std::shared_ptr<BlobStore> blobs_;
};

TEST_F(LocalBatchTest, EveryStepOrNone) {
  ASSERT_TRUE(blobs_->traits().atomic_batch);
  const std::string a = blobs_->Put("a", "a1", {})->etag;
  ASSERT_TRUE(blobs_->Put("gone", "x", {}).ok());
  BatchResult done = blobs_->CommitBatch(
      {Op(Kind::kPut, "a", IfMatch(a), "a2"), Op(Kind::kPut, "b", IfAbsent(), "b1"),
       Op(Kind::kDelete, "gone"), Op(Kind::kCheck, "never", IfAbsent())});
  ASSERT_TRUE(done.status.ok()) << done.status.ToString();
  ASSERT_EQ(done.writes.size(), 4u);
  EXPECT_EQ(done.writes[0].etag, blobs_->Head("a", {})->properties.etag);
  EXPECT_EQ(done.writes[1].etag, blobs_->Head("b", {})->properties.etag);
  EXPECT_EQ(done.writes[2].etag, "");
  EXPECT_EQ(Data("a"), "a2");
  EXPECT_TRUE(blobs_->Head("gone", {}).status().IsNotFound());

  // The last step fails: the first is not applied either.
  done =
      blobs_->CommitBatch({Op(Kind::kPut, "a", {}, "a3"), Op(Kind::kPut, "b", IfAbsent(), "b2")});
  EXPECT_EQ(done.status.code(), Code::kConflict);
  EXPECT_EQ(done.status.storage_code(), "BlobAlreadyExists");
  EXPECT_EQ(done.failed, 1u);
  EXPECT_TRUE(done.writes.empty());
  EXPECT_EQ(Data("a"), "a2");
}

TEST_F(LocalBatchTest, ChecksAndLeasesAnswerAsTheirStepAlone) {
  const std::string a = blobs_->Put("a", "a1", {})->etag;
  auto check = [&](AccessConditions c, const std::string& blob) {
    return blobs_->CommitBatch({Op(Kind::kCheck, blob, std::move(c))});
  };
  EXPECT_TRUE(check(IfMatch(a), "a").status.ok());
  EXPECT_EQ(check(IfMatch("\"0xstale\""), "a").status.code(), Code::kConflict);
  EXPECT_EQ(check(IfMatch(a), "missing").status.code(), Code::kNotFound);
  EXPECT_EQ(check(IfAbsent(), "a").status.code(), Code::kConflict);
  // A lease stops writes (no lease id is presented), not checks.
  ASSERT_TRUE(blobs_->AcquireLease("a", 15, "", {}).ok());
  EXPECT_TRUE(check(IfMatch(a), "a").status.ok());
  BatchResult put =
      blobs_->CommitBatch({Op(Kind::kPut, "b", {}, "b"), Op(Kind::kPut, "a", {}, "x")});
  EXPECT_EQ(put.status.code(), Code::kBusy);
  EXPECT_EQ(put.failed, 1u);
  EXPECT_TRUE(blobs_->Head("b", {}).status().IsNotFound());
  // A bad name fails the whole batch before anything is looked at.
  BatchResult bad =
      blobs_->CommitBatch({Op(Kind::kPut, "ok", {}, "x"), Op(Kind::kPut, "a/../b", {})});
  EXPECT_EQ(bad.status.code(), Code::kInvalidArgument);
  EXPECT_EQ(bad.failed, 2u);
}

class AtomicCommitTest : public ::testing::Test {
 protected:
  void SetUp() override {
    clock_.set_sleep([this](std::chrono::milliseconds d) { clock_.Advance(d); });
    store_ = Open(nullptr);
    accounts_.emplace(*store_->OpenTable("accounts"));
    for (const char* who : {"alice", "bob"}) {
      Entity e("eu", who);
      e.Set("balance", 100);
      ASSERT_TRUE(accounts_->Insert(e).ok());
    }
  }
  using Wrap = std::function<std::shared_ptr<BlobStore>(std::shared_ptr<BlobStore>)>;
  std::unique_ptr<Store> Open(Wrap wrap) {
    StoreOptions o;
    o.clock = &clock_;
    o.wrap_blob_store = std::move(wrap);
    auto s = Store::Open(dir_.path(), o);
    EXPECT_TRUE(s.ok()) << s.status().ToString();
    return s.ok() ? std::move(*s) : nullptr;
  }
  // Moves 10 from alice to bob, reading both.
  Result<std::vector<CommittedWrite>> Transfer(Store& store, TransactionOptions o = {}) {
    auto txn = store.Begin(o);
    auto accounts = *store.OpenTable("accounts");
    auto a = txn->Get(accounts, "eu", "alice");
    auto b = txn->Get(accounts, "eu", "bob");
    if (!a.ok() || !b.ok()) return Status::Internal("read failed");
    Entity a2 = *a, b2 = *b;
    a2.Set("balance", *a->FindAs<int32_t>("balance") - 10);
    b2.Set("balance", *b->FindAs<int32_t>("balance") + 10);
    BT_RETURN_IF_ERROR(txn->Replace(accounts, a2, a->etag()));
    BT_RETURN_IF_ERROR(txn->Replace(accounts, b2, b->etag()));
    return txn->Commit();
  }
  int Balance(const std::string& who) {
    return *accounts_->Get("eu", who)->FindAs<int32_t>("balance");
  }

  FakeClock clock_;
  TempDir dir_;
  std::unique_ptr<Store> store_;
  std::optional<Table> accounts_;
};

TEST_F(AtomicCommitTest, ACommitIsItsReadsAndOneBatch) {
  internal::CountingBlobStore* counter = nullptr;
  auto store = Open([&](std::shared_ptr<BlobStore> s) {
    auto c = std::make_shared<internal::CountingBlobStore>(std::move(s));
    counter = c.get();
    return c;
  });
  counter->Clear();
  auto done = Transfer(*store);
  ASSERT_TRUE(done.ok()) << done.status().ToString();
  // Two reads by the transaction, one of the table's index definitions
  // (docs/indexes.md#what-it-costs), two at commit, one batch; nothing leased.
  EXPECT_EQ(counter->Counts(), (std::map<std::string, int>{{"get", 5}, {"batch", 1}}));
  EXPECT_EQ((*done)[0].etag, accounts_->Get("eu", "alice")->etag());
  EXPECT_TRUE((*done)[1].applied);
  EXPECT_EQ(Balance("alice"), 90);
  EXPECT_EQ(Balance("bob"), 110);
}

TEST_F(AtomicCommitTest, AWriteBetweenPlanningAndTheBatchIsSeen) {
  if (!internal::SyncPoints::Enabled()) GTEST_SKIP() << "sync points are compiled out";
  // A transaction that read alice: the write in between is a conflict.
  int reached = 0;
  internal::SyncPoints::Set("txn.atomic_planned", [&] {
    if (reached++ > 0) return;
    Entity bump("eu", "alice");
    bump.Set("balance", 500);
    ASSERT_TRUE(accounts_->Upsert(bump).ok());
  });
  EXPECT_EQ(Transfer(*store_).status().code(), Code::kConflict);
  EXPECT_EQ(Balance("alice"), 500);
  EXPECT_EQ(Balance("bob"), 100);
  // One that only upserts: planned again, and lands after the other write.
  reached = 0;
  auto txn = store_->Begin();
  Entity mine("eu", "alice");
  mine.Set("balance", 7);
  ASSERT_TRUE(txn->Upsert(*accounts_, mine).ok());
  ASSERT_TRUE(txn->Commit().ok());
  EXPECT_EQ(reached, 2);
  EXPECT_EQ(Balance("alice"), 7);
  internal::SyncPoints::ClearAll();
}

TEST_F(AtomicCommitTest, ALeaseHeldByAnotherClientIsWaitedForUpToTheLockTimeout) {
  const std::string blob = *accounts_->EntityBlobName("eu", "bob");
  auto lease = store_->blob_store().AcquireLease(blob, 15, "", {});
  ASSERT_TRUE(lease.ok());
  TransactionOptions brief;
  brief.lock_timeout = std::chrono::milliseconds(300);
  auto held = Transfer(*store_, brief);
  EXPECT_EQ(held.status().code(), Code::kLockTimeout) << held.status().ToString();
  EXPECT_EQ(Balance("alice"), 100);
  ASSERT_TRUE(store_->blob_store().ReleaseLease(blob, lease->lease_id, {}).ok());
  EXPECT_TRUE(Transfer(*store_, brief).ok());
  EXPECT_EQ(Balance("alice"), 90);
}

// A batch whose answer is lost, applied or not: Commit() says which, from
// what reading back shows, and never guesses.
TEST_F(AtomicCommitTest, ALostAnswerIsSettledByReadingBack) {
  auto faulty = [](FaultRates rates, uint64_t seed) {
    return [rates, seed](std::shared_ptr<BlobStore> s) -> std::shared_ptr<BlobStore> {
      FaultOptions f;
      f.seed = seed;
      f.per_op[BlobOp::kBatch] = rates;
      return std::make_shared<FaultInjectingBlobStore>(std::move(s), f);
    };
  };
  auto applied = Transfer(*Open(faulty({.reset_after = 1}, 1)));
  ASSERT_TRUE(applied.ok()) << applied.status().ToString();
  EXPECT_EQ(Balance("alice"), 90);
  EXPECT_EQ((*applied)[0].etag, accounts_->Get("eu", "alice")->etag()) << "found by its stamp";

  auto refused = Transfer(*Open(faulty({.reset_before = 1}, 1)));
  EXPECT_EQ(refused.status().code(), Code::kUnavailable);
  EXPECT_EQ(Balance("alice"), 90);

  // Timeouts apply the batch or not, as the seed says: either way the
  // answer matches what storage holds.
  int oks = 0, unavailable = 0;
  for (uint64_t seed = 1; seed <= 12; ++seed) {
    const int before = Balance("alice");
    auto done = Transfer(*Open(faulty({.timeout = 1}, seed)));
    if (done.ok()) {
      ++oks;
      EXPECT_EQ(Balance("alice"), before - 10) << seed;
    } else {
      ++unavailable;
      EXPECT_EQ(done.status().code(), Code::kUnavailable) << done.status().ToString();
      EXPECT_EQ(Balance("alice"), before) << seed;
    }
  }
  EXPECT_GT(oks, 0);
  EXPECT_GT(unavailable, 0);
  EXPECT_EQ(Balance("alice") + Balance("bob"), 200);
}

}  // namespace
}  // namespace blobtable::testing
