// The Lock suite (coord_suite.cc) on the embedded store, with the fake clock.
#include "tests/coord_suite.h"
#include "tests/counting_blob_store.h"

namespace blobtable::testing {
namespace {

INSTANTIATE_TEST_SUITE_P(Local, CoordTest, ::testing::Values(LocalBackend()), PrintBackend);

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
