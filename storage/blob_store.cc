// SPDX-License-Identifier: Apache-2.0
// The BlobStore interface's defaults.
#include "blobtable/blob_store.h"

namespace blobtable {

std::string_view LeaseStateName(LeaseState s) {
  switch (s) {
    case LeaseState::kAvailable: return "available";
    case LeaseState::kLeased: return "leased";
    case LeaseState::kExpired: return "expired";
    case LeaseState::kBreaking: return "breaking";
    case LeaseState::kBroken: return "broken";
  }
  return "unknown";
}

BatchResult BlobStore::CommitBatch(const std::vector<BatchOp>& ops) {
  BatchResult out;
  out.failed = ops.size();
  out.status =
      Status::InvalidArgument("the backend at " + Location() + " cannot apply an atomic batch");
  return out;
}

}  // namespace blobtable
