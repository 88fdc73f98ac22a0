// SPDX-License-Identifier: Apache-2.0
#include "util/parallel.h"

#include "util/call_context.h"

#include <algorithm>
#include <atomic>
#include <system_error>
#include <thread>
#include <vector>

namespace blobtable::internal {

void ParallelFor(size_t n, size_t width, const std::function<void(size_t)>& fn) {
  if (width <= 1 || n <= 1) {
    for (size_t i = 0; i < n; ++i) fn(i);
    return;
  }
  std::atomic<size_t> next{0};
  const ThreadCall call = CurrentCall();  // what the helpers do is the caller's
  auto work = [&] {
    CurrentCall() = call;
    for (size_t i; (i = next.fetch_add(1)) < n;) fn(i);
  };
  std::vector<std::thread> helpers;
  const size_t extra = std::min(width, n) - 1;
  helpers.reserve(extra);
  for (size_t t = 0; t < extra; ++t) {
    try {
      helpers.emplace_back(work);
    } catch (const std::system_error&) {
      break;  // no thread to be had: fewer calls at once, the same calls
    }
  }
  work();
  for (std::thread& t : helpers) t.join();
}

}  // namespace blobtable::internal
