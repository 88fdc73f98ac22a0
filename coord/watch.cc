// SPDX-License-Identifier: Apache-2.0
// EntityWatch: conditional GETs of one entity's blob, a callback on change
// (blobtable/watch.h).
#include "blobtable/watch.h"

#include <unistd.h>

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <optional>
#include <thread>

#include "coord/clock_wait.h"
#include "kv/store_core.h"
#include "util/macros.h"

namespace blobtable {

struct EntityWatch::State {
  Table table;
  std::string pk, rk, blob;
  Callback on_change;
  WatchOptions options;
  BlobStore* blobs = nullptr;
  const Clock* clock = nullptr;
  pid_t pid = getpid();

  std::mutex poll_mu;  // one poll at a time; guards what follows
  // The blob's version the watch asks about (If-None-Match); "" while a
  // reader's view of it may change without the blob changing (an intent:
  // its record decides), or before the first read.
  std::string blob_etag;
  // The entity last passed on: a new ETag on the same properties and
  // Timestamp (an intent finished: rewritten as a plain version) is no
  // change to call back.
  std::optional<Entity> last;
  enum class Seen { kNothing, kEntity, kMissing, kError } seen = Seen::kNothing;
  std::atomic<int> polls{0}, changes{0};

  std::mutex mu;
  std::condition_variable cv;
  bool stopping = false;
  // The first background poll is due one interval after Start returned
  // (set there, not when the thread gets going: a loaded machine may start
  // it late, and a test's fake clock may have moved on by then).
  SteadyTime first_due;
  std::unique_ptr<std::thread> thread;

  bool PollOnce();
  void Run();
};

bool EntityWatch::State::PollOnce() {
  std::lock_guard<std::mutex> g(poll_mu);
  ++polls;
  ReadOptions conditional;
  if (!blob_etag.empty()) conditional.conditions.if_none_match = blob_etag;
  auto got = blobs->Get(blob, conditional);
  if (got.ok() && got->not_modified) {
    seen = Seen::kEntity;  // (after an error: storage is back, nothing changed)
    return false;
  }
  if (!got.ok() && !got.status().IsNotFound()) {
    if (seen == Seen::kError) return false;
    seen = Seen::kError;
    on_change(got.status().WithContext("watch of " + table.name() + " (" + pk + ", " + rk + ")"));
    return true;
  }
  // Changed (or deleted): the entity as a reader sees it, through the cache.
  auto now = table.Get(pk, rk, ReadPolicy::Validate());
  if (now.status().IsNotFound()) {
    blob_etag.clear();
    if (seen == Seen::kMissing) return false;
    seen = Seen::kMissing;
  } else if (!now.ok()) {
    if (seen == Seen::kError) return false;
    seen = Seen::kError;
  } else {
    // A reader sees the blob's own ETag on a plain version or a committed
    // intent; another one (the version before) on an intent its record has
    // not decided committed yet, and that may change with no change to the
    // blob: ask again with a full read until it is settled.
    blob_etag = now->etag() == got->properties.etag ? got->properties.etag : "";
    const bool same = seen == Seen::kEntity && last && last->timestamp() == now->timestamp() &&
                      last->properties() == now->properties();
    last = *now;
    if (same) return false;
    seen = Seen::kEntity;
  }
  ++changes;
  on_change(now);
  return true;
}

void EntityWatch::State::Run() {
  std::unique_lock<std::mutex> lk(mu);
  SteadyTime next = first_due;
  while (!stopping) {
    if (clock->Steady() < next) {
      internal::coord::WaitOnClock(*clock, cv, lk, next);
      continue;
    }
    lk.unlock();
    PollOnce();
    lk.lock();
    next = clock->Steady() + options.interval;
  }
}

EntityWatch::EntityWatch(std::unique_ptr<State> state) : state_(std::move(state)) {}

Result<std::unique_ptr<EntityWatch>> EntityWatch::Start(const Table& table, std::string_view pk,
                                                        std::string_view rk, Callback on_change,
                                                        const WatchOptions& options) {
  if (!on_change) return Status::InvalidArgument("EntityWatch needs a callback");
  if (options.interval < std::chrono::milliseconds(100))
    return Status::InvalidArgument("WatchOptions::interval must be at least 100 ms");
  BT_ASSIGN_OR_RETURN(std::string blob, table.EntityBlobName(pk, rk));
  auto st = std::make_unique<State>();
  st->table = table;
  st->pk = std::string(pk);
  st->rk = std::string(rk);
  st->blob = std::move(blob);
  st->on_change = std::move(on_change);
  st->options = options;
  st->blobs = table.core_->blobs.get();
  st->clock = table.core_->clock;
  st->PollOnce();  // the current state, before Start returns
  st->first_due = st->clock->Steady() + options.interval;
  if (options.background) {
    State* raw = st.get();
    st->thread = std::make_unique<std::thread>([raw] { raw->Run(); });
  }
  return std::unique_ptr<EntityWatch>(new EntityWatch(std::move(st)));
}

EntityWatch::~EntityWatch() { Stop(); }

bool EntityWatch::Poll() { return state_->PollOnce(); }

void EntityWatch::Stop() {
  State& st = *state_;
  if (getpid() != st.pid) {  // a forked child: the thread is the parent's
    (void)st.thread.release();
    return;
  }
  {
    std::lock_guard<std::mutex> lk(st.mu);
    st.stopping = true;
  }
  st.cv.notify_all();
  if (st.thread && st.thread->joinable()) st.thread->join();
}

int EntityWatch::polls() const { return state_->polls.load(); }
int EntityWatch::changes() const { return state_->changes.load(); }

}  // namespace blobtable
