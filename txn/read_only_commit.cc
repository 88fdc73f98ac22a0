// SPDX-License-Identifier: Apache-2.0
#include "txn/read_only_commit.h"

#include "txn/intent.h"
#include "txn/intent_resolver.h"
#include "txn/recovery.h"
#include "txn/txn_context.h"
#include "util/macros.h"
#include "util/parallel.h"

namespace blobtable::internal {
namespace {

// Whether intent `i` still holds for the entity as committed now.
Status Validate(const TxnContext& core, const Intent& i) {
  BlobStore& blobs = *core.blobs;
  int round = 0;
  for (int moved = 0; moved < 100; ++moved) {
    auto cur = blobs.Get(i.blob, {});
    if (cur.status().IsNotFound()) return Expectation(i, false, "");
    if (!cur.ok()) return cur.status().WithContext(i.Describe());
    const BlobProperties& p = cur->properties;
    if (!PrewritingTransaction(p).empty()) {
      BT_ASSIGN_OR_RETURN(std::optional<IntentView> view, ViewIntent(blobs, i.blob, *cur));
      if (!view) continue;  // moved on while looked at
      return Expectation(i, view->exists, view->exists ? view->etag : "", view->handles);
    }
    if (MarkingTransaction(p).empty()) return Expectation(i, true, p.etag, SameAsOf(p));
    // A mark of the first protocol (a store it wrote): settled as before.
    Status r = ResolveBlob(core.Resolver(), i.blob, p);
    if (!r.ok() && !r.IsBusy()) return r;
    if (r.IsBusy()) core.Backoff(&round);
  }
  return Status::Busy(i.Describe() + ": kept changing while it was validated");
}

}  // namespace

bool ProvedByReadingAgain(const TxnBuffer& buffer) {
  for (const auto& [blob, i] : buffer.intents) {
    if (i.writes()) return false;
    const bool names_a_version = i.read ? i.read_found : i.expect == Intent::Expect::kETag;
    if (!names_a_version) return false;
  }
  return true;
}

Result<std::vector<CommittedWrite>> CommitReadOnly(TxnBuffer& buffer) {
  BT_RETURN_IF_ERROR(ValidateOptions(buffer.options));
  const TxnContext& core = *buffer.core;
  std::vector<const Intent*> intents;
  for (const auto& [blob, intent] : buffer.intents) intents.push_back(&intent);
  std::vector<Status> valid(intents.size());
  ParallelFor(intents.size(), core.CommitWidth(),
              [&](size_t k) { valid[k] = Validate(core, *intents[k]); });
  for (const Status& s : valid) BT_RETURN_IF_ERROR(s);
  return std::vector<CommittedWrite>{};
}

}  // namespace blobtable::internal
