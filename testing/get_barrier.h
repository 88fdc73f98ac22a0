// SPDX-License-Identifier: Apache-2.0
// Holds the GETs it is asked to hold until `width` of them are in flight at
// once (or a generous limit passes, which the test reads as a failure): it
// proves that reads go out together, in one round, without measuring time.
// Once `width` met, every later GET passes. Stacks anywhere a
// BlobStoreWrapper does. Thread-safe.
#ifndef BLOBTABLE_TESTING_GET_BARRIER_H_
#define BLOBTABLE_TESTING_GET_BARRIER_H_

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <string_view>
#include <utility>

#include "blobtable/blob_store.h"

namespace blobtable::internal {

class GetBarrier final : public BlobStoreWrapper {
 public:
  // `held`: which GETs the barrier holds (by blob name); the others pass.
  GetBarrier(std::shared_ptr<BlobStore> target, int width,
             std::function<bool(std::string_view)> held)
      : BlobStoreWrapper(std::move(target)), width_(width), held_(std::move(held)) {}

  Result<GetResult> Get(std::string_view n, const ReadOptions& o) override {
    if (!held_(n)) return BlobStoreWrapper::Get(n, o);
    {
      std::unique_lock<std::mutex> lock(mu_);
      ++in_flight_;
      most_ = std::max(most_, in_flight_);
      cv_.notify_all();
      if (!cv_.wait_for(lock, std::chrono::seconds(60),
                        [&] { return released_ || in_flight_ >= width_; }))
        timed_out_ = true;
      released_ = true;  // the first `width` met: the rest pass
      cv_.notify_all();
    }
    auto r = BlobStoreWrapper::Get(n, o);
    std::lock_guard<std::mutex> lock(mu_);
    --in_flight_;
    return r;
  }
  // The most GETs held at once.
  int most() {
    std::lock_guard<std::mutex> lock(mu_);
    return most_;
  }
  // Whether the limit passed before `width` were in flight.
  bool timed_out() {
    std::lock_guard<std::mutex> lock(mu_);
    return timed_out_;
  }

 private:
  const int width_;
  const std::function<bool(std::string_view)> held_;
  std::mutex mu_;
  std::condition_variable cv_;
  int in_flight_ = 0, most_ = 0;
  bool released_ = false, timed_out_ = false;
};

}  // namespace blobtable::internal

#endif  // BLOBTABLE_TESTING_GET_BARRIER_H_
