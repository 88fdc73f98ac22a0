// The coordination suite (coord_suite.cc) on Azurite, with curl (the suite
// forks holders; libcurl handles made after fork() are safe). Azurite keeps
// its own time, so waiting out a lease takes its 15 s: the suite is a
// program of its own so that ctest runs those waits beside other tests.
#include "tests/coord_suite.h"

namespace blobtable::testing {
namespace {

INSTANTIATE_TEST_SUITE_P(Azurite, CoordTest, ::testing::Values(AzuriteBackend("curl")),
                         PrintBackend);

}  // namespace
}  // namespace blobtable::testing

#include "tests/counting_blob_store.h"

namespace blobtable::testing {
namespace {

// Through the cache on Azurite: an idle poll is a 304 with no body; a change
// is read once and kept by the cache.
TEST(CoordAzurite, AWatchTransfersNoBodyWhileNothingChanges) {
  std::shared_ptr<CountingBlobStore> counter;
  StoreOptions o;
  o.container = FreshContainer("watch");
  o.wrap_blob_store = [&](std::shared_ptr<BlobStore> b) {
    counter = std::make_shared<CountingBlobStore>(std::move(b));
    return counter;
  };
  auto store = OpenBackendStore(CachedAzuriteBackend("curl"), o);
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  auto config = *(*store)->OpenTable("config");
  ASSERT_TRUE(config.Upsert(Entity("s", "limits").Set("max", 1)).ok());
  int calls = 0;
  WatchOptions manual;
  manual.background = false;
  auto watch = EntityWatch::Start(config, "s", "limits",
                                  [&](const Result<Entity>&) { ++calls; }, manual);
  ASSERT_TRUE(watch.ok());
  EXPECT_EQ(calls, 1);
  counter->Clear();
  for (int i = 0; i < 5; ++i) EXPECT_FALSE((*watch)->Poll());
  EXPECT_EQ(counter->Counts()["get"], 5);
  EXPECT_EQ(counter->NotModified(), 5);  // 304s: no body crossed
  EXPECT_EQ(calls, 1);
  ASSERT_TRUE(config.Upsert(Entity("s", "limits").Set("max", 2)).ok());
  counter->Clear();
  EXPECT_TRUE((*watch)->Poll());
  EXPECT_EQ(calls, 2);
  EXPECT_EQ(counter->Counts()["get"], 2);  // the conditional GET, then the read
}

}  // namespace
}  // namespace blobtable::testing
