// SPDX-License-Identifier: Apache-2.0
// Transactions on a backend that applies an atomic batch (the local store:
// one LMDB write transaction),
// docs/transactions.md#on-the-embedded-store-one-lmdb-write-transaction.
#ifndef BLOBTABLE_TXN_ATOMIC_COMMIT_H_
#define BLOBTABLE_TXN_ATOMIC_COMMIT_H_

#include <vector>

#include "blobtable/txn.h"
#include "txn/txn_buffer.h"

namespace blobtable::internal {

// True when `buffer` commits with CommitAtomically: its backend offers
// CommitBatch and TestingHooks::atomic_commits is on.
bool CommitsAtomically(const TxnBuffer& buffer);

// Commits `buffer` as one batch: every entity is read (another transaction's
// mark settled first), checked against what the transaction read and its
// conditions, then every write and check is applied at exactly the version
// read, all or nothing. No record, lock or lease. Same results as
// CommitPrewritten (txn.h); LockTimeout when an entity stays held by a
// coordinator's transaction or leased by another client past lock_timeout.
Result<std::vector<CommittedWrite>> CommitAtomically(TxnBuffer& buffer);

}  // namespace blobtable::internal

#endif  // BLOBTABLE_TXN_ATOMIC_COMMIT_H_
