// SPDX-License-Identifier: Apache-2.0
// The Table API suite: written once, run against every backend (local here,
// Azurite with each transport in azure_blob_store_test.cc).
#ifndef BLOBTABLE_TESTS_TABLE_SUITE_H_
#define BLOBTABLE_TESTS_TABLE_SUITE_H_

#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <optional>
#include <string>

#include "blobtable/store.h"
#include "tests/backend.h"
#include "testing/counting_blob_store.h"
#include "tests/test_util.h"

namespace blobtable::testing {

class TableTest : public ::testing::TestWithParam<Backend> {
 protected:
  void SetUp() override;
  const Table& table() { return *table_; }
  std::map<std::string, int> counts() const;
  // The request a plain write of kind `verb` ("put", "delete") counts as:
  // on a backend that applies atomic batches, one "batch" (the write and a
  // check of the table's index definitions: txn/definitions_check.h).
  std::string Write(const std::string& verb) const {
    return GetParam().atomic && !GetParam().azurite() ? "batch" : verb;
  }

  internal::FakeClock clock_;
  std::shared_ptr<internal::CountingBlobStore> counter_;
  std::unique_ptr<Store> store_;
  std::optional<Table> table_;
};

}  // namespace blobtable::testing

#endif  // BLOBTABLE_TESTS_TABLE_SUITE_H_
