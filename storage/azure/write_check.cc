// SPDX-License-Identifier: Apache-2.0
// The write-id idempotency check (storage/azure/write_check.h).
#include "storage/azure/write_check.h"

#include "storage/azure/responses.h"
#include "storage/conditions.h"
#include "util/macros.h"
#include "util/random.h"
#include "util/stored_format.h"

namespace blobtable::internal::azure {

namespace {

const std::string* WriteIdOn(const HttpResponse& head) {
  return head.Header(std::string("x-ms-meta-") + kWriteIdMetadata);
}

// The blob's properties if it carries `write_id` now; nullopt otherwise.
std::optional<WriteResult> OursOnBlob(const Outcome& head, const std::string& write_id) {
  if (!head.response.ok() || head.response->status != 200) return std::nullopt;
  const std::string* id = WriteIdOn(*head.response);
  if (id == nullptr || *id != write_id) return std::nullopt;
  auto p = PropertiesOf(*head.response);
  if (!p.ok()) return std::nullopt;
  return WriteResult{p->etag, p->last_modified};
}

// A write refused (409/412) after an attempt whose answer was lost: ours if
// our write id is on the blob now, else unknown.
Result<WriteResult> RefusedAfterLostAnswer(std::string_view name, int status,
                                           const std::string& write_id, const HeadNow& head) {
  Outcome now = head();
  if (now.response.ok() && now.response->status == 200) {
    const std::string* id = WriteIdOn(*now.response);
    if (id != nullptr && *id == write_id) {
      BT_ASSIGN_OR_RETURN(BlobProperties p, PropertiesOf(*now.response));
      return WriteResult{p.etag, p.last_modified};
    }
  }
  std::string why = !now.response.ok()            ? now.response.status().message()
                    : now.response->status == 200 ? "another write is on the blob now"
                                                  : "the blob is gone now (HTTP " +
                                                        std::to_string(now.response->status) + ")";
  return Status::OutcomeUnknown("blob '" + std::string(name) +
                                "': an earlier attempt's answer was lost and the retry "
                                "was refused (HTTP " +
                                std::to_string(status) +
                                "); whether the write was applied "
                                "could not be told: " +
                                why);
}

}  // namespace

std::string WriteIdFor(const AccessConditions& c) { return HasConditions(c) ? NewGuid() : ""; }

std::optional<Status> UnknownIfMaybeApplied(std::string_view name, const Outcome& out,
                                            bool conditional) {
  if (!conditional) return std::nullopt;
  const bool unanswered = !out.response.ok() || IsRetryableHttpStatus(out.response->status);
  if (!unanswered || !(out.unseen || MayHaveBeenApplied(out.response))) return std::nullopt;
  return Status::OutcomeUnknown(
      "blob '" + std::string(name) + "': no answer after " + std::to_string(out.attempts) +
      " attempt(s), one of which may have been applied; whether the write was applied is not "
      "known (" +
      (out.response.ok() ? "HTTP " + std::to_string(out.response->status)
                         : out.response.status().message()) +
      ")");
}

Result<WriteResult> FinishWrite(std::string_view name, const Outcome& out,
                                const std::string& write_id, int success_status,
                                const HeadNow& head, std::string_view container) {
  if (auto unknown = UnknownIfMaybeApplied(name, out, !write_id.empty())) {
    // No answer, after an attempt that may have been applied: our write
    // id on the blob says it was.
    if (auto ours = OursOnBlob(head(), write_id)) return *ours;
    return *unknown;
  }
  if (!out.response.ok()) return out.response.status();
  const HttpResponse& r = *out.response;
  if (r.status == success_status) return WriteResultOf(r);
  if ((r.status == 412 || r.status == 409) && out.unseen && !write_id.empty())
    return RefusedAfterLostAnswer(name, r.status, write_id, head);
  return BlobErrorOf(r, name, container);
}

Status FinishDelete(std::string_view name, const Outcome& out, bool conditional,
                    const std::function<bool()>& gone_now, std::string_view container) {
  if (auto unknown = UnknownIfMaybeApplied(name, out, conditional)) return *unknown;
  if (!out.response.ok()) return out.response.status();
  const HttpResponse& r = *out.response;
  if (r.status == 202) return Status::OK();
  // A retried delete refused after an attempt whose answer was lost: that
  // attempt may have deleted the blob. Unconditional and gone (404): gone,
  // as asked. Conditional: whether that attempt applied is not known.
  // Azure answers the re-sent If-Match of a deleted blob 404, Azurite 412
  // (ConditionNotMet); a 412 with the blob there again can be a blob
  // created after that attempt deleted the one it named. A write id
  // cannot tell (a delete leaves nothing behind).
  if (out.unseen && r.status == 404 && !conditional) return Status::OK();
  if (out.unseen && (r.status == 404 || r.status == 412) && conditional) {
    const bool gone = r.status == 404 || gone_now();
    return Status::OutcomeUnknown(
        "blob '" + std::string(name) +
        "': an earlier attempt's answer was lost and the retry "
        "was refused (HTTP " +
        std::to_string(r.status) + "); " +
        (gone ? "the blob is gone now: deleted by that attempt, or by someone else"
              : "another version is there now: written before that attempt, or after it "
                "deleted the one named"));
  }
  return BlobErrorOf(r, name, container);
}

Result<LeaseResult> FinishLease(std::string_view op, std::string_view name, const Outcome& out,
                                int success_status, const HeadNow& head,
                                std::string_view container) {
  if (!out.response.ok()) return out.response.status();
  const HttpResponse& r = *out.response;
  const bool release = op == "LEASE-RELEASE";
  if (r.status == success_status) return LeaseResultOf(r, !release && op != "LEASE-BREAK");
  // A retried release that finds no lease: the lost first attempt released it.
  if (release && r.status == 409 && out.unseen) {
    Outcome now = head();
    if (now.response.ok() && now.response->status == 200) {
      BT_ASSIGN_OR_RETURN(BlobProperties p, PropertiesOf(*now.response));
      if (p.lease_state == LeaseState::kAvailable)
        return LeaseResult{"", p.etag, p.last_modified, 0};
    }
  }
  return BlobErrorOf(r, name, container, "lease on ");
}

}  // namespace blobtable::internal::azure
