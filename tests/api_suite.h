// SPDX-License-Identifier: Apache-2.0
// The API helpers suite: Table::Update and Store::RunTransaction (with real
// contention from threads and processes), Replace/Merge at the entity's own
// ETag, Scan, the RowKey prefix, GetMany, ListTables, and Begin's checks.
// Written once, run on every backend (local in api_test.cc, Azurite in
// azure_blob_store_test.cc).
#ifndef BLOBTABLE_TESTS_API_SUITE_H_
#define BLOBTABLE_TESTS_API_SUITE_H_

#include <gtest/gtest.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "blobtable/store.h"
#include "tests/backend.h"
#include "testing/counting_blob_store.h"
#include "tests/test_util.h"

namespace blobtable::testing {

class ApiTest : public ::testing::TestWithParam<Backend> {
 protected:
  void SetUp() override;
  // Another store on the same container (another client), without counting.
  std::unique_ptr<Store> OpenAnother() const;
  // The same on the real clock: for contention between threads or
  // processes. (On the fake clock every waiter's backoff moves time for
  // all, so a holder that is not scheduled sees its lock timeout pass in
  // no real time at all.)
  std::unique_ptr<Store> OpenOnRealClock() const;
  const Table& table() { return *table_; }

  internal::FakeClock clock_;
  StoreOptions options_;
  std::shared_ptr<internal::CountingBlobStore> counter_;
  std::unique_ptr<Store> store_;
  std::optional<Table> table_;
  std::vector<std::string> warnings_;
};

}  // namespace blobtable::testing

#endif  // BLOBTABLE_TESTS_API_SUITE_H_
