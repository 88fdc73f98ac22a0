// The Azure backend against Azurite, with each HTTP transport: the
// BlobStore conformance suite and Azure-specific behaviour.
#include <gtest/gtest.h>

#include "blobtable/store.h"
#include "remote/azure_blob_store.h"
#include "remote/azure_config.h"
#include "tests/azurite.h"
#include "tests/blob_store_conformance.h"
#include "tests/table_suite.h"
#include "tests/txn_suite.h"

namespace blobtable::testing {
namespace {

std::shared_ptr<BlobStore> MakeAzurite(const std::string& transport) {
  Azurite* azurite = Azurite::Get();
  if (azurite == nullptr) return nullptr;
  static int n = 0;
  auto config = ParseConnectionString(azurite->ConnectionString(transport));
  EXPECT_TRUE(config.ok()) << config.status().ToString();
  AzureStoreOptions o;
  o.config = *config;
  o.container = "conformance-" + transport + "-" + std::to_string(++n);
  o.transport = transport == "curl" ? std::shared_ptr<HttpTransport>(MakeCurlTransport({}))
                                    : std::shared_ptr<HttpTransport>(MakeCpprestTransport({}));
  auto store = OpenAzureBlobStore(o);
  EXPECT_TRUE(store.ok()) << store.status().ToString();
  return store.ok() ? *store : nullptr;
}

INSTANTIATE_TEST_SUITE_P(
    Azurite, BlobStoreConformance,
    ::testing::Values(
        BlobStoreTarget{"azurite_curl", [](FakeClock*) { return MakeAzurite("curl"); }, false, true},
        BlobStoreTarget{"azurite_cpprest", [](FakeClock*) { return MakeAzurite("cpprest"); }, false,
                        true}),
    PrintTarget);

Result<std::unique_ptr<Store>> OpenAzurite(StoreOptions options, const std::string& transport) {
  Azurite* azurite = Azurite::Get();
  if (azurite == nullptr) return Status::Unavailable("no Azurite");
  static int n = 0;
  options.container = "tables-" + transport + "-" + std::to_string(++n);
  return Store::Open(azurite->ConnectionString(transport), options);
}

INSTANTIATE_TEST_SUITE_P(
    Azurite, TableTest,
    ::testing::Values(
        TableBackend{"azurite_curl", [](StoreOptions o) { return OpenAzurite(o, "curl"); }, false},
        TableBackend{"azurite_cpprest", [](StoreOptions o) { return OpenAzurite(o, "cpprest"); },
                     false}),
    PrintBackend);

// Transactions on Azurite (curl: the suite forks coordinators, and libcurl
// handles made after fork() are safe where cpprest's thread pools are not).
INSTANTIATE_TEST_SUITE_P(
    Azurite, TxnTest,
    ::testing::Values(TxnBackend{"azurite_curl", false,
                                 [] { return Azurite::Get()->ConnectionString("curl"); }}),
    PrintTxnBackend);

}  // namespace
}  // namespace blobtable::testing
