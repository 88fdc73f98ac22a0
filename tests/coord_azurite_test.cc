// SPDX-License-Identifier: Apache-2.0
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

#include <atomic>
#include <functional>
#include <thread>

#include "tests/azurite.h"
#include "testing/counting_blob_store.h"
#include "devtools/proxy/fault_proxy.h"

namespace blobtable::testing {
namespace {

// Through the cache on Azurite: an idle poll is a 304 with no body; a change
// is read once and kept by the cache.
TEST(CoordAzurite, AWatchTransfersNoBodyWhileNothingChanges) {
  std::shared_ptr<internal::CountingBlobStore> counter;
  StoreOptions o;
  o.container = FreshContainer("watch");
  o.wrap_blob_store = [&](std::shared_ptr<BlobStore> b) {
    counter = std::make_shared<internal::CountingBlobStore>(std::move(b));
    // The watch's reads only: not the table's index definitions, which a
    // write finding them over a second old reads again in the background
    // (a slow run's third get, seen once in CI).
    counter->LeaveOutGetsUnder("t/config~/");
    return counter;
  };
  auto store = OpenBackendStore(CachedAzuriteBackend("curl"), o);
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  auto config = *(*store)->OpenTable("config");
  ASSERT_TRUE(config.Upsert(Entity("s", "limits").Set("max", 1)).ok());
  int calls = 0;
  WatchOptions manual;
  manual.background = false;
  auto watch = EntityWatch::Start(
      config, "s", "limits", [&](const Result<Entity>&) { ++calls; }, manual);
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

// Issue 30, hole 1: worker A's Complete goes out, storage never gets it
// whole (the connection is reset); while A waits to retry, A's lease runs
// out and worker B takes the item and completes it. A's retry used to find
// the item gone and say OK ("gone after an unseen attempt"), so both
// completions said OK. Now no request of A's outlives its lease (the retry
// is not sent) and a delete under a lease whose answer was lost is
// OutcomeUnknown.
TEST(CoordAzurite, ACompletionWhoseAnswerWasLostNeverAlsoSaysOk) {
  Azurite* azurite = Azurite::Get();
  ASSERT_NE(azurite, nullptr);
  auto proxy = proxy::FaultProxy::Start(azurite->port());
  ASSERT_TRUE(proxy.ok()) << proxy.status().ToString();
  StoreOptions direct_options;
  direct_options.container = FreshContainer("queue");
  auto direct = OpenBackendStore(AzuriteBackend("curl"), direct_options);
  ASSERT_TRUE(direct.ok()) << direct.status().ToString();
  QueueOptions q15;
  q15.visibility_seconds = 15;
  auto b_queue = WorkQueue::Open(**direct, "jobs", q15);
  ASSERT_TRUE(b_queue.ok());
  ASSERT_TRUE(b_queue->Enqueue("work").ok());

  Status b_completed = Status::Internal("worker B never ran");
  HookedRealClock clock([&] {        // worker B, while A waits to retry
    for (int i = 0; i < 400; ++i) {  // the 15 s visibility, and a margin
      auto item = b_queue->Dequeue();
      if (item.ok() && *item) {
        b_completed = b_queue->Complete(**item);
        return;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  });
  StoreOptions a_options = direct_options;
  a_options.clock = &clock;
  a_options.azure.retry.initial_delay = std::chrono::milliseconds(1);
  auto a_store = Store::Open("UseDevelopmentStorage=true;BlobEndpoint=http://127.0.0.1:" +
                                 std::to_string((*proxy)->port()) + "/devstoreaccount1",
                             a_options);
  ASSERT_TRUE(a_store.ok()) << a_store.status().ToString();
  auto a_queue = WorkQueue::Open(**a_store, "jobs", q15);
  auto a_item = a_queue->Dequeue();
  ASSERT_TRUE(a_item.ok() && *a_item) << a_item.status().ToString();
  (*proxy)->Inject(proxy::ProxyFault::kResetRequest, proxy::FaultProxy::Containing("DELETE "), 2);
  const Status a_completed = a_queue->Complete(**a_item);
  EXPECT_TRUE(b_completed.ok()) << b_completed.ToString();
  EXPECT_FALSE(a_completed.ok()) << "both workers were told they completed the item";
  EXPECT_EQ(a_completed.code(), Code::kOutcomeUnknown) << a_completed.ToString();
  EXPECT_GE((*proxy)->injected(proxy::ProxyFault::kResetRequest), 1);
}

}  // namespace
}  // namespace blobtable::testing
