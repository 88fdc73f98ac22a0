// SPDX-License-Identifier: Apache-2.0
// Independent requests sent at once: remote cost is round trips, and a
// round trip that need not wait for another should not.
#ifndef BLOBTABLE_UTIL_PARALLEL_H_
#define BLOBTABLE_UTIL_PARALLEL_H_

#include <cstddef>
#include <functional>

namespace blobtable::internal {

// Calls fn(i) for every i in [0, n), at most `width` calls at a time, the
// calling thread making some of them and up to width - 1 threads started
// for the others; returns when every call has returned. Which thread makes
// which call is not fixed: fn must be safe to call from several threads at
// once. With width <= 1 or n <= 1, the calls are made in order on the
// calling thread.
void ParallelFor(size_t n, size_t width, const std::function<void(size_t)>& fn);

}  // namespace blobtable::internal

#endif  // BLOBTABLE_UTIL_PARALLEL_H_
