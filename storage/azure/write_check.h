// SPDX-License-Identifier: Apache-2.0
// What a write's answer means when an attempt before it may have been
// applied and its answer was lost (docs/azure.md#write-ids): the write-id
// idempotency check. A conditional write carries a write id in its
// metadata; when its retry is refused, or it gives up, after such an
// attempt, a HEAD of the blob tells whether our write landed. What cannot be
// told is OutcomeUnknown, never Conflict: a caller would apply its change
// twice.
#ifndef BLOBTABLE_STORAGE_AZURE_WRITE_CHECK_H_
#define BLOBTABLE_STORAGE_AZURE_WRITE_CHECK_H_

#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "blobtable/blob_store.h"
#include "storage/azure/retry.h"

namespace blobtable::internal::azure {

// A new write id for a write with conditions; empty without (retrying an
// unconditional write is harmless).
std::string WriteIdFor(const AccessConditions& c);

// The blob as it is now: a HEAD, sent within what is left of the write's
// budget.
using HeadNow = std::function<Outcome()>;

// A conditional write that gives up (no answer, or a status worth retrying,
// on its last attempt) after an attempt that may have been applied (the last
// one included): whether it was is not known, and a caller that took it for
// undone would retry into a false Conflict, or apply its change twice.
// Unconditional writes stay Unavailable (nullopt): retrying them is harmless.
std::optional<Status> UnknownIfMaybeApplied(std::string_view name, const Outcome& out,
                                            bool conditional);

// Put's (201) and SetMetadata's (200) result. After a lost answer (given
// up, or refused 409/412), our write id on the blob says the write was
// applied; anything else (another write id, no blob, no answer, no time
// left for the HEAD) leaves it OutcomeUnknown.
Result<WriteResult> FinishWrite(std::string_view name, const Outcome& out,
                                const std::string& write_id, int success_status,
                                const HeadNow& head, std::string_view container);

// Delete's result (202). Retried after a lost answer and refused: without a
// condition (or lease id), a 404 is gone as asked; with one, whether that
// attempt applied is unknown (a delete leaves no write id behind).
// `gone_now` reads whether the blob is missing now (a HEAD of its own).
Status FinishDelete(std::string_view name, const Outcome& out, bool conditional,
                    const std::function<bool()>& gone_now, std::string_view container);

// A lease action's result (`op` "LEASE-ACQUIRE", ...; `success_status` its
// answer). A retried release that finds no lease (409) after a lost answer:
// released by that attempt, once a HEAD shows no lease.
Result<LeaseResult> FinishLease(std::string_view op, std::string_view name, const Outcome& out,
                                int success_status, const HeadNow& head,
                                std::string_view container);

}  // namespace blobtable::internal::azure

#endif  // BLOBTABLE_STORAGE_AZURE_WRITE_CHECK_H_
