// SPDX-License-Identifier: Apache-2.0
// `import` in process (tools/bulk.h CmdImport): batches on the embedded
// store, --stop-on-error writing nothing after a bad line, existing rows
// skipped in a batch, and an interrupt's summary.
#include <gtest/gtest.h>

#include <csignal>
#include <sstream>
#include <streambuf>

#include "blobtable/store.h"
#include "tests/test_util.h"
#include "tools/bulk.h"

namespace blobtable::testing {
namespace {

std::string Row(int i) {
  return "{\"PartitionKey\":\"p\",\"RowKey\":\"r" + std::to_string(1000 + i) +
         "\",\"n\":" + std::to_string(i) + "}\n";
}

class BulkImportTest : public ::testing::Test {
 protected:
  void SetUp() override {
    store_ = *Store::Open(dir_.path());
    table_ = *store_->OpenTable("orders");
  }
  int Import(const std::string& input, cli::BulkOptions o = {}) {
    o.quiet = false;
    std::istringstream in(input);
    err_.str("");
    return cli::CmdImport(store_.get(), table_, o, in, err_);
  }
  TempDir dir_;
  std::unique_ptr<Store> store_;
  Table table_;
  std::ostringstream err_;
};

TEST_F(BulkImportTest, ABatchOfThousandsGoesInAndExistingRowsAreSkipped) {
  std::string rows;
  for (int i = 0; i < 2500; ++i) rows += Row(i);
  ASSERT_EQ(Import(rows), 0) << err_.str();
  EXPECT_EQ(*table_.Count(), 2500);
  // Insert mode over rows half of which exist: each batch with an existing
  // row goes in row by row, the existing ones skipped.
  std::string more;
  for (int i = 2000; i < 3000; ++i) more += Row(i);
  cli::BulkOptions insert;
  insert.mode = "insert";
  ASSERT_EQ(Import(more, insert), 0) << err_.str();
  EXPECT_NE(err_.str().find("500 written, 500 skipped (existing), 0 failed"), std::string::npos)
      << err_.str();
  EXPECT_EQ(*table_.Count(), 3000);
}

TEST_F(BulkImportTest, StopOnErrorWritesNothingAfterTheFirstBadLine) {
  const std::string input = Row(0) + Row(1) + "{\"PartitionKey\":\"p\"\n" + Row(3) + Row(4);
  cli::BulkOptions stop;
  stop.stop_on_error = true;
  EXPECT_EQ(Import(input, stop), 2);
  EXPECT_EQ(*table_.Count(), 2);  // lines 1 and 2; nothing after line 3
  EXPECT_NE(err_.str().find("line 3: "), std::string::npos) << err_.str();
  EXPECT_NE(err_.str().find("stopped at the first failure (line 3)"), std::string::npos)
      << err_.str();
  // Without it the rest goes on, the bad line reported.
  EXPECT_EQ(Import(input), 2);
  EXPECT_EQ(*table_.Count(), 4);
  EXPECT_NE(err_.str().find("4 written, 0 skipped (existing), 1 failed"), std::string::npos)
      << err_.str();
}

// A batch that fails in the middle (a replace of a missing row) is written
// row by row: with --stop-on-error, in order and nothing after the failure.
TEST_F(BulkImportTest, StopOnErrorInABatchWritesNothingAfterTheFailedRow) {
  ASSERT_EQ(Import(Row(0) + Row(1)), 0) << err_.str();
  const std::string input = "{\"PartitionKey\":\"p\",\"RowKey\":\"r1000\",\"n\":50}\n" + Row(99) +
                            "{\"PartitionKey\":\"p\",\"RowKey\":\"r1001\",\"n\":77}\n";
  cli::BulkOptions o;
  o.mode = "replace";
  o.stop_on_error = true;
  EXPECT_EQ(Import(input, o), 3);  // NotFound
  EXPECT_EQ(*table_.Get("p", "r1000")->FindAs<int32_t>("n"), 50);
  EXPECT_EQ(*table_.Get("p", "r1001")->FindAs<int32_t>("n"), 1) << "written after the failure";
  EXPECT_NE(err_.str().find("line 2: "), std::string::npos) << err_.str();
  EXPECT_NE(err_.str().find("stopped at the first failure (line 2)"), std::string::npos)
      << err_.str();
}

// Lines, with SIGINT raised once `at` of them were handed out (as Ctrl-C
// arrives while the import reads).
class InterruptingInput : public std::streambuf {
 public:
  InterruptingInput(int lines, int at) : lines_(lines), at_(at) {}

 protected:
  int_type underflow() override {
    if (next_ == lines_) return traits_type::eof();
    if (next_ == at_) std::raise(SIGINT);
    line_ = Row(next_++);
    setg(line_.data(), line_.data(), line_.data() + line_.size());
    return traits_type::to_int_type(line_[0]);
  }

 private:
  const int lines_, at_;
  int next_ = 0;
  std::string line_;
};

TEST_F(BulkImportTest, AnInterruptStopsAfterTheLinesInHandWithTheSummary) {
  struct sigaction before {};
  sigaction(SIGINT, nullptr, &before);
  InterruptingInput source(5000, 1500);
  std::istream in(&source);
  cli::BulkOptions o;
  const int rc = cli::CmdImport(store_.get(), table_, o, in, err_);
  EXPECT_EQ(rc, 130);
  const int64_t n = *table_.Count();
  EXPECT_GE(n, 1500);
  EXPECT_LT(n, 5000);
  EXPECT_NE(err_.str().find("interrupted after line " + std::to_string(n)), std::string::npos)
      << err_.str();
  // The handler from before the import is back.
  struct sigaction after {};
  sigaction(SIGINT, nullptr, &after);
  EXPECT_EQ(after.sa_handler, before.sa_handler);
}

}  // namespace
}  // namespace blobtable::testing
