// SPDX-License-Identifier: Apache-2.0
// Secondary indexes on the local backend, with the fake clock: through the
// commit protocol (Local) and as one LMDB write transaction (Local_Atomic).
#include "tests/index_suite.h"

#include <condition_variable>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

namespace blobtable::testing {
namespace {

INSTANTIATE_TEST_SUITE_P(Local, IndexTest, ::testing::Values(LocalBackend(), LocalAtomicBackend()),
                         PrintBackend);

// Wraps a store and notes which thread read a table's definitions last.
class NotesDefinitionReads final : public BlobStoreWrapper {
 public:
  using BlobStoreWrapper::BlobStoreWrapper;
  Result<GetResult> Get(std::string_view name, const ReadOptions& o) override {
    auto got = BlobStoreWrapper::Get(name, o);
    if (name == "t/users~/e/-/-schema") {
      std::lock_guard<std::mutex> lock(mu_);
      readers_.push_back(std::this_thread::get_id());
      read_.notify_all();
    }
    return got;
  }
  // Waits (up to a minute of real time) for the `n`-th read; its thread.
  std::optional<std::thread::id> Reader(size_t n) {
    std::unique_lock<std::mutex> lock(mu_);
    read_.wait_for(lock, std::chrono::minutes(1), [&] { return readers_.size() >= n; });
    if (readers_.size() < n) return std::nullopt;
    return readers_[n - 1];
  }

 private:
  std::mutex mu_;
  std::condition_variable read_;
  std::vector<std::thread::id> readers_;
};

// A write that finds its copy of the definitions older than a second (but
// younger than 2.5 s) does not wait for reading them again: the store's
// background threads read them beside it; an older copy is read first, on
// the writer's thread (docs/indexes.md#what-it-costs).
TEST(IndexDefinitionsTest, ACopyAFewSecondsOldIsReadAgainBesideTheWrite) {
  internal::FakeClock clock;
  std::shared_ptr<NotesDefinitionReads> noted;
  StoreOptions o;
  o.container = FreshContainer("defs");
  o.clock = &clock;
  o.finish_in_background = true;
  o.wrap_blob_store = [&noted](std::shared_ptr<BlobStore> b) -> std::shared_ptr<BlobStore> {
    noted = std::make_shared<NotesDefinitionReads>(std::move(b));
    return noted;
  };
  auto store = OpenBackendStore(LocalBackend(), o);
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  auto users = (*store)->OpenTable("users");
  ASSERT_TRUE(users.ok());
  const std::thread::id me = std::this_thread::get_id();
  ASSERT_TRUE(users->Upsert(Entity("p", "a")).ok());  // no copy yet: read first
  EXPECT_EQ(noted->Reader(1), me);
  clock.Advance(std::chrono::milliseconds(500));
  ASSERT_TRUE(users->Upsert(Entity("p", "b")).ok());  // fresh: not read
  clock.Advance(std::chrono::milliseconds(1000));
  ASSERT_TRUE(users->Upsert(Entity("p", "c")).ok());  // 1.5 s: read beside it
  auto beside = noted->Reader(2);
  ASSERT_TRUE(beside.has_value());
  EXPECT_NE(*beside, me);
  clock.Advance(std::chrono::milliseconds(3000));
  ASSERT_TRUE(users->Upsert(Entity("p", "d")).ok());  // 3 s: read first
  EXPECT_EQ(noted->Reader(3), me);
}

}  // namespace
}  // namespace blobtable::testing
