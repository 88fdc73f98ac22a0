// SPDX-License-Identifier: Apache-2.0
#include "testing/sync_point.h"

#include <map>
#include <mutex>

namespace blobtable::internal {
namespace {
struct Registry {
  std::mutex mu;
  std::map<std::string, std::function<void()>, std::less<>> callbacks;
};
Registry& registry() {
  static Registry* r = new Registry;
  return *r;
}
}  // namespace

void SyncPoints::Set(const std::string& name, std::function<void()> callback) {
  std::lock_guard<std::mutex> lock(registry().mu);
  registry().callbacks[name] = std::move(callback);
}

void SyncPoints::ClearAll() {
  std::lock_guard<std::mutex> lock(registry().mu);
  registry().callbacks.clear();
}

void SyncPoints::Reach(std::string_view name) {
  std::function<void()> callback;
  {
    std::lock_guard<std::mutex> lock(registry().mu);
    auto it = registry().callbacks.find(name);
    if (it == registry().callbacks.end()) return;
    callback = it->second;
  }
  callback();  // outside the lock: it may block, kill, or set other points
}

bool SyncPoints::Enabled() {
#ifdef BLOBTABLE_SYNC_POINTS
  return true;
#else
  return false;
#endif
}

}  // namespace blobtable::internal
