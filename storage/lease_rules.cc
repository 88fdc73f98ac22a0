// SPDX-License-Identifier: Apache-2.0
#include "storage/lease_rules.h"

#include <algorithm>

#include "storage/storage_errors.h"
#include "util/digest.h"

namespace blobtable::internal::lease {
namespace {

Status Err409(std::string_view code, std::string detail) {
  return StorageError(409, code, std::move(detail));
}

Status Err412(std::string_view code, std::string detail) {
  return StorageError(412, code, std::move(detail));
}

void Grant(LeaseRecord& lease, std::string_view id, int duration_seconds, int64_t now_ms) {
  lease.state = LeaseState::kLeased;
  lease.id = std::string(id);
  lease.duration_seconds = duration_seconds;
  lease.expires_ms =
      duration_seconds == kInfiniteLease ? 0 : now_ms + duration_seconds * int64_t{1000};
  lease.broken_at_ms = 0;
}

void Clear(LeaseRecord& lease) { lease = LeaseRecord{}; }

constexpr int kBootShift = 47;  // 2^47 ms since boot: over 4,000 years

int64_t BootTag(int64_t t) { return t >> kBootShift; }

// Whether lease time `t` has come: it has, if it is of another boot.
bool Passed(int64_t t, int64_t now_ms) { return BootTag(t) != BootTag(now_ms) || now_ms >= t; }

}  // namespace

int64_t BootTagOf(std::string_view boot_id) {
  return 1 + static_cast<int64_t>(Crc32(boot_id) % 0xFFFF);
}

int64_t LeaseNowMs(int64_t boot_tag, std::chrono::milliseconds since_boot) {
  return (boot_tag << kBootShift) | (since_boot.count() & ((int64_t{1} << kBootShift) - 1));
}

void Refresh(LeaseRecord& lease, int64_t now_ms) {
  if (lease.state == LeaseState::kLeased && lease.duration_seconds != kInfiniteLease &&
      Passed(lease.expires_ms, now_ms)) {
    lease.state = LeaseState::kExpired;
  }
  if (lease.state == LeaseState::kBreaking && Passed(lease.broken_at_ms, now_ms)) {
    lease.state = LeaseState::kBroken;
  }
}

LeaseStatus StatusOf(const LeaseRecord& lease) {
  return lease.state == LeaseState::kLeased || lease.state == LeaseState::kBreaking
             ? LeaseStatus::kLocked
             : LeaseStatus::kUnlocked;
}

LeaseDurationType DurationOf(const LeaseRecord& lease) {
  if (lease.state != LeaseState::kLeased) return LeaseDurationType::kNone;
  return lease.duration_seconds == kInfiniteLease ? LeaseDurationType::kInfinite
                                                  : LeaseDurationType::kFixed;
}

Status ValidateDuration(int duration_seconds) {
  if (duration_seconds == kInfiniteLease || (duration_seconds >= 15 && duration_seconds <= 60))
    return Status::OK();
  return StorageError(400, "InvalidHeaderValue",
                      "lease duration must be 15..60 seconds or -1 (infinite), got " +
                          std::to_string(duration_seconds));
}

Status ValidateBreakPeriod(std::optional<int> period) {
  if (!period || (*period >= 0 && *period <= 60)) return Status::OK();
  return StorageError(400, "InvalidHeaderValue",
                      "lease break period must be 0..60 seconds, got " + std::to_string(*period));
}

Status ValidateProposedId(std::string_view id) {
  // Azure requires a GUID string; we accept any printable token up to 64
  // characters (Azure SDKs always send GUIDs) but refuse what cannot travel
  // in an HTTP header.
  if (id.size() > 64)
    return StorageError(400, "InvalidHeaderValue", "lease id longer than 64 characters");
  for (unsigned char c : id)
    if (c <= 0x20 || c >= 0x7f)
      return StorageError(400, "InvalidHeaderValue", "lease id has a non-printable character");
  return Status::OK();
}

Status Acquire(LeaseRecord& lease, int duration_seconds, std::string_view proposed_id,
               std::string_view new_id, int64_t now_ms) {
  Refresh(lease, now_ms);
  std::string_view id = proposed_id.empty() ? new_id : proposed_id;
  switch (lease.state) {
    case LeaseState::kLeased:
      if (proposed_id.empty() || proposed_id != lease.id)
        return Err409("LeaseAlreadyPresent", "there is already a lease present");
      break;  // re-acquire with the same id: restart with the new duration
    case LeaseState::kBreaking:
      if (proposed_id.empty() || proposed_id != lease.id)
        return Err409("LeaseAlreadyPresent", "there is already a lease present");
      return Err409("LeaseIsBreakingAndCannotBeAcquired",
                    "the lease is breaking and cannot be acquired until it is broken");
    case LeaseState::kAvailable:
    case LeaseState::kExpired:
    case LeaseState::kBroken: break;
  }
  Grant(lease, id, duration_seconds, now_ms);
  return Status::OK();
}

Status Renew(LeaseRecord& lease, std::string_view id, int64_t now_ms) {
  Refresh(lease, now_ms);
  switch (lease.state) {
    case LeaseState::kAvailable:
      return Err409("LeaseIdMismatchWithLeaseOperation",
                    "there is no lease on the blob (released, or modified after it expired)");
    case LeaseState::kLeased:
    case LeaseState::kExpired:
      if (id != lease.id)
        return Err409("LeaseIdMismatchWithLeaseOperation",
                      "the lease id does not match the lease on the blob");
      Grant(lease, id, lease.duration_seconds, now_ms);
      return Status::OK();
    case LeaseState::kBreaking:
    case LeaseState::kBroken:
      if (id != lease.id)
        return Err409("LeaseIdMismatchWithLeaseOperation",
                      "the lease id does not match the lease on the blob");
      return Err409("LeaseIsBrokenAndCannotBeRenewed",
                    "the lease was broken and cannot be renewed");
  }
  return Status::Internal("unknown lease state");
}

Status Change(LeaseRecord& lease, std::string_view id, std::string_view proposed_id,
              int64_t now_ms) {
  Refresh(lease, now_ms);
  switch (lease.state) {
    case LeaseState::kLeased:
      // Changing to the id already held succeeds, so a retried change is safe.
      if (id != lease.id && proposed_id != lease.id)
        return Err409("LeaseIdMismatchWithLeaseOperation",
                      "the lease id does not match the lease on the blob");
      lease.id = std::string(proposed_id);
      return Status::OK();
    case LeaseState::kBreaking:
      if (id != lease.id)
        return Err409("LeaseIdMismatchWithLeaseOperation",
                      "the lease id does not match the lease on the blob");
      return Err409("LeaseIsBreakingAndCannotBeChanged", "the lease is breaking");
    case LeaseState::kAvailable:
    case LeaseState::kExpired:
    case LeaseState::kBroken:
      return Err409("LeaseNotPresentWithLeaseOperation", "there is currently no active lease");
  }
  return Status::Internal("unknown lease state");
}

Status Release(LeaseRecord& lease, std::string_view id, int64_t now_ms) {
  Refresh(lease, now_ms);
  if (lease.state == LeaseState::kAvailable || id != lease.id)
    return Err409("LeaseIdMismatchWithLeaseOperation",
                  "the lease id does not match the lease on the blob");
  Clear(lease);
  return Status::OK();
}

Status Break(LeaseRecord& lease, std::optional<int> period, int64_t now_ms,
             int* lease_time_seconds) {
  Refresh(lease, now_ms);
  *lease_time_seconds = 0;
  switch (lease.state) {
    case LeaseState::kAvailable:
      return Err409("LeaseNotPresentWithLeaseOperation", "there is currently no lease");
    case LeaseState::kExpired:
    case LeaseState::kBroken:
      lease.state = LeaseState::kBroken;
      lease.broken_at_ms = now_ms;
      return Status::OK();
    case LeaseState::kLeased:
    case LeaseState::kBreaking: {
      // The lease breaks after the requested period, but never later than it
      // would have ended anyway (the end of a fixed lease, or of a break
      // already under way); with no period, a fixed lease runs out its time.
      int64_t end_ms = INT64_MAX;
      if (lease.state == LeaseState::kBreaking)
        end_ms = lease.broken_at_ms;
      else if (lease.duration_seconds != kInfiniteLease)
        end_ms = lease.expires_ms;
      int64_t at_ms;
      if (period)
        at_ms = std::min<int64_t>(end_ms, now_ms + *period * int64_t{1000});
      else
        at_ms = end_ms == INT64_MAX ? now_ms : end_ms;
      if (at_ms <= now_ms) {
        lease.state = LeaseState::kBroken;
        lease.broken_at_ms = now_ms;
        return Status::OK();
      }
      lease.state = LeaseState::kBreaking;
      lease.broken_at_ms = at_ms;
      *lease_time_seconds = static_cast<int>((at_ms - now_ms + 999) / 1000);
      return Status::OK();
    }
  }
  return Status::Internal("unknown lease state");
}

Status CheckWrite(LeaseRecord& lease, std::string_view lease_id, int64_t now_ms) {
  Refresh(lease, now_ms);
  switch (lease.state) {
    case LeaseState::kLeased:
    case LeaseState::kBreaking:
      if (lease_id.empty())
        return Err412("LeaseIdMissing",
                      "there is currently a lease on the blob and no lease id was specified");
      if (lease_id != lease.id)
        return Err412("LeaseIdMismatchWithBlobOperation",
                      "the lease id specified did not match the lease id for the blob");
      return Status::OK();
    case LeaseState::kAvailable:
      if (!lease_id.empty())
        return Err412("LeaseNotPresentWithBlobOperation",
                      "there is currently no lease on the blob");
      return Status::OK();
    case LeaseState::kExpired:
    case LeaseState::kBroken:
      if (!lease_id.empty())
        return Err412(
            "LeaseLost",
            "a lease id was specified, but the lease for the blob has " +
                std::string(lease.state == LeaseState::kExpired ? "expired" : "been broken"));
      Clear(lease);
      return Status::OK();
  }
  return Status::Internal("unknown lease state");
}

}  // namespace blobtable::internal::lease
