// SPDX-License-Identifier: Apache-2.0
// `import` in process (tools/bulk.h CmdImport): batches on the embedded
// store, --stop-on-error writing nothing after a bad line, existing rows
// skipped in a batch, and an interrupt's summary.
#include <gtest/gtest.h>

#include <csignal>
#include <limits>
#include <sstream>
#include <streambuf>

#include "blobtable/store.h"
#include "tests/test_util.h"
#include "tools/bulk.h"
#include "tools/row_source.h"

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
  // The summary counts the bad line among the rows read (the review's: it
  // said "2 rows" with --stop-on-error).
  EXPECT_EQ(Import(input, stop), 2);
  EXPECT_NE(err_.str().find("import: 3 rows"), std::string::npos) << err_.str();
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

// Issue 56 item 1: one bad row failed its whole batch of 1,000 (every line
// blamed, and --stop-on-error named the batch's first line).
// 100,000 rows; 20,000 in a sanitizer build (CI's, where the 100,000 take
// 77 s of its critical path): the same batches and halving, fewer of them.
#if defined(BLOBTABLE_SANITIZED)
constexpr int kManyRows = 20000;
#else
constexpr int kManyRows = 100000;
#endif

TEST_F(BulkImportTest, OneBadRowAmongAHundredThousandIsTheOnlyLineReported) {
  std::string input;
  const int bad = kManyRows / 2 + 499;  // line 50,500 of 100,000
  for (int i = 0; i < kManyRows; ++i)
    input += i == bad ? "{\"PartitionKey\":\"p\",\"RowKey\":\"bad\",\"s\":\"" +
                            std::string(40000, 'x') + "\"}\n"
                      : Row(i);
  EXPECT_EQ(Import(input), 2);
  EXPECT_EQ(*table_.Count(), kManyRows - 1);
  EXPECT_NE(err_.str().find("blobtable: line " + std::to_string(bad + 1) + ": "), std::string::npos)
      << err_.str();
  EXPECT_EQ(err_.str().find("blobtable: line"), err_.str().rfind("blobtable: line"))
      << "more than one line reported";
  EXPECT_NE(
      err_.str().find(std::to_string(kManyRows - 1) + " written, 0 skipped (existing), 1 failed"),
      std::string::npos)
      << err_.str();
}

// An entity over 1 MiB passes ValidateEntity (the size is known once it is
// encoded): only the write refuses it, and halving the batch finds it.
std::string Huge(const std::string& row_key) {
  std::string line = "{\"PartitionKey\":\"p\",\"RowKey\":\"" + row_key + "\"";
  for (int i = 0; i < 40; ++i)
    line += ",\"p" + std::to_string(i) + "\":\"" + std::string(30000, 'x') + "\"";
  return line + "}\n";
}

TEST_F(BulkImportTest, RowsOnlyTheWriteRefusesAreFoundByHalvingTheBatch) {
  std::string input;
  for (int i = 0; i < 2500; ++i)
    input += i == 699 || i == 1899 ? Huge("h" + std::to_string(i)) : Row(i);
  EXPECT_EQ(Import(input), 2);
  EXPECT_EQ(*table_.Count(), 2498);
  const std::string err = err_.str();
  EXPECT_NE(err.find("blobtable: line 700: "), std::string::npos) << err;
  EXPECT_NE(err.find("blobtable: line 1900: "), std::string::npos) << err;
  EXPECT_NE(err.find("2498 written, 0 skipped (existing), 2 failed"), std::string::npos) << err;
}

TEST_F(BulkImportTest, StopOnErrorNamesTheBadLineAndWritesEveryLineBefore) {
  cli::BulkOptions stop;
  stop.stop_on_error = true;
  for (const std::string& bad :
       {std::string("{\"PartitionKey\":\"p\",\"RowKey\":\"a/b\"}\n"), Huge("huge")}) {
    std::string input;
    for (int i = 0; i < 1000; ++i) input += i == 599 ? bad : Row(i);
    EXPECT_EQ(Import(input, stop), 2);
    EXPECT_EQ(*table_.Count(), 599);
    EXPECT_NE(err_.str().find("blobtable: line 600: "), std::string::npos) << err_.str();
    EXPECT_NE(err_.str().find("stopped at the first failure (line 600)"), std::string::npos)
        << err_.str();
    ASSERT_TRUE(table_.DeleteWhere({}).ok());
  }
}

