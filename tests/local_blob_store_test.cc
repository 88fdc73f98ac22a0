// The local (LMDB) backend: the conformance suite, plus what only a local
// store has: persistence, several processes, containers, corrupt files.
#include <lmdb.h>

#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

#include "blobtable/blob_store.h"
#include "kv/lmdb_env.h"
#include "remote/blob_record.h"
#include "tests/blob_store_conformance.h"
#include "tests/test_util.h"

namespace blobtable::testing {
namespace {

// One directory for the whole suite; each store gets its own container.
TempDir& SuiteDir() {
  static TempDir* dir = new TempDir;
  return *dir;
}

std::shared_ptr<BlobStore> MakeLocal(FakeClock* clock) {
  static int n = 0;
  StoreOptions o;
  o.clock = clock;
  o.container = "conformance-" + std::to_string(++n);
  auto store = OpenLocalBlobStore(SuiteDir().path(), o);
  EXPECT_TRUE(store.ok()) << store.status().ToString();
  return store.ok() ? *store : nullptr;
}

INSTANTIATE_TEST_SUITE_P(Local, BlobStoreConformance,
                         ::testing::Values(BlobStoreTarget{"local", MakeLocal, true}),
                         PrintTarget);

TEST(LocalBlobStore, DataSurvivesReopen) {
  TempDir dir;
  std::string etag;
  {
    auto store = OpenLocalBlobStore(dir.path(), {});
    ASSERT_TRUE(store.ok());
    auto put = (*store)->Put("k", "persisted", {});
    ASSERT_TRUE(put.ok());
    etag = put->etag;
  }
  auto store = OpenLocalBlobStore(dir.path(), {});
  ASSERT_TRUE(store.ok());
  auto got = (*store)->Get("k", {});
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(got->data, "persisted");
  EXPECT_EQ(got->properties.etag, etag);
}

TEST(LocalBlobStore, ContainersAreSeparate) {
  TempDir dir;
  StoreOptions a, b;
  a.container = "alpha";
  b.container = "beta";
  auto sa = OpenLocalBlobStore(dir.path(), a);
  auto sb = OpenLocalBlobStore(dir.path(), b);
  ASSERT_TRUE(sa.ok() && sb.ok());
  ASSERT_TRUE((*sa)->Put("x", "in alpha", {}).ok());
  EXPECT_TRUE((*sb)->Get("x", {}).status().IsNotFound());
  EXPECT_EQ((*sa)->container(), "alpha");
}

TEST(LocalBlobStore, BadContainerNameIsInvalidArgument) {
  TempDir dir;
  for (const char* name : {"ab", "Upper", "-lead", "trail-", "dou--ble", "has_underscore"}) {
    StoreOptions o;
    o.container = name;
    auto s = OpenLocalBlobStore(dir.path(), o);
    EXPECT_EQ(s.status().code(), Code::kInvalidArgument) << name;
  }
}

TEST(LocalBlobStore, UnwritableDirectoryIsIOError) {
  auto s = OpenLocalBlobStore("/proc/blobtable-cannot-exist", {});
  EXPECT_EQ(s.status().code(), Code::kIOError) << s.status().ToString();
}

TEST(LocalBlobStore, CorruptRecordIsCorruptionNamingTheBlob) {
  TempDir dir;
  auto store = OpenLocalBlobStore(dir.path(), {});
  ASSERT_TRUE(store.ok());
  ASSERT_TRUE((*store)->Put("victim", "x", {}).ok());
  {
    // Overwrite the stored bucket with garbage behind the store's back.
    auto env = LmdbEnv::Open(dir.path(), StoreOptions{}.local_map_size);
    ASSERT_TRUE(env.ok());
    auto dbi = (*env)->Database("container:blobtable");
    ASSERT_TRUE(dbi.ok());
    auto txn = LmdbTxn::Begin(**env, false);
    ASSERT_TRUE(txn.ok());
    MDB_val k = ToVal("victim"), v = ToVal("\xc1garbage");
    ASSERT_EQ(mdb_put(txn->get(), *dbi, &k, &v, 0), 0);
    ASSERT_TRUE(txn->Commit().ok());
  }
  auto got = (*store)->Get("victim", {});
  EXPECT_EQ(got.status().code(), Code::kCorruption);
  EXPECT_NE(got.status().message().find("victim"), std::string::npos);
  EXPECT_EQ((*store)->List({}).status().code(), Code::kCorruption);
}

TEST(LocalBlobStore, BlobsSharingABucketKeepTheirDataOutOfIt) {
  // Names longer than the bucket prefix share one LMDB key; their data must
  // not be copied into that shared value, or every write would rewrite it.
  TempDir dir;
  auto store = OpenLocalBlobStore(dir.path(), {});
  ASSERT_TRUE(store.ok());
  std::string prefix(kBucketPrefix + 10, 'p');
  std::string big(50'000, 'd');
  for (int i = 0; i < 20; ++i)
    ASSERT_TRUE((*store)->Put(prefix + std::to_string(i), big + std::to_string(i), {}).ok());
  for (int i = 0; i < 20; i += 2) ASSERT_TRUE((*store)->Delete(prefix + std::to_string(i), {}).ok());
  for (int i = 1; i < 20; i += 2)
    EXPECT_EQ((*store)->Get(prefix + std::to_string(i), {})->data, big + std::to_string(i));
  auto env = LmdbEnv::Open(dir.path(), StoreOptions{}.local_map_size);
  auto dbi = (*env)->Database("container:blobtable");
  auto txn = LmdbTxn::Begin(**env, true);
  MDB_val k = ToVal(BucketKey(prefix)), v;
  ASSERT_EQ(mdb_get(txn->get(), *dbi, &k, &v), 0);
  EXPECT_LT(v.mv_size, 10u * 1024);  // ten ~500-byte names and records; inline data: 500 KB
  auto bucket = DecodeBucket(FromVal(v), "k");
  ASSERT_TRUE(bucket.ok());
  EXPECT_EQ(bucket->size(), 10u);
}

TEST(LocalBlobStore, ThreadsOpeningAndClosingOneDirectoryStayConsistent) {
  // Stores come and go on several threads; each open must share or wait for
  // the process's one LMDB environment, never make a second one.
  TempDir dir;
  std::vector<std::thread> threads;
  std::atomic<int> failures{0};
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < 50; ++i) {
        auto store = OpenLocalBlobStore(dir.path(), {});
        if (!store.ok()) { ++failures; continue; }
        std::string name = "t" + std::to_string(t);
        if (!(*store)->Put(name, std::to_string(i), {}).ok()) ++failures;
        auto got = (*store)->Get(name, {});
        if (!got.ok() || got->data != std::to_string(i)) ++failures;
      }
    });
  for (auto& th : threads) th.join();
  EXPECT_EQ(failures.load(), 0);
}

