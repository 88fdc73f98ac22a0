// The commit protocol (README "Transactions"), run once per Commit().
#ifndef BLOBTABLE_TXN_COORDINATOR_H_
#define BLOBTABLE_TXN_COORDINATOR_H_

#include <vector>

#include "blobtable/txn.h"
#include "txn/txn_buffer.h"

namespace blobtable::internal {

// Commits `buffer`: CommittedWrites on success; see txn.h for the failures.
Result<std::vector<CommittedWrite>> CommitBuffer(TxnBuffer& buffer);

}  // namespace blobtable::internal

#endif  // BLOBTABLE_TXN_COORDINATOR_H_
