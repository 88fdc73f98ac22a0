// Transactions on the local backend, with the fake clock.
#include "tests/txn_suite.h"

namespace blobtable::testing {
namespace {

INSTANTIATE_TEST_SUITE_P(Local, TxnTest, ::testing::Values(LocalBackend()), PrintBackend);

}  // namespace
}  // namespace blobtable::testing
