// SPDX-License-Identifier: Apache-2.0
// A table as a whole: Table::Count, Table::DeleteWhere, Store::DropTable,
// on the embedded store as it is (in place, atomic batches) and presented as
// a remote store (no batches: requests one by one, concurrently).
#include <gtest/gtest.h>

#include "blobtable/store.h"
#include "model/blob_naming.h"
#include "testing/counting_blob_store.h"
#include "tests/dead_intent.h"
#include "tests/test_util.h"

namespace blobtable::testing {
namespace {

// Local storage presented as a remote store: no atomic batches, no
// listings with data, no reading in place.
class Remote final : public BlobStoreWrapper {
 public:
  using BlobStoreWrapper::BlobStoreWrapper;
  BlobStoreTraits traits() const override { return {.in_process = false}; }
};

class AdminTest : public ::testing::TestWithParam<bool> {
 protected:
  void SetUp() override {
    storage_ = *OpenLocalBlobStore(dir_.path(), "admin-test", {}, &clock_);
    top_ = storage_;
    if (GetParam()) top_ = std::make_shared<Remote>(storage_);
    StoreOptions so;
    so.clock = &clock_;
    store_ = Store::FromBlobStore(top_, so);
    orders_ = *store_->OpenTable("orders");
    other_ = *store_->OpenTable("other");
  }
  // Rows ("p<i % parts>", r<i>) with n = i.
  void Fill(const Table& t, int rows, int parts) {
    for (int i = 0; i < rows; ++i) {
      Entity e("p" + std::to_string(i % parts), Rk(i));
      e.Set("n", i);
      ASSERT_TRUE(t.Insert(e).ok());
    }
  }
  static std::string Rk(int i) {
    char rk[16];
    snprintf(rk, sizeof rk, "r%05d", i);
    return rk;
  }
  int64_t CountBlobs(const std::string& prefix) {
    ListOptions list;
    list.prefix = prefix;
    auto page = storage_->List(list);
    EXPECT_TRUE(page.ok());
    return page.ok() ? static_cast<int64_t>(page->items.size()) : -1;
  }

  TempDir dir_;
  FakeClock clock_;
  std::shared_ptr<BlobStore> storage_;
  std::shared_ptr<BlobStore> top_;  // what the store reads: storage_, or it as a remote store
  std::unique_ptr<Store> store_;
  Table orders_, other_;
};

INSTANTIATE_TEST_SUITE_P(Backends, AdminTest, ::testing::Values(false, true),
                         [](const auto& info) { return info.param ? "Remote" : "Local"; });

// Count answers what a full Scan counts, for every kind of query; a row
// under a dead coordinator's intent counts (its version before exists).
TEST_P(AdminTest, CountIsWhatAScanCounts) {
  Fill(orders_, 2500, 3);
  PlaceDeadIntent(*storage_, orders_, "p1", Rk(4));
  std::vector<QueryOptions> queries(5);
  queries[1].partition_key = "p1";
  queries[2].partition_key = "p2", queries[2].row_key_from = Rk(100),
  queries[2].row_key_to = Rk(900);
  queries[3].filter = "n lt 1000 and n ge 10";
  queries[4].row_key_prefix = "r001";
  for (size_t i = 0; i < queries.size(); ++i) {
    int64_t scanned = 0;
    auto scan = orders_.Scan(queries[i]);
    for (const Entity& e : scan) scanned += !e.row_key().empty();
    ASSERT_TRUE(scan.status().ok()) << scan.status().ToString();
    auto counted = orders_.Count(queries[i]);
    ASSERT_TRUE(counted.ok()) << counted.status().ToString();
    EXPECT_EQ(*counted, scanned) << i;
  }
  EXPECT_EQ(*orders_.Count({}), 2500);
  EXPECT_EQ(*other_.Count({}), 0);
}

// DeleteWhere deletes what the query matches and nothing else; a dry run
// counts; progress comes a batch at a time.
TEST_P(AdminTest, DeleteWhereTakesWhatMatchesInBatches) {
  Fill(orders_, 1200, 2);
  Fill(other_, 10, 1);
  QueryOptions q;
  q.filter = "n ge 100";
  DeleteWhereOptions dry;
  dry.dry_run = true;
  auto counted = orders_.DeleteWhere(q, dry);
  ASSERT_TRUE(counted.ok()) << counted.status().ToString();
  EXPECT_EQ(counted->matched, 1100);
  EXPECT_EQ(counted->deleted, 0);
  EXPECT_EQ(*orders_.Count({}), 1200);
  DeleteWhereOptions how;
  std::vector<int64_t> seen;
  how.progress = [&](const DeleteWhereReport& r) { seen.push_back(r.deleted); };
  auto done = orders_.DeleteWhere(q, how);
  ASSERT_TRUE(done.ok()) << done.status().ToString();
  EXPECT_EQ(done->matched, 1100);
  EXPECT_EQ(done->deleted, 1100);
  EXPECT_EQ(done->changed, 0);
  EXPECT_GE(seen.size(), 3u);  // 500 a batch
  EXPECT_EQ(seen.back(), 1100);
  EXPECT_EQ(*orders_.Count({}), 100);
  EXPECT_EQ(*orders_.Count(q), 0);
  EXPECT_EQ(*other_.Count({}), 10);
}

// Changes an entity (through `change`) at the first delete it is asked
// for: after DeleteWhere read its batch, before it deleted any of it.
class ChangeAtFirstDelete final : public BlobStoreWrapper {
 public:
  ChangeAtFirstDelete(std::shared_ptr<BlobStore> target, std::function<void()> change)
      : BlobStoreWrapper(std::move(target)), change_(std::move(change)) {}
  Status Delete(std::string_view name, const WriteOptions& o) override {
    if (!changed_.exchange(true)) change_();
    return BlobStoreWrapper::Delete(name, o);
  }
  BatchResult CommitBatch(const std::vector<BatchOp>& ops) override {
    if (!changed_.exchange(true)) change_();
    return BlobStoreWrapper::CommitBatch(ops);
  }

