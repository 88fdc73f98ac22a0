// SPDX-License-Identifier: Apache-2.0
// How long a holder may count on a lease, by its own monotonic clock: the
// lock, the leader and the work queue judge their leases alike.
#ifndef BLOBTABLE_COORD_LEASE_TIME_H_
#define BLOBTABLE_COORD_LEASE_TIME_H_

#include <algorithm>
#include <chrono>

namespace blobtable::internal::coord {

// Storage starts a lease when it takes the request, after the holder sent
// it: counted from the send time, a lease of `lease_seconds` cannot run
// out on storage sooner. The holder stops counting on it a tenth of the
// lease (at least a second) before that, so that it gives the lease up
// before storage does; requests relying on it end by then too.
inline std::chrono::milliseconds UsableFor(int lease_seconds) {
  const std::chrono::milliseconds lease = std::chrono::seconds(lease_seconds);
  return lease - std::max<std::chrono::milliseconds>(std::chrono::seconds(1), lease / 10);
}

}  // namespace blobtable::internal::coord

#endif  // BLOBTABLE_COORD_LEASE_TIME_H_
