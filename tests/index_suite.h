// SPDX-License-Identifier: Apache-2.0
// The secondary-index suite (docs/indexes.md): written once, run on the
// local backend through both commit paths, one LMDB batch (Local_Atomic)
// and the commit protocol (Local) with the fake clock (index_test.cc), and
// on Azurite, plain and through the cache (index_azurite_test.cc). Each
// test checks the invariants I1/I2 (txn/index_upkeep.h) with
// Store::CheckIndex after what it does.
#ifndef BLOBTABLE_TESTS_INDEX_SUITE_H_
#define BLOBTABLE_TESTS_INDEX_SUITE_H_

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "blobtable/store.h"
#include "model/blob_naming.h"
#include "model/index_naming.h"
#include "testing/counting_blob_store.h"
#include "testing/fake_clock.h"
#include "testing/hooks.h"
#include "tests/backend.h"

namespace blobtable::testing {

inline QueryOptions Select(std::vector<std::string> select) {
  QueryOptions o;
  o.select = std::move(select);
  return o;
}
inline QueryOptions Filtered(std::string filter) {
  QueryOptions o;
  o.filter = std::move(filter);
  return o;
}

class IndexTest : public ::testing::TestWithParam<Backend> {
 protected:
  void SetUp() override {
    StoreOptions o;
    o.container = FreshContainer("index");
    o.finish_in_background = false;
    // The definitions' waits a tenth as long (a build's grace: a second).
    // Every store of a test tries lock stripe 0 first, so a forked child's
    // transactions and this process's meet on one stripe (1 in 16 at random).
    internal::TestingHooks hooks = internal::HooksOf(o);
    hooks.index_time_divisor = 10;
    hooks.first_lock_stripe = 0;
    o.testing = std::make_shared<const internal::TestingHooks>(hooks);
    if (GetParam().fake_clock()) {
      // Waits move the fake clock twice as fast as they sleep, and waiters
      // side by side do not add their waits up (FakeClock::SleepPaced). A
      // build's page of a hundred entities holds its lease for a fraction
      // of a second of real time: a second or so of this clock however
      // many writers back off meanwhile, far from lock_timeout and the
      // leases' 30 s (fifty times, added up, let two writers' backoff turn
      // a slow machine's page into 30 s: LockTimeout). And a build's grace
      // (1 s here) passes over half a second of real time, while writers
      // holding the definitions read before it notice it: a writer that
      // checked its copy's age must then take that long to commit before
      // the walk can miss its write (not promised: docs/indexes.md).
      // Set before any thread or child shares the clock.
      clock_.set_sleep([this](std::chrono::milliseconds d) { clock_.SleepPaced(d, 2); });
      o.clock = &clock_;
    }
    o = internal::WithAtomicCommits(o, GetParam().atomic);
    options_ = o;
    auto s = OpenBackendStore(GetParam(), o);
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    store_ = std::move(*s);
    users_ = *store_->OpenTable("users");
  }
  static Entity User(const std::string& pk, const std::string& rk, const std::string& email,
                     int32_t age) {
    Entity e(pk, rk);
    e.Set("email", email).Set("age", age).Set("name", "user " + rk);
    return e;
  }
  // The stripe of index `index`'s lock (table users) that every store of a
  // test tries first (stripe 0, SetUp); "" if the name cannot be made.
  static std::string FirstIndexLockStripe(const std::string& index) {
    auto lock =
        internal::naming::LockBlobName(internal::naming::IndexTableName("users", index), "");
    return lock.ok() ? internal::naming::LockStripeBlobName(*lock, 0) : std::string();
  }
  // The lease id of another client (a GUID, as Azure asks).
  static constexpr const char* kOutsider = "0f8fad5b-d9cb-469f-a165-70867728950e";
  void ExpectClean(const std::string& index) {
    auto report = store_->CheckIndex("users", index);
    ASSERT_TRUE(report.ok()) << report.status().ToString();
    EXPECT_TRUE(report->clean()) << index << ": "
                                 << (report->problems.empty() ? "" : report->problems[0]);
  }
  // How many blobs index `index` (lowercase) holds: with `entries_only`
  // its entries, else lock blobs too.
  size_t IndexBlobs(const std::string& index, bool entries_only = false) {
    ListOptions under;
    under.prefix = "t/users~" + index + "/";
    auto listed = store_->blob_store().List(under);
    EXPECT_TRUE(listed.ok()) << listed.status().ToString();
    size_t n = 0;
    if (listed.ok())
      for (const BlobItem& item : listed->items)
        n += !entries_only || item.name.starts_with(under.prefix + "e/");
    return n;
  }
  // Creates users' indexes byEmail (unique) and byAge, then opens another
  // store on the same storage whose requests `counter` counts.
  std::unique_ptr<Store> OpenCountedWithTwoIndexes(
      std::shared_ptr<internal::CountingBlobStore>& counter) {
    EXPECT_TRUE(
        store_->CreateIndex("users", {.name = "byEmail", .properties = {"email"}, .unique = true})
            .ok());
    EXPECT_TRUE(store_->CreateIndex("users", {.name = "byAge", .properties = {"age"}}).ok());
    StoreOptions o = options_;
    o.wrap_blob_store = [&counter](std::shared_ptr<BlobStore> b) -> std::shared_ptr<BlobStore> {
      counter = std::make_shared<internal::CountingBlobStore>(std::move(b));
      return counter;
    };
    auto counted = OpenBackendStore(GetParam(), o);
    EXPECT_TRUE(counted.ok()) << counted.status().ToString();
    return counted.ok() ? std::move(*counted) : nullptr;
  }
  std::vector<std::string> RowKeys(const Result<QueryPage>& page) {
    EXPECT_TRUE(page.ok()) << page.status().ToString();
    std::vector<std::string> out;
    if (page.ok())
      for (const Entity& e : page->entities) out.push_back(e.row_key());
    return out;
  }

  internal::FakeClock clock_;  // shared with forked children (MAP_SHARED)
  StoreOptions options_;       // another store on the same storage opens with these
  std::unique_ptr<Store> store_;
  Table users_;
};

}  // namespace blobtable::testing

#endif  // BLOBTABLE_TESTS_INDEX_SUITE_H_
