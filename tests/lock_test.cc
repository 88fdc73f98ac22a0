// The Lock suite (lock_suite.cc) on the embedded store, with the fake clock.
#include "tests/lock_suite.h"

namespace blobtable::testing {
namespace {

INSTANTIATE_TEST_SUITE_P(Local, LockTest, ::testing::Values(LocalBackend()), PrintBackend);

}  // namespace
}  // namespace blobtable::testing
