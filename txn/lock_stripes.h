// SPDX-License-Identifier: Apache-2.0
// Which of a partition's lock blobs (stripes) this store's transactions
// hold (issue 32, goal 1). A partition has kLockStripes lock blobs; a
// transaction leases one of them, so transactions on disjoint rows of one
// partition proceed side by side instead of one at a time. The lock is only
// its coordinator's sign of life, read by whoever meets one of its leased
// intents undecided (docs/protocol.md, invariant L2); the intents fence the
// rows themselves. Each intent names the stripe its coordinator holds.
//
// A transaction takes the stripe this store uses least, starting from a
// stripe drawn per store (so that processes spread over the stripes too),
// and holds it until its lease is let go. Another process's transaction on
// the same stripe is met as before: the commit waits for it, in the global
// order of blob names. Thread-safe.
#ifndef BLOBTABLE_TXN_LOCK_STRIPES_H_
#define BLOBTABLE_TXN_LOCK_STRIPES_H_

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace blobtable::internal {

inline constexpr int kLockStripes = 16;

class LockStripes : public std::enable_shared_from_this<LockStripes> {
 public:
  explicit LockStripes(unsigned first);

  // A stripe held by one transaction of this store, until Release or
  // destruction.
  class Claim {
   public:
    Claim() = default;
    Claim(Claim&& other) noexcept;
    Claim& operator=(Claim&& other) noexcept;
    Claim(const Claim&) = delete;
    Claim& operator=(const Claim&) = delete;
    ~Claim() { Release(); }
    const std::string& blob() const { return blob_; }
    void Release();

   private:
    friend class LockStripes;
    std::shared_ptr<LockStripes> owner_;
    std::string lock_;  // the partition's first lock blob
    int stripe_ = 0;
    std::string blob_;
  };

  // A stripe of the partition whose first lock blob is `lock`
  // (naming::LockBlobName).
  Claim Take(const std::string& lock);

 private:
  void Give(const std::string& lock, int stripe);

  const unsigned first_;
  std::mutex mu_;
  std::map<std::string, std::vector<int>> used_;  // lock -> holders per stripe
};

}  // namespace blobtable::internal

#endif  // BLOBTABLE_TXN_LOCK_STRIPES_H_
