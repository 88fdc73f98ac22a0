// SPDX-License-Identifier: Apache-2.0
// The examples (examples/, docs/api.md#examples) run as a user would run them:
// the embedded ones on a directory, the Azure ones on Azurite (started by
// the test), each checked by what it prints.
#include <gtest/gtest.h>

#include "tests/azurite.h"
#include "tests/shell.h"
#include "tests/test_util.h"

namespace blobtable::testing {
namespace {

class ExamplesTest : public ::testing::Test {
 protected:
  ShellRun Run(const char* program, const std::string& args) {
    return Shell(std::string(program) + " " + args);
  }
  std::string Dir() { return Quote(dir_.path() + "/store"); }
  TempDir dir_;
};

TEST_F(ExamplesTest, ReadModifyWriteCountsEveryRun) {
  for (int n = 1; n <= 3; ++n) {
    ShellRun r = Run(EXAMPLE_READ_MODIFY_WRITE, Dir());
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_EQ(r.out, "visits: " + std::to_string(n) + " (1 attempt)\n");
  }
}

TEST_F(ExamplesTest, ReadModifyWriteLosesNoIncrementUnderConcurrency) {
  // Four processes at once: every increment lands once (Conflicts retried).
  ShellRun r =
      Shell("for i in 1 2 3 4; do " + std::string(EXAMPLE_READ_MODIFY_WRITE) + " " + Dir() +
            " >/dev/null & done; wait; " + EXAMPLE_READ_MODIFY_WRITE + " " + Dir());
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out.rfind("visits: 5 (", 0), 0u) << r.out;
}

TEST_F(ExamplesTest, MultiTableTransactionMovesStock) {
  ShellRun r = Run(EXAMPLE_MULTI_TABLE_TRANSACTION, Dir());
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, "north 7, south 13\n");
}

TEST_F(ExamplesTest, FilteredQueryPagesThroughTheMatches) {
  ShellRun r = Run(EXAMPLE_FILTERED_QUERY, Dir());
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("order-1010 100\n"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("order-1011"), std::string::npos) << "not paid";
  EXPECT_NE(r.out.find("10 rows\n"), std::string::npos) << r.out;
}

TEST_F(ExamplesTest, COrdersWritesAndQueriesThroughTheCApi) {
  ShellRun r = Run(EXAMPLE_C_ORDERS, Dir());
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, "order-0001 99.50\n");
  ShellRun bad = Run(EXAMPLE_C_ORDERS, "'AccountName=x'");
  EXPECT_EQ(bad.code, 1);
  EXPECT_NE(bad.err.find("open: InvalidArgument"), std::string::npos) << bad.err;
}

TEST_F(ExamplesTest, AzureStoreOpensFromAConnectionString) {
  Azurite* a = Azurite::Get();
  ASSERT_NE(a, nullptr);
  ShellRun r = Run(EXAMPLE_AZURE_STORE, Quote(a->ConnectionString()));
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, "alice@example.com\n");
  ShellRun bad = Run(EXAMPLE_AZURE_STORE, "'AccountName=x'");
  EXPECT_EQ(bad.code, 1);
  EXPECT_FALSE(bad.err.empty());
}

TEST_F(ExamplesTest, OfflineCacheAnswersFromTheCacheFlaggedStale) {
  Azurite* a = Azurite::Get();
  ASSERT_NE(a, nullptr);
  ShellRun r = Run(EXAMPLE_OFFLINE_CACHE,
                   Quote(a->ConnectionString()) + " " + Quote(dir_.path() + "/cache"));
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, "max_users 500 (stale: from the cache, not checked)\n");
}

}  // namespace
}  // namespace blobtable::testing
