// SPDX-License-Identifier: Apache-2.0
// Secondary indexes on Azurite: the commit protocol with real leases, and
// through the cache (a program of its own, so that CI runs it beside
// azure_blob_store_test rather than after it).
#include "tests/index_suite.h"

namespace blobtable::testing {
namespace {

INSTANTIATE_TEST_SUITE_P(Azurite, IndexTest,
                         ::testing::Values(AzuriteBackend("curl"), CachedAzuriteBackend("curl")),
                         PrintBackend);

}  // namespace
}  // namespace blobtable::testing