// The review's reproducer (issue 56): the same key twice failed the batch
// and blamed every line of it.
TEST_F(BulkImportTest, TheSameRowTwiceIsWrittenInOrder) {
  const std::string twice =
      Row(1) + Row(2) + "{\"PartitionKey\":\"p\",\"RowKey\":\"r1001\",\"n\":7}\n";
  cli::BulkOptions insert;
  insert.mode = "insert";
  EXPECT_EQ(Import(twice, insert), 0) << err_.str();
  EXPECT_NE(err_.str().find("2 written, 1 skipped (existing), 0 failed"), std::string::npos)
      << err_.str();
  EXPECT_EQ(*table_.Get("p", "r1001")->FindAs<int32_t>("n"), 1);
  EXPECT_EQ(Import(twice), 0) << err_.str();  // upsert: the last line wins
  EXPECT_EQ(*table_.Get("p", "r1001")->FindAs<int32_t>("n"), 7);
}

// Item 4: CSV and TSV in; export csv|tsv -> import gives the same entities,
// every type included (an Int64, a DateTime, a string that looks like a
// number, an empty string, NaN, a value with quotes, commas, a line break).
TEST_F(BulkImportTest, CsvAndTsvExportsImportAsTheSameEntities) {
  Entity e("p", "r1");
  e.Set("s", "hello").Set("n", int32_t{5}).Set("big", int64_t{7}).Set("d", 2.5);
  e.Set("whole", 121.0).Set("nan", std::numeric_limits<double>::quiet_NaN()).Set("ok", true);
  e.Set("when", *ParseDateTime("2024-05-01T12:00:00Z")).Set("looks", "42").Set("empty", "");
  e.Set("id", Guid{"0f8fad5b-d9cb-469f-a165-70867728950e"}).Set("raw", Binary{{0, 1, 2}});
  ASSERT_TRUE(table_.Insert(e).ok());
  Entity odd("p", "r,2");
  odd.Set("s", "a \"quoted\", multi\nline\tand tab\\").Set("n", int32_t{-3});
  odd.Set("crlf", "a\r\nb");  // the review's: its \r was lost on the way back
  ASSERT_TRUE(table_.Insert(odd).ok());
  for (const std::string format : {"csv", "tsv"}) {
    std::ostringstream out, err;
    cli::BulkOptions o;
    o.format = format;
    ASSERT_EQ(cli::CmdExport(table_, {}, o, out, err), 0) << err.str();
    auto copy = *store_->OpenTable("copy" + format);
    std::istringstream in(out.str());
    ASSERT_EQ(cli::CmdImport(store_.get(), copy, o, in, err), 0) << err.str() << out.str();
    for (const Entity& want : {e, odd}) {
      auto got = copy.Get(want.partition_key(), want.row_key());
      ASSERT_TRUE(got.ok()) << format << ": " << got.status().ToString();
      EXPECT_EQ(got->properties().size(), want.properties().size()) << format;
      for (const auto& [name, value] : want.properties()) {
        const PropertyValue* v = got->Find(name);
        ASSERT_NE(v, nullptr) << format << " lost " << name;
        EXPECT_EQ(TypeOf(*v), TypeOf(value)) << format << " " << name;
        if (name != "nan") {
          EXPECT_TRUE(*v == value) << format << " " << name;
        }
      }
    }
  }
}

