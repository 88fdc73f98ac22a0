// SPDX-License-Identifier: Apache-2.0
// The request log (storage/request_log.h): one line format for every
// backend, the local store's calls logged through LoggingBlobStore, timed on
// the injected clock. The Azure backend's lines per HTTP attempt are tested
// in azure_pipeline_test.cc (LogPolicy) and azure_interop_test.cc.
#include <gtest/gtest.h>

#include <mutex>
#include <string>
#include <vector>

#include "blobtable/store.h"
#include "storage/azure/pipeline.h"
#include "storage/request_log.h"
#include "testing/fake_clock.h"
#include "tests/test_util.h"

using blobtable::testing::TempDir;

namespace blobtable {
namespace {

using namespace internal;

struct Lines {
  std::mutex mu;
  std::vector<std::string> lines;
  RequestLogSink Sink() {
    return [this](const std::string& line) {
      std::lock_guard<std::mutex> lock(mu);
      lines.push_back(line);
    };
  }
  bool Has(std::string_view prefix, std::string_view suffix) {
    for (const std::string& l : lines) {
      if (l.size() >= prefix.size() + suffix.size() && l.compare(0, prefix.size(), prefix) == 0 &&
          l.compare(l.size() - suffix.size(), suffix.size(), suffix) == 0)
        return true;
    }
    return false;
  }
};

TEST(RequestLog, OneLineFormatForEveryBackend) {
  EXPECT_EQ(RequestLogLine("PUT", "t/orders/e/-p/-r", "412 ConditionNotMet", 3.21, 2),
            "blobtable: PUT t/orders/e/-p/-r -> 412 ConditionNotMet 3.2 ms attempt 2");
  // The Azure pipeline's line is this format with the HTTP outcome.
  HttpResponse answer;
  answer.status = 412;
  answer.headers.emplace("x-ms-error-code", "ConditionNotMet");
  EXPECT_EQ(azure::LogLine({"PUT", "t/orders/e/-p/-r", 2}, 3.21, answer),
            RequestLogLine("PUT", "t/orders/e/-p/-r", "412 ConditionNotMet", 3.21, 2));
}

TEST(RequestLog, TheLocalStoreLogsEachCallInTheSameFormat) {
  TempDir dir;
  FakeClock clock;
  Lines log;
  StoreOptions o;
  o.clock = &clock;
  o.request_log = log.Sink();
  auto store = Store::Open(dir.path(), o);
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  auto table = (*store)->OpenTable("orders");
  ASSERT_TRUE(table.ok());
  ASSERT_TRUE(table->Insert(Entity("p", "r")).ok());
  EXPECT_EQ(table->Get("p", "missing").status().code(), Code::kNotFound);
  // Timed on the store's clock, which did not move.
  // A write is one batch with the check of the table's index definitions
  // (txn/definitions_check.h).
  EXPECT_TRUE(log.Has("blobtable: BATCH t/orders/e/", "(2 steps) -> ok 0.0 ms attempt 1"));
  EXPECT_TRUE(log.Has("blobtable: GET t/orders/", " -> NotFound BlobNotFound 0.0 ms attempt 1"));
}

// Waits `by` on the fake clock inside every Get, as a slow backend would.
class SlowGets final : public BlobStoreWrapper {
 public:
  SlowGets(std::shared_ptr<BlobStore> target, const FakeClock& clock, std::chrono::milliseconds by)
      : BlobStoreWrapper(std::move(target)), clock_(clock), by_(by) {}
  Result<GetResult> Get(std::string_view name, const ReadOptions& o) override {
    clock_.Advance(by_);
    return BlobStoreWrapper::Get(name, o);
  }

 private:
  const FakeClock& clock_;
  std::chrono::milliseconds by_;
};

TEST(RequestLog, TimesEachCallOnTheInjectedClock) {
  TempDir dir;
  FakeClock clock;
  auto local = OpenLocalBlobStore(dir.path(), kDefaultContainer, {}, &clock);
  ASSERT_TRUE(local.ok());
  Lines log;
  auto logged = LogRequests(
      std::make_shared<SlowGets>(*local, clock, std::chrono::milliseconds(12)), log.Sink(), &clock);
  EXPECT_EQ(logged->Get("b", {}).status().code(), Code::kNotFound);
  ASSERT_EQ(log.lines.size(), 1u);
  EXPECT_EQ(log.lines[0], "blobtable: GET b -> NotFound BlobNotFound 12.0 ms attempt 1");
}

TEST(RequestLog, WithoutASinkTheStoreIsNotWrapped) {
  TempDir dir;
  auto local = OpenLocalBlobStore(dir.path());
  ASSERT_TRUE(local.ok());
  EXPECT_EQ(LogRequests(*local, nullptr).get(), local->get());
}

}  // namespace
}  // namespace blobtable
