// The Table API suite: written once, run against every backend (local here,
// Azurite with each transport in azure_blob_store_test.cc).
#ifndef BLOBTABLE_TESTS_TABLE_SUITE_H_
#define BLOBTABLE_TESTS_TABLE_SUITE_H_

#include <gtest/gtest.h>

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "blobtable/store.h"
#include "tests/counting_blob_store.h"
#include "tests/test_util.h"

namespace blobtable::testing {

struct TableBackend {
  std::string name;
  // Opens a fresh store (its own container or directory) with `options`
  // (clock and wrapper set by the suite).
  std::function<Result<std::unique_ptr<Store>>(StoreOptions options)> open;
  bool controls_clock = true;  // false: the backend keeps its own time
};

inline std::string PrintBackend(const ::testing::TestParamInfo<TableBackend>& info) {
  return info.param.name;
}
inline void PrintTo(const TableBackend& b, std::ostream* os) { *os << b.name; }


class TableTest : public ::testing::TestWithParam<TableBackend> {
 protected:
  void SetUp() override;
  const Table& table() { return *table_; }
  std::map<std::string, int> counts() const;

  FakeClock clock_;
  std::shared_ptr<CountingBlobStore> counter_;
  std::unique_ptr<Store> store_;
  std::optional<Table> table_;
};

}  // namespace blobtable::testing

#endif  // BLOBTABLE_TESTS_TABLE_SUITE_H_
