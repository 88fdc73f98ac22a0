// SPDX-License-Identifier: Apache-2.0
// Which of a partition's lock blobs (stripes) this store's transactions
// hold (issue 32, goal 1). A partition has kLockStripes lock blobs; a
// transaction leases one of them, so transactions on disjoint rows of one
// partition proceed side by side instead of one at a time. The lock is only
// its coordinator's sign of life, read by whoever meets one of its leased
// intents undecided (docs/protocol.md, invariant L2); the intents fence the
// rows themselves. Each intent names the stripe its coordinator holds.
//
// A transaction takes, starting from a stripe drawn per store (so that
// processes spread over the stripes too), in this order of preference:
//   1. a stripe this store leased before (its blob exists) and holds no
//      longer;
//   2. one this store's background finishing is letting go of right now:
//      it waits for that (a round trip) rather than create a blob (where
//      commits finish inline, the caller passes no wait);
//   3. a stripe this store never used (its first lease creates the blob:
//      two requests more);
//   4. when every stripe is held here, the one held least.
// A stripe is held until its lease is let go; one whose release failed, or
// whose transaction's outcome is unknown, until its lease has run out. So a
// worker committing on its own rows keeps using one lock blob, and a store
// creates at most kLockStripes of them a partition. Another process's
// transaction on the same stripe is met as before: the commit waits for it,
// in the global order of blob names. Thread-safe.
#ifndef BLOBTABLE_TXN_LOCK_STRIPES_H_
#define BLOBTABLE_TXN_LOCK_STRIPES_H_

#include <chrono>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "blobtable/clock.h"

namespace blobtable::internal {

inline constexpr int kLockStripes = 16;
// How many partitions a store remembers the stripes of while none is held.
inline constexpr size_t kRememberedPartitions = 4096;

class LockStripes : public std::enable_shared_from_this<LockStripes> {
 public:
  explicit LockStripes(unsigned first);

  // A stripe held by one transaction of this store, until Release (or
  // destruction) or KeepUntil.
  class Claim {
   public:
    Claim() = default;
    Claim(Claim&& other) noexcept;
    Claim& operator=(Claim&& other) noexcept;
    Claim(const Claim&) = delete;
    Claim& operator=(const Claim&) = delete;
    ~Claim() { Release(); }
    const std::string& blob() const { return blob_; }
    // Its lease was taken: the blob exists.
    void NoteLeased();
    // Its lease is being let go of (a Take may wait for that).
    void NoteReleasing();
    // Lets go of it: its lease was let go of.
    void Release();
    // Lets go of it, but no Take of this store picks it before `until`
    // unless every other stripe is held (its lease may still be held).
    void KeepUntil(SteadyTime until);

   private:
    friend class LockStripes;
    std::shared_ptr<LockStripes> owner_;
    std::string lock_;  // the partition's first lock blob
    int stripe_ = 0;
    std::string blob_;
  };

  // A stripe of the partition whose first lock blob is `lock`
  // (naming::LockBlobName), as the file comment says; waits at most
  // `wait_for_release` (real time: this store's own finishing) for a stripe
  // being let go of. `now` is on the store's clock (KeepUntil's).
  Claim Take(const std::string& lock, SteadyTime now, std::chrono::milliseconds wait_for_release);

 private:
  struct Stripe {
    int holders = 0;
    bool leased_before = false;
    bool releasing = false;
    SteadyTime kept_until{};
  };
  // The preferred stripe free now (-1: none); `releasing`: whether one is
  // being let go of. Under mu_.
  int PickLocked(const std::vector<Stripe>& stripes, int count, SteadyTime now,
                 bool* releasing) const;
  void Give(const std::string& lock, int stripe, SteadyTime kept_until);
  void Update(const std::string& lock, int stripe, bool leased, bool releasing);

  const unsigned first_;
  std::mutex mu_;
  std::condition_variable released_;
  std::map<std::string, std::vector<Stripe>> stripes_;  // lock -> its stripes here
};

}  // namespace blobtable::internal

#endif  // BLOBTABLE_TXN_LOCK_STRIPES_H_