TEST_F(BulkImportTest, CsvTypesComeFromTypeColumnsTheOptionOrTheText) {
  cli::BulkOptions o;
  o.format = "csv";
  o.types = "at:datetime";
  EXPECT_EQ(Import("PartitionKey,RowKey,n,big,big@odata.type,at,name,flag,x\n"
                   "p,r1,5,9000000000,Edm.Int64,2024-01-01T00:00:00Z,007,true,1.5\n",
                   o),
            0)
      << err_.str();
  auto got = *table_.Get("p", "r1");
  EXPECT_EQ(TypeOf(*got.Find("n")), EdmType::kInt32);
  EXPECT_EQ(*got.FindAs<int64_t>("big"), 9000000000);
  EXPECT_EQ(TypeOf(*got.Find("at")), EdmType::kDateTime);
  EXPECT_EQ(*got.FindAs<std::string>("name"), "007");  // not a JSON number: a string
  EXPECT_EQ(*got.FindAs<bool>("flag"), true);
  EXPECT_EQ(*got.FindAs<double>("x"), 1.5);
}

TEST_F(BulkImportTest, CsvErrorsNameTheLineAndTheColumn) {
  cli::BulkOptions o;
  o.format = "csv";
  EXPECT_EQ(Import("PartitionKey,RowKey,n\np,r1,1\np,r2,9000000000\np,r3,\"open\n", o), 2);
  EXPECT_EQ(*table_.Count(), 1);
  EXPECT_NE(err_.str().find("line 3: InvalidArgument: column 3 (n): integer 9000000000 does not "
                            "fit Edm.Int32"),
            std::string::npos)
      << err_.str();
  EXPECT_NE(err_.str().find("line 4: InvalidArgument: a quoted field is not closed"),
            std::string::npos)
      << err_.str();
  EXPECT_EQ(Import("PartitionKey,n\np,1\n", o), 2);
  EXPECT_NE(err_.str().find("line 1 (the header): no RowKey column"), std::string::npos)
      << err_.str();
  EXPECT_EQ(Import("PartitionKey,RowKey\np,r,extra\n", o), 2);
  EXPECT_NE(err_.str().find("line 2: InvalidArgument: 3 cells; the header has 2"),
            std::string::npos)
      << err_.str();
}

// The review's: after a quoted cell over 8 MiB was refused, reading went on
// inside it, and its lines that looked like rows were written (727
// entities that never were rows); or its closing quote opened a field
// that swallowed the rest of the input.
TEST_F(BulkImportTest, ACsvRecordOverTheLimitIsLeftOutWholeAndTheRestGoesOn) {
  std::string ghosts;
  for (int i = 0; i < 9000; ++i)
    ghosts += "ghost,g" + std::to_string(i) + "," + std::string(1000, 'x') + "\n";
  cli::BulkOptions o;
  o.format = "csv";
  EXPECT_EQ(Import("PartitionKey,RowKey,s\np,1,a\np,2,\"" + ghosts + "end\"\np,3,b\n", o), 2);
  EXPECT_EQ(*table_.Count(), 2) << err_.str();  // p/1 and p/3, no ghost
  EXPECT_TRUE(table_.Get("p", "3").ok());
  EXPECT_NE(err_.str().find("line 3: InvalidArgument: the record is over 8388608 bytes"),
            std::string::npos)
      << err_.str().substr(0, 2000);
  EXPECT_NE(err_.str().find("2 written, 0 skipped (existing), 1 failed"), std::string::npos);
  // A BOM before the header (as spreadsheets save CSV) is not part of it.
  EXPECT_EQ(Import("\xEF\xBB\xBFPartitionKey,RowKey\np,4\n", o), 0) << err_.str();
}

// Item 3: a line is read only up to the most one entity can take; a longer
// one is refused without being held whole, and the next lines go on.
TEST_F(BulkImportTest, AnOverlongLineIsRefusedAndTheRestGoesOn) {
  const std::string input = Row(0) + std::string(cli::kMaxRowInputBytes + 10, 'x') + "\n" + Row(2);
  EXPECT_EQ(Import(input), 2);
  EXPECT_EQ(*table_.Count(), 2);
  EXPECT_NE(err_.str().find("line 2: InvalidArgument: the line is over 8388608 bytes"),
            std::string::npos)
      << err_.str();
}

}  // namespace
}  // namespace blobtable::testing
