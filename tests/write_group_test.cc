// SPDX-License-Identifier: Apache-2.0
// Group commit (storage/local/write_group.h): concurrent writers share one durable
// commit, each body checked on its own.
#include "storage/local/write_group.h"

#include <gtest/gtest.h>

#include <future>
#include <thread>

#include "storage/local/lmdb_env.h"
#include "tests/test_util.h"

namespace blobtable {
namespace {
using namespace internal;

class WriteGroupTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto env = LmdbEnv::Open(dir_.path(), uint64_t{64} << 20);
    ASSERT_TRUE(env.ok()) << env.status().ToString();
    env_ = *env;
    auto dbi = env_->Database("t");
    ASSERT_TRUE(dbi.ok());
    dbi_ = *dbi;
  }
  void TearDown() override { env_->ReleaseDatabase("t"); }

  // A body that creates `key` (Conflict if it exists).
  WriteGroup::Body Create(std::string key, std::string value) {
    return [this, key, value](MDB_txn* txn) {
      MDB_val k = ToVal(key), v = ToVal(value);
      int rc = mdb_put(txn, dbi_, &k, &v, MDB_NOOVERWRITE);
      if (rc == MDB_KEYEXIST) return Status::Conflict(key + " exists");
      return rc == 0 ? Status::OK() : LmdbError(rc, "put");
    };
  }
  std::optional<std::string> Read(const std::string& key) {
    auto txn = LmdbTxn::Begin(*env_, /*read_only=*/true);
    EXPECT_TRUE(txn.ok());
    MDB_val k = ToVal(key), v;
    if (mdb_get(txn->get(), dbi_, &k, &v) != 0) return std::nullopt;
    return std::string(FromVal(v));
  }

  testing::TempDir dir_;
  std::shared_ptr<LmdbEnv> env_;
  MDB_dbi dbi_ = 0;
};

TEST_F(WriteGroupTest, WritersWaitingTogetherShareACommitEachCheckedOnItsOwn) {
  WriteGroup group(*env_);
  std::promise<void> entered, go;
  Status a, b, c, d;
  // a leads a group of its own and holds it until three more writers wait.
  std::thread ta([&] {
    a = group.Run([&](MDB_txn* txn) {
      entered.set_value();
      go.get_future().wait();
      return Create("a", "1")(txn);
    });
  });
  entered.get_future().wait();
  std::thread tb([&] { b = group.Run(Create("x", "b")); });
  std::thread tc([&] { c = group.Run(Create("x", "c")); });
  std::thread td([&] {
    d = group.Run([&](MDB_txn* txn) {
      EXPECT_TRUE(Create("d", "1")(txn).ok());
      return Status::Conflict("d changed its mind after writing");
    });
  });
  while (group.waiting() < 3) std::this_thread::yield();
  go.set_value();
  for (std::thread* t : {&ta, &tb, &tc, &td}) t->join();

  EXPECT_TRUE(a.ok()) << a.ToString();
  // b and c both create x: the one that ran second saw the first's write.
  ASSERT_NE(b.ok(), c.ok()) << b.ToString() << " / " << c.ToString();
  EXPECT_TRUE((b.ok() ? c : b).IsConflict());
  EXPECT_EQ(Read("x"), b.ok() ? "b" : "c");
  // d's failure undid its own write and no one else's.
  EXPECT_TRUE(d.IsConflict());
  EXPECT_EQ(Read("d"), std::nullopt);
  EXPECT_EQ(Read("a"), "1");
  EXPECT_EQ(group.stats().groups, 1);
  EXPECT_EQ(group.stats().grouped_bodies, 3);
}

TEST_F(WriteGroupTest, ALoneWriterCommitsByItselfAndAFailureWritesNothing) {
  WriteGroup group(*env_);
  EXPECT_TRUE(group.Run(Create("k", "1")).ok());
  Status s = group.Run([&](MDB_txn* txn) {
    EXPECT_TRUE(Create("j", "1")(txn).ok());
    return Create("k", "2")(txn);
  });
  EXPECT_TRUE(s.IsConflict()) << s.ToString();
  EXPECT_EQ(Read("j"), std::nullopt);
  EXPECT_EQ(Read("k"), "1");
  EXPECT_EQ(group.stats().groups, 0);
}

TEST_F(WriteGroupTest, ABodyThatThrowsFailsAloneAndTheGroupGoesOn) {
  WriteGroup group(*env_);
  Status s = group.Run([](MDB_txn*) -> Status { throw std::bad_alloc(); });
  EXPECT_EQ(s.code(), Code::kInternal);
  EXPECT_TRUE(group.Run(Create("k", "1")).ok());
  EXPECT_EQ(Read("k"), "1");
}

}  // namespace
}  // namespace blobtable
