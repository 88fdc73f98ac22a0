// SPDX-License-Identifier: Apache-2.0
// Committing a transaction that writes nothing (only reads and checks): its
// reads are validated by reading every entity again, all at once, as a
// reader would (an intent counts as the version its record gives). Unique
// ETags make two collects that agree a proof: between the last read and
// the first re-read every entity was at the version the transaction saw, so
// it is serialised there. One round, one GET per entity, no lease, no
// record, and no waiting for a transaction in progress (a reader never
// waits; docs/transactions.md#the-protocol).
// Only a version found carries such an ETag: an entity found absent (or
// only checked absent, or present whatever its version) and so again may
// have been inserted and deleted between, so such a transaction commits
// as a writing one does, its reads as checks held at one instant.
#ifndef BLOBTABLE_TXN_READ_ONLY_COMMIT_H_
#define BLOBTABLE_TXN_READ_ONLY_COMMIT_H_

#include <vector>

#include "blobtable/txn.h"
#include "txn/txn_buffer.h"

namespace blobtable::internal {

// True if `buffer` writes no entity, and each entity's read or check names
// a version found (its ETag): reading again proves what it read.
bool ProvedByReadingAgain(const TxnBuffer& buffer);

// Commits a transaction for which ProvedByReadingAgain(): OK with no writes, or
// Conflict / NotFound saying which read or check no longer holds.
Result<std::vector<CommittedWrite>> CommitReadOnly(TxnBuffer& buffer);

}  // namespace blobtable::internal

#endif  // BLOBTABLE_TXN_READ_ONLY_COMMIT_H_
