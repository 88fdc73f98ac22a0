// SPDX-License-Identifier: Apache-2.0
// The commit protocol on a store without atomic batches
// (docs/transactions.md#the-protocol): three rounds of independent requests before Commit()
// returns,
//   1. a stripe of every partition lock leased (finite, renewed;
//      txn/lock_stripes.h); every entity given
//      its intent (both versions; for one only read or checked, the same
//      version twice) at the version the transaction expects (If-Match, or
//      If-None-Match "*" for an absent one: this validates its reads and
//      conditions);
//   2. every intent leased infinitely at its own version (a plain write
//      then meets the lease, and settles the transaction first);
//   3. the commit point: the record created committed (If-None-Match "*";
//      a resolver that decided "abort" first created it aborted);
// then, in the store's background threads (or before returning where the
// store finishes inline), the intents rewritten plain, the leases let go and
// the record deleted. All at once while nothing is busy; a busy lock or
// entity drops what lies after it in the global order of blob names and
// takes the rest one by one, waiting (so there is no deadlock).
#ifndef BLOBTABLE_TXN_PREWRITE_COMMIT_H_
#define BLOBTABLE_TXN_PREWRITE_COMMIT_H_

#include <vector>

#include "blobtable/txn.h"
#include "txn/txn_buffer.h"

namespace blobtable::internal {

Result<std::vector<CommittedWrite>> CommitPrewritten(TxnBuffer& buffer);

}  // namespace blobtable::internal

#endif  // BLOBTABLE_TXN_PREWRITE_COMMIT_H_
