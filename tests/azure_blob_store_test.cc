// SPDX-License-Identifier: Apache-2.0
// The Azure backend against Azurite, with each HTTP transport: the
// BlobStore conformance suite and Azure-specific behaviour.
#include <gtest/gtest.h>

#include "tests/backend.h"
#include "tests/blob_store_conformance.h"
#include "tests/api_suite.h"
#include "tests/table_suite.h"
#include "tests/txn_suite.h"

namespace blobtable::testing {
namespace {

INSTANTIATE_TEST_SUITE_P(Azurite, BlobStoreConformance,
                         ::testing::ValuesIn(AzuriteBackendPerTransport()), PrintBackend);

// The Table and transaction suites also run with the local cache on.
INSTANTIATE_TEST_SUITE_P(
    Azurite, TableTest,
    ::testing::ValuesIn(AzuriteBackendPerTransport({CachedAzuriteBackend("curl")})), PrintBackend);

// The API helpers (curl: the suite forks clients, as the transactions' does).
INSTANTIATE_TEST_SUITE_P(Azurite, ApiTest,
                         ::testing::Values(AzuriteBackend("curl"), CachedAzuriteBackend("curl")),
                         PrintBackend);

// Transactions on Azurite (curl: the suite forks coordinators, and libcurl
// handles made after fork() are safe where cpprest's thread pools are not).
INSTANTIATE_TEST_SUITE_P(Azurite, TxnTest,
                         ::testing::Values(AzuriteBackend("curl"), CachedAzuriteBackend("curl")),
                         PrintBackend);

// Without create_if_missing a write into a missing container fails
// NotFound instead of creating it.
TEST(AzureStoreOpen, WithoutCreateIfMissingAMissingContainerIsNotCreated) {
  Backend azurite = AzuriteBackend("curl");
  StoreOptions o;
  o.container = FreshContainer("nocreate");
  o.create_if_missing = false;
  auto store = OpenBackendStore(azurite, o);
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  auto t = (*store)->OpenTable("orders");
  EXPECT_TRUE(t->Get("p", "r").status().IsNotFound());
  auto put = t->Insert(Entity("p", "r"));
  EXPECT_EQ(put.status().code(), Code::kNotFound) << put.status().ToString();
  EXPECT_NE(put.status().message().find("does not exist"), std::string::npos);
  o.create_if_missing = true;
  auto creating = OpenBackendStore(azurite, o);
  ASSERT_TRUE(creating.ok());
  EXPECT_TRUE((*creating)->OpenTable("orders")->Insert(Entity("p", "r")).ok());
}

}  // namespace
}  // namespace blobtable::testing
