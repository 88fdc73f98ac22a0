// SPDX-License-Identifier: Apache-2.0
// The commit protocol on a store without atomic batches
// (docs/transactions.md#the-protocol): four rounds of independent requests
// before Commit() returns,
//   1. the record created pending (If-None-Match "*"), naming the entities
//      and the stripes, and a stripe of every partition lock leased
//      (finite, renewed; txn/lock_stripes.h);
//   2. every entity given its intent (both versions; for one only read or
//      checked, the same version twice) at the version the transaction
//      expects (If-Match, or If-None-Match "*" for an absent one: this
//      validates its reads and conditions), beside a look at the record;
//   3. every intent leased infinitely at its own version (a plain write
//      then meets the lease, and settles the transaction first);
//   4. the commit point: the record rewritten committed, If-Match its
//      pending version (a decider that made it aborted first fences it);
// then, in the store's background threads (or before returning where the
// store finishes inline), the intents rewritten plain, the leases let go and
// the record deleted. All at once while nothing is busy; a busy stripe
// drops the record and the stripes after it, a busy entity the intents
// after it, each taking the rest one by one in the global order (stripes,
// then entities, each by name), waiting (so there is no deadlock).
#ifndef BLOBTABLE_TXN_PREWRITE_COMMIT_H_
#define BLOBTABLE_TXN_PREWRITE_COMMIT_H_

#include <vector>

#include "blobtable/txn.h"
#include "txn/txn_buffer.h"

namespace blobtable::internal {

Result<std::vector<CommittedWrite>> CommitPrewritten(TxnBuffer& buffer);

}  // namespace blobtable::internal

#endif  // BLOBTABLE_TXN_PREWRITE_COMMIT_H_
