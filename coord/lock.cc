// SPDX-License-Identifier: Apache-2.0
// Lock: acquisition with backoff, the fencing token, the renewal thread,
// idempotent release (blobtable/lock.h).
#include "blobtable/lock.h"

#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <condition_variable>
#include <mutex>
#include <optional>
#include <thread>

#include "blobtable/store.h"
#include "coord/clock_wait.h"
#include "coord/coord_names.h"
#include "coord/lease_time.h"
#include "kv/op_metrics.h"
#include "kv/retry_loop.h"
#include "util/backoff.h"
#include "util/macros.h"
#include "util/random.h"

namespace blobtable {

using std::chrono::milliseconds;

namespace {

constexpr char kTokenKey[] = "fencingtoken";
constexpr char kOwnerKey[] = "owner";

Status ValidateLockOptions(const LockOptions& o) {
  if (o.lease_seconds < 15 || o.lease_seconds > 60)
    return Status::InvalidArgument("LockOptions::lease_seconds must be 15..60, got " +
                                   std::to_string(o.lease_seconds));
  if (o.timeout < milliseconds(0)) return Status::InvalidArgument("LockOptions::timeout < 0");
  // A deadline is now + timeout in the clock's nanoseconds: bounded, it cannot overflow.
  if (o.timeout > kMaxDuration)
    return Status::InvalidArgument("LockOptions::timeout is above 10 years");
  if (o.initial_delay < milliseconds(0) || o.max_delay < o.initial_delay)
    return Status::InvalidArgument(
        "LockOptions: need 0 <= initial_delay <= max_delay for the backoff");
  return Status::OK();
}

std::string DefaultOwner() {
  char host[256] = {};
  if (gethostname(host, sizeof host - 1) != 0) host[0] = '\0';
  return std::string(host[0] ? host : "unknown-host") + ":" + std::to_string(getpid());
}

Result<int64_t> TokenOf(const BlobProperties& p, const std::string& blob) {
  auto it = p.metadata.find(kTokenKey);
  if (it == p.metadata.end()) return int64_t{0};
  int64_t token = 0;
  auto [end, ec] = std::from_chars(it->second.data(), it->second.data() + it->second.size(), token);
  if (ec != std::errc() || end != it->second.data() + it->second.size() || token < 0)
    return Status::Corruption("lock blob '" + blob + "': fencing token '" + it->second +
                              "' is not a number");
  return token;
}

}  // namespace

struct Lock::State {
  BlobStore* blobs = nullptr;
  const Clock* clock = nullptr;
  std::string name, label, blob, lease_id, owner;  // label: "lock NAME", in messages
  int lease_seconds = 30;
  int64_t token = 0;
  std::function<void(const Status&)> on_lost;
  internal::CoordMetrics* metrics = nullptr;  // the store's: a loss is counted there
  pid_t pid = getpid();                       // a forked child must not join or release

  mutable std::mutex mu;
  std::condition_variable cv;
  bool stopping = false;
  bool released = false;
  Status lost;            // OK unless lost
  SteadyTime renewed_at;  // when the last answered acquire or renewal was sent
  // When storage said the lease is gone (broken, or taken after it ran
  // out): from then on another client may hold it.
  std::optional<SteadyTime> gone_at;
  std::unique_ptr<std::thread> renewer;

