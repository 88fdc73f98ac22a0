// SPDX-License-Identifier: Apache-2.0
// EntityWatch: a configuration entity polled with If-None-Match, calling
// back when it changes; no body crosses the network while nothing changes.
//
//   auto watch = blobtable::EntityWatch::Start(config, "service", "limits",
//       [](const blobtable::Result<blobtable::Entity>& now) { ... apply it ... });
//
// Every poll is one conditional GET of the entity's blob, If-None-Match the
// ETag last seen: unchanged, storage answers 304 with no body. Changed, the
// entity is read through Table::Get (and so through the local cache of an
// Azure store, which keeps the new copy) and passed to the callback. A
// deleted entity is passed as NotFound, once; an error reaching storage is
// passed once when it starts (Unavailable) and the watch goes on polling.
//
// Threading: Start() polls once on the caller's thread (the callback sees
// the current state before Start returns), then every interval on the
// watch's own thread, which runs the callback (keep it short; it must not
// destroy the watch). Poll() polls at once on the caller's thread (do not
// call it from the callback). After fork() the child has no polling
// thread and must not use the watch.
#ifndef BLOBTABLE_WATCH_H_
#define BLOBTABLE_WATCH_H_

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "blobtable/export.h"
#include "blobtable/status.h"
#include "blobtable/table.h"

namespace blobtable {

struct WatchOptions {
  // Between polls (>= 100 ms), on the store's clock.
  std::chrono::milliseconds interval{5'000};
  // Off: no polling thread; the owner calls Poll() when it wants.
  bool background = true;
};

class BLOBTABLE_EXPORT EntityWatch {
 public:
  using Callback = std::function<void(const Result<Entity>& now)>;

  // Watches (partition_key, row_key) of `table` (whose store must outlive
  // the watch). InvalidArgument for bad keys, options or a null callback;
  // the first poll's storage errors go to the callback, not here.
  static Result<std::unique_ptr<EntityWatch>> Start(const Table& table,
                                                    std::string_view partition_key,
                                                    std::string_view row_key, Callback on_change,
                                                    const WatchOptions& options = {});
  ~EntityWatch();  // Stop()
  EntityWatch(const EntityWatch&) = delete;
  EntityWatch& operator=(const EntityWatch&) = delete;

  // Polls now; true if the callback was called (a change, a deletion, or a
  // new error). Thread-safe with the polling thread.
  bool Poll();
  // Stops the polling thread (waits for a poll in progress). Idempotent.
  void Stop();

  // Polls so far (Start's first one included), and how many of them
  // called back with a new state (the first one's included; errors not).
  int polls() const;
  int changes() const;

  struct State;  // internal

 private:
  explicit EntityWatch(std::unique_ptr<State> state);
  std::unique_ptr<State> state_;
};

}  // namespace blobtable

#endif  // BLOBTABLE_WATCH_H_
