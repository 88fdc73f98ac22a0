// SPDX-License-Identifier: Apache-2.0
// Secondary indexes on the local backend, with the fake clock: through the
// commit protocol (Local) and as one LMDB write transaction (Local_Atomic).
#include "tests/index_suite.h"

namespace blobtable::testing {
namespace {

INSTANTIATE_TEST_SUITE_P(Local, IndexTest, ::testing::Values(LocalBackend(), LocalAtomicBackend()),
                         PrintBackend);

}  // namespace
}  // namespace blobtable::testing