// Several processes on one directory: leases and ETags hold across them, and
// lease expiry is the same wall-clock instant for all (shared fake clock).
TEST(LocalBlobStore, LeasesHoldAcrossProcessesAndExpireForAll) {
  TempDir dir;
  FakeClock clock;
  StoreOptions o;
  o.clock = &clock;
  {
    auto store = OpenLocalBlobStore(dir.path(), o);
    ASSERT_TRUE(store.ok());
    ASSERT_TRUE((*store)->Put("lock", "", {}).ok());
  }
  // Child 1 takes a 15 s lease and exits.
  pid_t holder = ForkChild([&] {
    auto store = OpenLocalBlobStore(dir.path(), o);
    if (!store.ok()) return 2;
    return (*store)->AcquireLease("lock", 15, "", {}).ok() ? 0 : 3;
  });
  ASSERT_EQ(WaitChild(holder), 0);
  // Child 2 cannot take it while it lasts...
  auto try_acquire = [&] {
    return WaitChild(ForkChild([&] {
      auto store = OpenLocalBlobStore(dir.path(), o);
      if (!store.ok()) return 2;
      auto acq = (*store)->AcquireLease("lock", 15, "", {});
      if (acq.ok()) return 0;
      return acq.status().storage_code() == "LeaseAlreadyPresent" ? 10 : 3;
    }));
  };
  EXPECT_EQ(try_acquire(), 10);
  clock.Advance(std::chrono::seconds(14));
  EXPECT_EQ(try_acquire(), 10);
  // ...and can once it expires.
  clock.Advance(std::chrono::seconds(1));
  EXPECT_EQ(try_acquire(), 0);
}

TEST(LocalBlobStore, ConcurrentProcessesIncrementWithoutLoss) {
  TempDir dir;
  {
    auto store = OpenLocalBlobStore(dir.path(), {});
    ASSERT_TRUE(store.ok());
    ASSERT_TRUE((*store)->Put("n", "0", {}).ok());
  }
  constexpr int kProcs = 4, kEach = 50;
  std::vector<pid_t> pids;
  for (int p = 0; p < kProcs; ++p) {
    pids.push_back(ForkChild([&] {
      auto store = OpenLocalBlobStore(dir.path(), {});
      if (!store.ok()) return 2;
      for (int i = 0; i < kEach; ++i) {
        for (;;) {
          auto got = (*store)->Get("n", {});
          if (!got.ok()) return 3;
          PutOptions put;
          put.conditions.if_match = got->properties.etag;
          auto r = (*store)->Put("n", std::to_string(std::stoi(got->data) + 1), put);
          if (r.ok()) break;
          if (!r.status().IsConflict()) return 4;
        }
      }
      return 0;
    }));
  }
  for (pid_t pid : pids) EXPECT_EQ(WaitChild(pid), 0);
  auto store = OpenLocalBlobStore(dir.path(), {});
  ASSERT_TRUE(store.ok());
  EXPECT_EQ((*store)->Get("n", {})->data, std::to_string(kProcs * kEach));
}

}  // namespace
}  // namespace blobtable::testing
