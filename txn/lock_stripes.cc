// SPDX-License-Identifier: Apache-2.0
#include "txn/lock_stripes.h"

#include <utility>

#include "blobtable/blob_store.h"
#include "model/blob_naming.h"

namespace blobtable::internal {

LockStripes::LockStripes(unsigned first) : first_(first % kLockStripes) {}

LockStripes::Claim::Claim(Claim&& other) noexcept { *this = std::move(other); }

LockStripes::Claim& LockStripes::Claim::operator=(Claim&& other) noexcept {
  if (this != &other) {
    Release();
    owner_ = std::move(other.owner_);
    lock_ = std::move(other.lock_);
    stripe_ = other.stripe_;
    blob_ = std::move(other.blob_);
    other.owner_.reset();
  }
  return *this;
}

void LockStripes::Claim::Release() {
  if (owner_ == nullptr) return;
  owner_->Give(lock_, stripe_);
  owner_.reset();
}

LockStripes::Claim LockStripes::Take(const std::string& lock) {
  Claim c;
  {
    std::lock_guard<std::mutex> guard(mu_);
    std::vector<int>& used = used_[lock];
    // A name too long for a stripe's suffix ("/15") keeps to stripe 0.
    const int stripes = lock.size() + 3 > kMaxBlobNameChars ? 1 : kLockStripes;
    if (used.empty()) used.assign(kLockStripes, 0);
    const unsigned first = stripes == 1 ? 0 : first_;
    int best = static_cast<int>(first);
    for (int i = 0; i < stripes; ++i) {
      const int s = static_cast<int>((first + static_cast<unsigned>(i)) % stripes);
      if (used[s] < used[best]) best = s;
      if (used[best] == 0) break;
    }
    ++used[best];
    c.stripe_ = best;
  }
  c.owner_ = shared_from_this();
  c.lock_ = lock;
  c.blob_ = naming::LockStripeBlobName(lock, c.stripe_);
  return c;
}

void LockStripes::Give(const std::string& lock, int stripe) {
  std::lock_guard<std::mutex> guard(mu_);
  auto it = used_.find(lock);
  if (it == used_.end()) return;
  --it->second[stripe];
  for (int n : it->second)
    if (n > 0) return;
  used_.erase(it);
}

}  // namespace blobtable::internal
