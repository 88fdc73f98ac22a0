// SPDX-License-Identifier: Apache-2.0
// Transactions on the local backend, with the fake clock: through the lease
// coordinator (Local), and as one LMDB write transaction (Local_Atomic).
#include "tests/txn_suite.h"

namespace blobtable::testing {
namespace {

INSTANTIATE_TEST_SUITE_P(Local, TxnTest, ::testing::Values(LocalBackend(), LocalAtomicBackend()),
                         PrintBackend);

}  // namespace
}  // namespace blobtable::testing
