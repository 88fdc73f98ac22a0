// SPDX-License-Identifier: Apache-2.0
// Azure's lease state machine and the lease checks of blob writes, as pure
// functions over a stored LeaseRecord. The local backend stores the record
// with each blob; keeping the rules here (not in the LMDB code) lets unit tests
// walk every state/action pair directly.
#ifndef BLOBTABLE_STORAGE_LEASE_RULES_H_
#define BLOBTABLE_STORAGE_LEASE_RULES_H_

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "blobtable/blob_store.h"
#include "blobtable/status.h"

namespace blobtable::internal::lease {

// The time leases are judged by on the local backend (invariant K1 of
// docs/protocol.md): Clock::SinceBoot in milliseconds, tagged in bits 47..62
// with a hash of Clock::BootId. Setting the wall clock moves it not at all,
// every process on the machine reads the same, and a time of another boot
// (or a wall-clock instant kept by a store written before this rule, tag 0)
// counts as passed: leases from before a reboot have run out.
int64_t BootTagOf(std::string_view boot_id);  // the tag of Clock::BootId
int64_t LeaseNowMs(int64_t boot_tag, std::chrono::milliseconds since_boot);

// Lease fields of one blob. Times are on the lease clock (LeaseNowMs).
struct LeaseRecord {
  LeaseState state = LeaseState::kAvailable;  // as last stored; see Refresh()
  std::string id;                             // empty when available
  int duration_seconds = 0;                   // 15..60 or kInfiniteLease
  int64_t expires_ms = 0;                     // kLeased with a finite duration
  int64_t broken_at_ms = 0;                   // kBreaking
};

// Advances time-driven transitions: leased -> expired, breaking -> broken.
void Refresh(LeaseRecord& lease, int64_t now_ms);

LeaseStatus StatusOf(const LeaseRecord& lease);          // after Refresh
LeaseDurationType DurationOf(const LeaseRecord& lease);  // after Refresh

// The lease actions. Each refreshes, checks, then mutates `lease` on success.
// `new_id` is the id to use when acquiring without a proposal.
Status Acquire(LeaseRecord& lease, int duration_seconds, std::string_view proposed_id,
               std::string_view new_id, int64_t now_ms);
Status Renew(LeaseRecord& lease, std::string_view id, int64_t now_ms);
Status Change(LeaseRecord& lease, std::string_view id, std::string_view proposed_id,
              int64_t now_ms);
Status Release(LeaseRecord& lease, std::string_view id, int64_t now_ms);
// On success sets *lease_time_seconds to the seconds until the lease is broken.
Status Break(LeaseRecord& lease, std::optional<int> break_period_seconds, int64_t now_ms,
             int* lease_time_seconds);

// Checks a write (Put, Delete, SetMetadata) presenting `lease_id` (may be
// empty). On success a write without a lease id clears an expired or broken
// lease (the blob becomes available), which is why Azure lets an expired lease
// be renewed only while the blob was not modified since.
Status CheckWrite(LeaseRecord& lease, std::string_view lease_id, int64_t now_ms);

// Argument checks shared by every backend (InvalidArgument, HTTP 400).
Status ValidateDuration(int duration_seconds);
Status ValidateBreakPeriod(std::optional<int> break_period_seconds);
Status ValidateProposedId(std::string_view id);

}  // namespace blobtable::internal::lease

#endif  // BLOBTABLE_STORAGE_LEASE_RULES_H_
