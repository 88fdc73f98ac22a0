// SPDX-License-Identifier: Apache-2.0
// Lock: a named lock shared by every client of a store (threads, processes,
// machines), held as a blob lease, with a fencing token.
//
//   auto lock = blobtable::Lock::Acquire(*store, "nightly-report");
//   if (!lock.ok()) { ... LockTimeout: someone else held it all along ... }
//   ... work; (*lock)->held() turns false if the lease may have lapsed ...
//   FencedUpdate(table, pk, rk, (*lock)->token(), fn);   // refused once a newer holder wrote
//   // released when *lock is destroyed (or by Release())
//
// The lock is the blob c/locks/-<name> (docs/coordination.md#coordination). Acquiring
// takes its lease and raises the fencing token stored with it: every
// acquisition gets a larger token than any before it. A background thread
// renews the lease every third of it; a renewal that fails for a reason
// that may pass (storage unreachable) is retried until the lease, by this
// process's own monotonic clock, may have run out. Then, or when storage
// says the lease is gone (another client took it after it expired), the lock
// is lost: held() turns false and LockOptions::on_lost is called.
//
// A lease broken by another client (BreakLease, `az storage blob lease
// break`, the portal: an operator's act; blobtable never breaks a lock's
// lease) ends at once on storage, and another client may take the lock at
// once. held() cannot see that before this holder's next renewal (within a
// third of the lease): until then it stays true. Under a break, only the
// fencing token protects writes
// (CoordTest.ALeaseTakenAwayIsReportedOnceThroughOnLost).
//
// What a lock cannot do: blob storage cannot stop a holder that paused
// (SIGSTOP, a long GC pause, a VM migration) past its lease from writing
// afterwards, before it notices. That is what the fencing token is for:
// writes made through FencedUpdate record the token, and a write carrying
// an older token than the one recorded is refused. A stale holder's write
// that lands before any newer holder wrote is not refused: nothing newer
// is recorded yet.
//
// Threading: each Lock owns one renewal thread, started by Acquire and
// joined by Release or the destructor; on_lost runs on that thread (keep it
// short; it must not destroy the Lock). held(), token() and status() may be
// called from any thread. After fork() the child holds no Lock: the
// renewal thread does not exist there, so the child must not use it (its
// held() turns false when the lease may lapse; the parent keeps renewing).
// At process exit without Release the lease is not renewed and runs out
// after at most lease_seconds.
#ifndef BLOBTABLE_LOCK_H_
#define BLOBTABLE_LOCK_H_

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "blobtable/export.h"
#include "blobtable/options.h"
#include "blobtable/status.h"
#include "blobtable/table.h"

namespace blobtable {

class Store;

struct LockOptions {
  // The lease: 15..60 seconds. A holder that stops renewing (killed,
  // paused, cut off) holds the lock at most this long.
  int lease_seconds = 30;
  // How long Acquire waits while another client holds the lock, then
  // LockTimeout. 0: one try.
  std::chrono::milliseconds timeout{30'000};
  // The waits between tries while it is held: exponential backoff with
  // full jitter from initial_delay up to max_delay (so that waiters do not
  // retry in step).
  std::chrono::milliseconds initial_delay{50};
  std::chrono::milliseconds max_delay{2'000};
  // Who holds it, recorded with the lock for LockInfo; empty: "<host>:<pid>".
  std::string owner;
  // Called once, on the renewal thread, when the lock is lost (not when it
  // is released).
  std::function<void(const Status& why)> on_lost;
};

// What a lock's blob says now (Lock::Inspect).
struct LockInfo {
  bool held = false;  // leased by someone now
  std::string owner;  // the last acquirer's LockOptions::owner
  int64_t token = 0;  // the last acquisition's fencing token (0: never acquired)
};

class BLOBTABLE_EXPORT Lock {
 public:
  // Acquires `name` (any non-empty UTF-8 string of at most 256 bytes) on
  // `store`, waiting up to options.timeout. The store must outlive the Lock.
  // Failures: LockTimeout (held by another client all along);
  // InvalidArgument (bad name or options); Unavailable/IOError from storage.
  static Result<std::unique_ptr<Lock>> Acquire(const Store& store, std::string_view name,
                                               const LockOptions& options = {});
  // Who holds `name` now, and its last token (one request). A lock never
  // acquired is {false, "", 0}.
  static Result<LockInfo> Inspect(const Store& store, std::string_view name);

  ~Lock();  // Release()
  Lock(const Lock&) = delete;
  Lock& operator=(const Lock&) = delete;

  const std::string& name() const;
  // This acquisition's fencing token: larger than every earlier one's.
  int64_t token() const;
  // True while this process may assume it holds the lock: not released,
  // not lost, and by its own monotonic clock less than the lease (less a
  // margin of a tenth, at least a second) since the last renewal it sent
  // was answered. Turns false before storage lets anyone else take it.
  bool held() const;
  // The earliest time, by the store clock's Steady(), storage can let
  // another client take the lock (a break aside): the send time of the last
  // acquire or renewal storage answered, plus the lease. held() turns false
  // a tenth of the lease (at least a second) before it. Once storage said
  // the lease is gone (a break): when it said so. Kept after the lock is
  // lost or released.
  SteadyTime expiry() const;
  // OK while held or after Release; the reason once lost.
  Status status() const;

  // Stops renewing and releases the lease. Idempotent: releasing again, or
  // after the lease was lost or ran out, is OK. Fails only if storage could
  // not be reached (the lease then runs out by itself within the lease).
  Status Release();

  struct State;  // internal

 private:
  friend class LeaderElection;
  explicit Lock(std::unique_ptr<State> state);
  // Acquire on the lock blob `blob`; `label` names it in messages.
  static Result<std::unique_ptr<Lock>> AcquireAt(const Store& store, std::string name,
                                                 std::string label, std::string blob,
                                                 const LockOptions& options);
  static Result<LockInfo> InspectAt(const Store& store, const std::string& name,
                                    const std::string& blob);
  // Stops renewing without releasing: the lease runs out by itself at
  // expiry() (a leader stepping down whose lease may still be on storage).
  void StopRenewing();
  std::unique_ptr<State> state_;
};

// The property FencedUpdate keeps the writer's token in.
inline constexpr char kFencingTokenProperty[] = "FencingToken";

// Table::Update guarded by a fencing token (a Lock's token()): the
// entity's FencingToken property records the token of the holder that last
// wrote it through FencedUpdate. If that is larger than `token`, a newer
// holder has written: LeaseLost ("fenced"), and nothing is written. Else
// fn runs and the entity is written with FencingToken = `token`, at the
// ETag read (a newer holder's write in between makes it read again, and
// then refuse). Other failures as for Table::Update.
BLOBTABLE_EXPORT Result<Entity> FencedUpdate(const Table& table, std::string_view partition_key,
                                             std::string_view row_key, int64_t token,
                                             const UpdateFn& fn, const RetryPolicy& policy = {});

}  // namespace blobtable

#endif  // BLOBTABLE_LOCK_H_