  // Until when the lease may be counted on: held() turns false then.
  SteadyTime UsableUntil() const { return renewed_at + internal::coord::UsableFor(lease_seconds); }
  bool Held() const { return !released && lost.ok() && clock->Steady() < UsableUntil(); }
  void Renew();
};

// The renewal thread: renews every third of the lease; retries a renewal
// that failed transiently every second while the lease may still be
// counted on; marks the lock lost when storage says the lease is gone or
// the lease may have lapsed.
void Lock::State::Renew() {
  const milliseconds interval = std::chrono::seconds(lease_seconds) / 3;
  std::unique_lock<std::mutex> lk(mu);
  SteadyTime next = renewed_at + interval;
  while (!stopping) {
    if (clock->Steady() < next) {
      internal::coord::WaitOnClock(*clock, cv, lk, next);
      continue;
    }
    // Never waits on an answer past the time the lease may be counted on:
    // by then the lock is lost anyway, and on_lost is called on time.
    LeaseOptions within;
    within.deadline = UsableUntil();
    lk.unlock();
    const SteadyTime sent = clock->Steady();
    auto r = blobs->RenewLease(blob, lease_id, within);
    lk.lock();
    if (stopping) break;
    if (r.ok()) {
      renewed_at = sent;
      next = sent + interval;
      continue;
    }
    const Status& s = r.status();
    const bool gone = s.IsLeaseLost() || s.IsNotFound() || s.IsBusy();
    if (gone) gone_at = sent;
    if (gone || clock->Steady() >= UsableUntil()) {
      lost = Status::LeaseLost(label + ": " +
                               (gone ? "the lease is gone (another client took it after it "
                                       "expired): "
                                     : "could not renew within the lease: ") +
                               s.ToString());
      metrics->locks_lost().Add();
      auto callback = on_lost;
      const Status why = lost;
      lk.unlock();
      if (callback) callback(why);
      lk.lock();
      break;
    }
    // A second after the try, or when the lease may no longer be counted
    // on, whichever comes first: on_lost comes as held() turns false (it
    // came up to a second later, the review of issue 55).
    next =
        std::min(sent + std::min<milliseconds>(std::chrono::seconds(1), interval), UsableUntil());
  }
}

Lock::Lock(std::unique_ptr<State> state) : state_(std::move(state)) {}

Lock::~Lock() { (void)Release(); }

Result<std::unique_ptr<Lock>> Lock::Acquire(const Store& store, std::string_view name,
                                            const LockOptions& options) {
  BT_RETURN_IF_ERROR(internal::coord::ValidateName(name, "lock"));
  return AcquireAt(store, std::string(name), "lock " + std::string(name),
                   internal::coord::LockBlobName(name), options);
}

Result<std::unique_ptr<Lock>> Lock::AcquireAt(const Store& store, std::string name,
                                              std::string label, std::string blob,
                                              const LockOptions& options) {
  auto acquired = [&]() -> Result<std::unique_ptr<Lock>> {
    BT_RETURN_IF_ERROR(ValidateLockOptions(options));
    auto st = std::make_unique<State>();
    st->blobs = &store.blob_store();
    st->clock = store.options().clock != nullptr ? store.options().clock : Clock::Real();
    st->name = std::move(name);
    st->label = std::move(label);
    st->blob = std::move(blob);
    st->lease_id = internal::NewGuid();
    st->owner = options.owner.empty() ? DefaultOwner() : options.owner;
    st->lease_seconds = options.lease_seconds;
    st->on_lost = options.on_lost;
    st->metrics = &store.coord_metrics();
    const std::string& ctx = st->label;

    RetryPolicy backoff;
    backoff.initial_delay = options.initial_delay;
    backoff.max_delay = options.max_delay;
    const SteadyTime deadline = st->clock->Steady() + options.timeout;
    for (int attempt = 1;; ++attempt) {
      const SteadyTime sent = st->clock->Steady();
      auto lease = st->blobs->AcquireLease(st->blob, st->lease_seconds, st->lease_id, {});
      if (lease.ok()) {
        st->renewed_at = sent;
        break;
      }
      if (lease.status().IsNotFound()) {
        // Never acquired: make its blob (a racing creator's is as good).
        PutOptions create;
        create.conditions.if_none_match = std::string(kAnyETag);
        Status made = st->blobs->Put(st->blob, "", create).status();
        if (!made.ok() && !made.IsConflict() && !made.IsBusy()) return made.WithContext(ctx);
        continue;
      }
      if (!lease.status().IsBusy()) return lease.status().WithContext(ctx);
      const SteadyTime now = st->clock->Steady();
      if (now >= deadline)
        return Status::LockTimeout(ctx + ": held by another client for longer than the timeout (" +
                                   std::to_string(options.timeout.count()) + " ms)");
      const milliseconds left = std::chrono::duration_cast<milliseconds>(deadline - now);
      st->clock->SleepFor(
          std::min(left, internal::BackoffDelay(backoff, attempt, internal::RandomU64())));
    }

    // Held: raise the token. Only the lease holder may write the blob, so
    // holders raise it one after another.
    Status raised = [&]() -> Status {
      auto head = st->blobs->Head(st->blob, {});
      if (!head.ok()) return head.status();
      BT_ASSIGN_OR_RETURN(int64_t previous, TokenOf(head->properties, st->blob));
      st->token = previous + 1;
      WriteOptions w;
      w.lease_id = st->lease_id;
      w.conditions.if_match = head->properties.etag;
      w.deadline = st->UsableUntil();
      return st->blobs
          ->SetMetadata(st->blob, {{kTokenKey, std::to_string(st->token)}, {kOwnerKey, st->owner}},
                        w)
          .status();
    }();
    if (!raised.ok()) {
      (void)st->blobs->ReleaseLease(st->blob, st->lease_id, {});
      return raised.WithContext(ctx + ": raising the fencing token");
    }
    State* raw = st.get();
    st->renewer = std::make_unique<std::thread>([raw] { raw->Renew(); });
    return std::unique_ptr<Lock>(new Lock(std::move(st)));
  }();
  store.coord_metrics().Acquired(acquired.status().code());
  return acquired;
}

Result<LockInfo> Lock::Inspect(const Store& store, std::string_view name) {
  BT_RETURN_IF_ERROR(internal::coord::ValidateName(name, "lock"));
  return InspectAt(store, "lock " + std::string(name), internal::coord::LockBlobName(name));
}

Result<LockInfo> Lock::InspectAt(const Store& store, const std::string& name,
                                 const std::string& blob) {
  auto head = store.blob_store().Head(blob, {});
  if (head.status().IsNotFound()) return LockInfo{};
  if (!head.ok()) return head.status().WithContext(name);
  LockInfo info;
  info.held = head->properties.lease_state == LeaseState::kLeased;
  auto owner = head->properties.metadata.find(kOwnerKey);
  if (owner != head->properties.metadata.end()) info.owner = owner->second;
  BT_ASSIGN_OR_RETURN(info.token, TokenOf(head->properties, blob));
  return info;
}

const std::string& Lock::name() const { return state_->name; }
int64_t Lock::token() const { return state_->token; }

bool Lock::held() const {
  std::lock_guard<std::mutex> lk(state_->mu);
  return state_->Held();
}

SteadyTime Lock::expiry() const {
  std::lock_guard<std::mutex> lk(state_->mu);
  const SteadyTime end = state_->renewed_at + std::chrono::seconds(state_->lease_seconds);
  return state_->gone_at ? std::min(*state_->gone_at, end) : end;
}

void Lock::StopRenewing() {
  State& st = *state_;
  {
    std::lock_guard<std::mutex> lk(st.mu);
    if (st.released) return;
    st.released = true;
    st.stopping = true;
  }
  st.cv.notify_all();
  if (getpid() != st.pid) {
    (void)st.renewer.release();
    return;
  }
  if (st.renewer && st.renewer->joinable()) st.renewer->join();
}

Status Lock::status() const {
  std::lock_guard<std::mutex> lk(state_->mu);
  return state_->lost;
}

Status Lock::Release() {
  State& st = *state_;
  if (getpid() != st.pid) {
    // A forked child: the renewal thread and the lease are the parent's.
    (void)st.renewer.release();
    return Status::OK();
  }
  {
    std::lock_guard<std::mutex> lk(st.mu);
    if (st.released) return Status::OK();
    st.released = true;
    st.stopping = true;
  }
  st.cv.notify_all();
  if (st.renewer && st.renewer->joinable()) st.renewer->join();
  // Released even after it was lost: an unreachable storage may still hold
  // our lease. Not past the time it may be counted on (nor waited on past
  // that): by then it is all but over. Gone already (expired, taken,
  // broken, the blob deleted) is what releasing wanted.
  LeaseOptions within;
  within.deadline = st.UsableUntil();
  if (st.clock->Steady() >= *within.deadline) return Status::OK();
  auto r = st.blobs->ReleaseLease(st.blob, st.lease_id, within);
  if (r.ok() || r.status().IsLeaseLost() || r.status().IsNotFound() || r.status().IsConflict() ||
      r.status().IsBusy())
    return Status::OK();
  return r.status().WithContext(st.label + ": release (the lease runs out by itself)");
}

Result<Entity> FencedUpdate(const Table& table, std::string_view pk, std::string_view rk,
                            int64_t token, const UpdateFn& fn, const RetryPolicy& policy) {
  if (token <= 0) return Status::InvalidArgument("FencedUpdate: a fencing token is positive");
  if (!fn) return Status::InvalidArgument("FencedUpdate needs a function");
  return table.Update(
      pk, rk,
      [&](Entity& e, bool exists) -> Status {
        const std::optional<int64_t> recorded = e.GetAs<int64_t>(kFencingTokenProperty);
        if (recorded && *recorded > token)
          return Status::LeaseLost("fenced: entity (PartitionKey '" + std::string(pk) +
                                   "', RowKey '" + std::string(rk) + "') was written under token " +
                                   std::to_string(*recorded) + "; this holder's token " +
                                   std::to_string(token) + " is older");
        BT_RETURN_IF_ERROR(fn(e, exists));
        e.Set(kFencingTokenProperty, token);
        return Status::OK();
      },
      policy);
}

}  // namespace blobtable
