// SPDX-License-Identifier: Apache-2.0
// Named sync points in the commit path, for tests: a test installs a callback
// for a point and the coordinator calls it there (to stop it, kill it, or
// move the fake clock). Compiled in only in blobtable_testing, the static
// library tests link (BLOBTABLE_SYNC_POINTS); the library users link and
// install has none, whatever the build type. The names are listed in
// docs/transactions.md#sync-points.
#ifndef BLOBTABLE_TESTING_SYNC_POINT_H_
#define BLOBTABLE_TESTING_SYNC_POINT_H_

#include <functional>
#include <string>
#include <string_view>

namespace blobtable::internal {

class SyncPoints {
 public:
  // Calls `callback` whenever point `name` is reached (any thread). Replaces
  // an earlier callback for the same name. Thread-safe.
  static void Set(const std::string& name, std::function<void()> callback);
  static void ClearAll();
  static void Reach(std::string_view name);
  static bool Enabled();
};

}  // namespace blobtable::internal

#ifdef BLOBTABLE_SYNC_POINTS
#define BT_SYNC_POINT(name) ::blobtable::internal::SyncPoints::Reach(name)
#else
#define BT_SYNC_POINT(name) ((void)0)
#endif

#endif  // BLOBTABLE_TESTING_SYNC_POINT_H_