 private:
  std::function<void()> change_;
  std::atomic<bool> changed_{false};
};

// An entity changed between its read and its delete is left, and counted;
// the rest of its batch is deleted.
TEST_P(AdminTest, DeleteWhereLeavesWhatAnotherWriterChanged) {
  Fill(orders_, 20, 1);
  StoreOptions so;
  so.clock = &clock_;
  so.max_parallel_reads = 1;  // deletes in key order: the change comes first
  auto store = Store::FromBlobStore(
      std::make_shared<ChangeAtFirstDelete>(top_,
                                            [&] {
                                              Entity e("p0", Rk(7));
                                              e.Set("n", 700);
                                              ASSERT_TRUE(orders_.Upsert(e).ok());
                                            }),
      so);
  auto done = store->OpenTable("orders")->DeleteWhere({});
  ASSERT_TRUE(done.ok()) << done.status().ToString();
  EXPECT_EQ(done->matched, 20);
  EXPECT_EQ(done->deleted, 19);
  EXPECT_EQ(done->changed, 1);
  auto left = orders_.Get("p0", Rk(7));
  ASSERT_TRUE(left.ok()) << left.status().ToString();
  EXPECT_EQ(*left->FindAs<int32_t>("n"), 700);
  EXPECT_EQ(*orders_.Count({}), 1);
}

// DropTable deletes the table's entities and locks, nothing of another
// table; ListTables no longer names it.
TEST_P(AdminTest, DropTableDeletesItsBlobsOnly) {
  Fill(orders_, 1500, 4);
  Fill(other_, 5, 1);
  auto txn = store_->Begin();  // a transaction leaves its partition's lock blobs behind
  ASSERT_TRUE(txn->Upsert(orders_, Entity("p0", "t")).ok());
  ASSERT_TRUE(txn->Commit().ok());
  store_->WaitForFinishing();
  std::vector<DropTableReport> progress;
  DropTableOptions o;
  o.progress = [&](const DropTableReport& r) { progress.push_back(r); };
  auto dropped = store_->DropTable("Orders", o);
  ASSERT_TRUE(dropped.ok()) << dropped.status().ToString();
  EXPECT_EQ(dropped->entities, 1501);
  EXPECT_EQ(dropped->changed, 0);
  EXPECT_GE(progress.size(), 2u);  // 1,000 a page
  EXPECT_EQ(CountBlobs(internal::naming::TablePrefix("orders")), 0);
  EXPECT_EQ(*other_.Count({}), 5);
  auto tables = store_->ListTables();
  ASSERT_TRUE(tables.ok());
  EXPECT_EQ(*tables, std::vector<std::string>{"other"});
  auto again = store_->DropTable("orders");  // nothing left: nothing to do
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->entities + again->locks, 0);
  EXPECT_EQ(store_->DropTable("no").status().code(), Code::kInvalidArgument);
}

// What a transaction holds stops a drop before anything is deleted, unless
// forced: an entity under its intent, a leased partition lock.
TEST_P(AdminTest, DropTableRefusesWhatATransactionHoldsUnlessForced) {
  Fill(orders_, 30, 2);
  PlaceDeadIntent(*storage_, orders_, "p1", Rk(5));
  auto refused = store_->DropTable("orders");
  EXPECT_EQ(refused.status().code(), Code::kBusy);
  EXPECT_NE(refused.status().message().find(kDeadTxnId), std::string::npos)
      << refused.status().ToString();
  EXPECT_EQ(CountBlobs(internal::naming::TablePrefix("orders")), 30);
  RecoverOptions everything;  // the intent was placed by hand: no record or marker leads to it
  everything.scan_everything = true;
  auto recovered = store_->RecoverAndReport(everything);  // the dead transaction undone
  ASSERT_TRUE(recovered.ok()) << recovered.status().ToString();
  ASSERT_EQ(recovered->resolved, 1);

  const std::string lock = *orders_.LockBlobName("p0");
  ASSERT_TRUE(storage_->Put(lock, "", {}).ok());
  ASSERT_TRUE(storage_->AcquireLease(lock, 60, "", {}).ok());
  refused = store_->DropTable("orders");
  EXPECT_EQ(refused.status().code(), Code::kBusy) << refused.status().ToString();
  EXPECT_NE(refused.status().message().find("leased"), std::string::npos)
      << refused.status().ToString();
  EXPECT_EQ(CountBlobs(internal::naming::TablePrefix("orders")), 31);

  DropTableOptions force;
  force.force = true;
  auto dropped = store_->DropTable("orders", force);
  ASSERT_TRUE(dropped.ok()) << dropped.status().ToString();
  EXPECT_EQ(dropped->entities, 30);
  EXPECT_EQ(dropped->locks, 1);
  EXPECT_EQ(CountBlobs(internal::naming::TablePrefix("orders")), 0);
}

}  // namespace
}  // namespace blobtable::testing
