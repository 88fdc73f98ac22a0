// The stress tool's checkers catch what they claim to: hand-made histories,
// each breaking one guarantee (and one that breaks none).
#include <gtest/gtest.h>

#include "blobtable/store.h"
#include "tests/test_util.h"
#include "tools/stress/list_append.h"
#include "tools/stress/workload.h"

namespace blobtable::stress {
namespace {

using json = nlohmann::json;
using Lists = std::map<std::string, std::vector<std::string>>;

// Operations in time order: each starts at 10·n and ends at 10·n + 5.
class Hist {
 public:
  Hist& Add(const std::string& f, OpType type, std::vector<MicroOp> mops) {
    Op op;
    op.worker = 0;
    op.index = static_cast<int64_t>(ops_.size());
    op.f = f;
    op.type = type;
    op.start = 10 * ops_.size();
    op.end = type == OpType::kInfo ? UINT64_MAX : op.start + 5;
    op.mops = std::move(mops);
    ops_.push_back(std::move(op));
    return *this;
  }
  Hist& Append(const std::string& key, const std::string& x, OpType type = OpType::kOk) {
    return Add("append", type, {{"a", key, x}});
  }
  Hist& Read(const std::string& key, std::vector<std::string> list) {
    return Add("read", OpType::kOk, {{"r", key, list}});
  }
  // Every operation concurrent with every other (no real-time order).
  Hist& Overlapping() {
    for (Op& op : ops_) {
      op.start = 0;
      op.end = 1000;
    }
    return *this;
  }
  const std::vector<Op>& ops() const { return ops_; }

 private:
  std::vector<Op> ops_;
};

std::string Check(const Hist& h, const Lists& final_state) {
  return CheckListAppend(h.ops(), final_state);
}

TEST(ListAppendChecker, AValidHistoryPasses) {
  Hist h;
  h.Append("x", "1").Read("x", {"1"}).Append("x", "2");
  h.Add("txn", OpType::kOk, {{"r", "x", json::array({"1", "2"})}, {"a", "y", "3"}});
  h.Add("txn", OpType::kInfo, {{"a", "x", "4"}, {"a", "y", "5"}});  // unknown: landed wholly
  h.Add("txn", OpType::kInfo, {{"a", "x", "6"}});                   // unknown: did not land
  h.Append("y", "7", OpType::kFail);
  EXPECT_EQ(Check(h, {{"x", {"1", "2", "4"}}, {"y", {"3", "5"}}}), "");
}

TEST(ListAppendChecker, EachBrokenGuaranteeIsNamed) {
  struct Case {
    const char* name;
    Hist h;
    Lists final_state;
  };
  std::vector<Case> cases;
  cases.push_back({"lost", Hist().Append("x", "1").Append("x", "2"), {{"x", {"1"}}}});
  cases.push_back({"duplicate", Hist().Append("x", "1"), {{"x", {"1", "1"}}}});
  cases.push_back({"invented", Hist().Append("x", "1"), {{"x", {"1", "9"}}}});
  cases.push_back({"aborted read", Hist().Append("x", "1", OpType::kFail).Read("x", {"1"}),
                   {{"x", {}}}});
  cases.push_back({"not atomic",
                   Hist().Add("txn", OpType::kInfo, {{"a", "x", "1"}, {"a", "y", "2"}}),
                   {{"x", {"1"}}, {"y", {}}}});
  cases.push_back({"not a prefix", Hist().Append("x", "1").Append("x", "2").Read("x", {"2"}),
                   {{"x", {"1", "2"}}}});
  cases.push_back({"stale read", Hist().Append("x", "1").Read("x", {}), {{"x", {"1"}}}});
  // Write skew: each reads the key the other appends to, and sees it empty.
  Hist skew;
  skew.Add("txn", OpType::kOk, {{"r", "x", json::array()}, {"a", "y", "1"}});
  skew.Add("txn", OpType::kOk, {{"r", "y", json::array()}, {"a", "x", "2"}});
  cases.push_back({"not serializable", skew.Overlapping(), {{"x", {"2"}}, {"y", {"1"}}}});
  for (const Case& c : cases) {
    const std::string found = Check(c.h, c.final_state);
    EXPECT_EQ(found.rfind(c.name, 0), 0u) << "expected '" << c.name << "', got: " << found;
  }
}

// A query's rows are separate reads: seeing one row before a transaction
// and another after it is allowed (queries are not isolated), while the
// same pair inside one transaction is a cycle.
TEST(ListAppendChecker, QueriesAreNotIsolatedButTransactionsAre) {
  Hist h;
  h.Add("txn", OpType::kOk, {{"a", "x", "1"}, {"a", "y", "2"}});
  h.Add("query", OpType::kOk, {{"r", "x", json::array({"1"})}, {"r", "z", json::array()}});
  EXPECT_EQ(Check(h, {{"x", {"1"}}, {"y", {"2"}}, {"z", {}}}), "");
  // Transaction T reads x before U and y after U, where U appends to both.
  Hist fractured;
  fractured.Add("txn", OpType::kOk, {{"a", "x", "1"}, {"a", "y", "2"}});  // U
  fractured.Add("txn", OpType::kOk, {{"r", "x", json::array({"1"})}, {"r", "y", json::array()}});
  const std::string found = Check(fractured.Overlapping(), {{"x", {"1"}}, {"y", {"2"}}});
  EXPECT_EQ(found.rfind("not serializable", 0), 0u) << found;
}

class BankCheckerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    StoreOptions o;
    o.clock = &clock_;
    auto opened = Store::Open(dir_.path(), o);
    ASSERT_TRUE(opened.ok());
    store_ = std::move(*opened);
    bank_ = MakeBankWorkload();
    ASSERT_TRUE(bank_->Setup(*store_).ok());
  }
  // amount: a number, or "all" for a close.
  Op Transfer(const std::string& id, OpType type, const std::string& from, const std::string& to,
              const json& amount) {
    Op op;
    op.f = "transfer";
    op.type = type;
    op.mops = {{"t", id, json::array({from, to, amount})}};
    return op;
  }
  void Ledger(const std::string& id, const std::string& from, const std::string& to,
              int64_t amount) {
    auto ledger = store_->OpenTable("ledger");
    ASSERT_TRUE(ledger->Insert(Entity("t", id).Set("from", from).Set("to", to).Set("amount", amount))
                    .ok());
  }
  void SetBalance(const std::string& pk, const std::string& rk, int64_t balance) {
    ASSERT_TRUE(store_->OpenTable("bank")->Upsert(Entity(pk, rk).Set("balance", balance)).ok());
  }

