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

void LockStripes::Claim::NoteLeased() {
  if (owner_ != nullptr) owner_->Update(lock_, stripe_, /*leased=*/true, /*releasing=*/false);
}

void LockStripes::Claim::NoteReleasing() {
  if (owner_ != nullptr) owner_->Update(lock_, stripe_, /*leased=*/false, /*releasing=*/true);
}

void LockStripes::Claim::Release() { KeepUntil(SteadyTime{}); }

void LockStripes::Claim::KeepUntil(SteadyTime until) {
  if (owner_ == nullptr) return;
  owner_->Give(lock_, stripe_, until);
  owner_.reset();
}

int LockStripes::PickLocked(const std::vector<Stripe>& stripes, int count, SteadyTime now,
                            bool* releasing) const {
  int fresh = -1;
  *releasing = false;
  for (int i = 0; i < count; ++i) {
    const int s = static_cast<int>((first_ + static_cast<unsigned>(i)) % count);
    const Stripe& st = stripes[s];
    if (st.holders > 0) {
      *releasing = *releasing || st.releasing;
      continue;
    }
    if (st.kept_until > now) continue;
    if (st.leased_before) return s;
    if (fresh < 0) fresh = s;
  }
  return *releasing ? -1 : fresh;
}

LockStripes::Claim LockStripes::Take(const std::string& lock, SteadyTime now,
                                     std::chrono::milliseconds wait_for_release) {
  // A name too long for a stripe's suffix ("/15") keeps to stripe 0.
  const int count = lock.size() + 3 > kMaxBlobNameChars ? 1 : kLockStripes;
  const auto give_up = std::chrono::steady_clock::now() + wait_for_release;
  Claim c;
  {
    std::unique_lock<std::mutex> guard(mu_);
    for (;;) {
      std::vector<Stripe>& stripes = stripes_[lock];
      if (stripes.empty()) stripes.resize(kLockStripes);
      bool releasing = false;
      int pick = PickLocked(stripes, count, now, &releasing);
      if (pick < 0 && releasing && released_.wait_until(guard, give_up) != std::cv_status::timeout)
        continue;
      if (pick < 0) {
        // Every stripe held, kept or being let go of: one never leased
        // here, else the one held least (kept ones count as held once).
        pick = static_cast<int>(first_ % count);
        for (int i = 0; i < count; ++i) {
          const int s = static_cast<int>((first_ + static_cast<unsigned>(i)) % count);
          auto load = [&](int x) { return stripes[x].holders + (stripes[x].kept_until > now); };
          if (load(s) < load(pick)) pick = s;
        }
      }
      ++stripes[pick].holders;
      c.stripe_ = pick;
      break;
    }
  }
  c.owner_ = shared_from_this();
  c.lock_ = lock;
  c.blob_ = naming::LockStripeBlobName(lock, c.stripe_);
  return c;
}

void LockStripes::Update(const std::string& lock, int stripe, bool leased, bool releasing) {
  std::lock_guard<std::mutex> guard(mu_);
  Stripe& st = stripes_[lock].at(static_cast<size_t>(stripe));
  st.leased_before = st.leased_before || leased;
  st.releasing = releasing;
}

void LockStripes::Give(const std::string& lock, int stripe, SteadyTime kept_until) {
  {
    std::lock_guard<std::mutex> guard(mu_);
    auto it = stripes_.find(lock);
    Stripe& st = it->second.at(static_cast<size_t>(stripe));
    --st.holders;
    st.releasing = false;
    if (kept_until > st.kept_until) st.kept_until = kept_until;
    // A store that touches many partitions remembers a bounded number of
    // idle ones (forgetting costs at most a lock blob created again).
    bool idle = true;
    for (const Stripe& x : it->second)
      idle = idle && x.holders == 0 && x.kept_until == SteadyTime{};
    if (idle && stripes_.size() > kRememberedPartitions) stripes_.erase(it);
  }
  released_.notify_all();
}

}  // namespace blobtable::internal
