// The coordination suite (coord_suite.cc) on Azurite, with curl (the suite
// forks holders; libcurl handles made after fork() are safe). Azurite keeps
// its own time, so waiting out a lease takes its 15 s: the suite is a
// program of its own so that ctest runs those waits beside other tests.
#include "tests/coord_suite.h"

namespace blobtable::testing {
namespace {

INSTANTIATE_TEST_SUITE_P(Azurite, CoordTest, ::testing::Values(AzuriteBackend("curl")),
                         PrintBackend);

}  // namespace
}  // namespace blobtable::testing