  testing::FakeClock clock_;
  testing::TempDir dir_;
  std::unique_ptr<Store> store_;
  std::unique_ptr<Workload> bank_;
};

TEST_F(BankCheckerTest, ATransferAppliedWhollyPasses) {
  SetBalance("p0", "a", 90);
  SetBalance("p1", "b", 110);
  Ledger("t1", "p0/a", "p1/b", 10);
  EXPECT_EQ(bank_->Check({Transfer("t1", OpType::kOk, "p0/a", "p1/b", 10)}, *store_), "");
}

TEST_F(BankCheckerTest, HalfATransferIsCaught) {
  SetBalance("p0", "a", 90);  // debited, never credited: money vanished
  Ledger("t1", "p0/a", "p1/b", 10);
  EXPECT_NE(bank_->Check({Transfer("t1", OpType::kInfo, "p0/a", "p1/b", 10)}, *store_), "");
}

TEST_F(BankCheckerTest, AnAcknowledgedTransferWithoutItsLedgerRowIsCaught) {
  SetBalance("p0", "a", 90);
  SetBalance("p1", "b", 110);
  const std::string found = bank_->Check({Transfer("t1", OpType::kOk, "p0/a", "p1/b", 10)}, *store_);
  EXPECT_NE(found.find("ledger row is missing"), std::string::npos) << found;
}

TEST_F(BankCheckerTest, AClosedAccountHoldsNothingAndItsMoneyMovedWhole) {
  ASSERT_TRUE(store_->OpenTable("bank")->Delete("p0", "a", "*").ok());
  SetBalance("p1", "b", 200);
  Ledger("t1", "p0/a", "p1/b", 100);
  EXPECT_EQ(bank_->Check({Transfer("t1", OpType::kOk, "p0/a", "p1/b", "all")}, *store_), "");
}

TEST_F(BankCheckerTest, HalfACloseIsCaught) {
  ASSERT_TRUE(store_->OpenTable("bank")->Delete("p0", "a", "*").ok());  // deleted, never credited
  Ledger("t1", "p0/a", "p1/b", 100);
  const std::string found =
      bank_->Check({Transfer("t1", OpType::kInfo, "p0/a", "p1/b", "all")}, *store_);
  EXPECT_NE(found.find("not conserved"), std::string::npos) << found;
}

TEST_F(BankCheckerTest, ACommittedReadThatDoesNotAddUpIsCaught) {
  Op read;
  read.f = "read-all";
  read.type = OpType::kOk;
  for (int a = 0; a < 8; ++a) read.mops.push_back({"b", "acct", a == 0 ? 99 : 100});
  const std::string found = bank_->Check({read}, *store_);
  EXPECT_NE(found.find("not conserved"), std::string::npos) << found;
}

}  // namespace
}  // namespace blobtable::stress
