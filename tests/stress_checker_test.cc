// SPDX-License-Identifier: Apache-2.0
// The stress tool's checkers catch what they claim to: hand-made histories,
// each breaking one guarantee (and one that breaks none).
#include <gtest/gtest.h>

#include "blobtable/store.h"
#include "tests/test_util.h"
#include "devtools/stress/coord_check.h"
#include "devtools/stress/list_append.h"
#include "devtools/stress/workload.h"

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
  // Operation `index` ends at `end` instead.
  Hist& EndAt(size_t index, uint64_t end) {
    ops_.at(index).end = end;
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
  cases.push_back(
      {"aborted read", Hist().Append("x", "1", OpType::kFail).Read("x", {"1"}), {{"x", {}}}});
  cases.push_back({"not atomic",
                   Hist().Add("txn", OpType::kInfo, {{"a", "x", "1"}, {"a", "y", "2"}}),
                   {{"x", {"1"}}, {"y", {}}}});
  cases.push_back({"not a prefix",
                   Hist().Append("x", "1").Append("x", "2").Read("x", {"2"}),
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
    ASSERT_TRUE(
        ledger->Insert(Entity("t", id).Set("from", from).Set("to", to).Set("amount", amount)).ok());
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
  const std::string found =
      bank_->Check({Transfer("t1", OpType::kOk, "p0/a", "p1/b", 10)}, *store_);
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

// A queue history: an item is named by its body; ids are "id-<body>".
class QueueHist : public Hist {
 public:
  QueueHist& Enqueue(const std::string& body, OpType type = OpType::kOk) {
    Add("enqueue", type, {{"e", body, type == OpType::kOk ? json("id-" + body) : json()}});
    return *this;
  }
  QueueHist& Deliver(const std::string& body, int count, const std::string& id = "") {
    Add("dequeue", OpType::kOk,
        {{"d", body, {{"id", id.empty() ? "id-" + body : id}, {"count", count}}}});
    return *this;
  }
  QueueHist& Complete(const std::string& body, OpType type) {
    Add("complete", type, {{"c", body, "id-" + body}});
    return *this;
  }
};

QueueEnd Queued(std::map<std::string, int> queued, std::map<std::string, int> dead = {}) {
  QueueEnd end;
  for (const auto& [body, count] : queued) end.queued["id-" + body] = {body, count};
  for (const auto& [body, count] : dead) end.dead["id-" + body] = {body, count};
  return end;
}

TEST(QueueChecker, AValidHistoryPasses) {
  QueueHist h;
  h.Enqueue("a").Deliver("a", 1).Complete("a", OpType::kOk);
  // Its lease ran out; delivered again, and that Complete's answer lost.
  h.Enqueue("b").Deliver("b", 1).Deliver("b", 2).Complete("b", OpType::kFail);
  h.Complete("b", OpType::kInfo);
  h.Enqueue("c").Deliver("c", 1);                                  // still queued, taken
  h.Enqueue("d", OpType::kInfo);                                   // never made
  h.Enqueue("e").Deliver("e", 1).Deliver("e", 2).Deliver("e", 3);  // a dead letter
  h.Enqueue("f", OpType::kFail);
  h.Enqueue("g", OpType::kInfo).Deliver("g", 1, "id-g").Complete("g", OpType::kOk);
  EXPECT_EQ(CheckQueue(h.ops(), Queued({{"c", 1}}, {{"e", 3}}), 3), "");
  const std::string summary = MakeQueueWorkload()->Summary(h.ops());
  EXPECT_NE(summary.find("completes 2 ok / 1 failed / 1 unknown"), std::string::npos) << summary;
}

TEST(QueueChecker, EachBrokenGuaranteeIsNamed) {
  struct Case {
    const char* name;
    QueueHist h;
    QueueEnd end;
  };
  std::vector<Case> cases;
  QueueHist twice;  // the key invariant: exactly one Complete says OK
  twice.Enqueue("a").Deliver("a", 1).Deliver("a", 2);
  twice.Complete("a", OpType::kOk).Complete("a", OpType::kOk);
  cases.push_back({"completed OK twice", twice, {}});
  QueueHist lost;
  lost.Enqueue("a").Deliver("a", 1).Complete("a", OpType::kFail);
  cases.push_back({"lost", lost, {}});
  cases.push_back({"lost", QueueHist().Enqueue("a"), {}});  // never even delivered
  QueueHist ghost;
  ghost.Deliver("x", 1);
  cases.push_back({"an item no enqueue made", ghost, {}});
  cases.push_back({"an item no enqueue made", QueueHist(), Queued({{"x", 0}})});
  cases.push_back({"an item whose enqueue failed", QueueHist().Enqueue("a", OpType::kFail),
                   Queued({}, {{"a", 3}})});
  QueueHist early;
  early.Deliver("a", 1).Enqueue("a");
  cases.push_back({"delivered before it was enqueued", early, Queued({{"a", 1}})});
  QueueHist again;
  again.Enqueue("a").Deliver("a", 1).Complete("a", OpType::kOk).Deliver("a", 2);
  cases.push_back({"delivered after it was completed OK", again, {}});
  QueueHist stays;
  stays.Enqueue("a").Deliver("a", 1).Complete("a", OpType::kOk);
  cases.push_back({"completed OK, yet still in the queue", stays, Queued({{"a", 1}})});
  QueueHist two_ids;
  two_ids.Enqueue("a").Deliver("a", 1, "id-other");
  cases.push_back({"one enqueue made several items", two_ids, Queued({{"a", 1}})});
  QueueHist same_count;
  same_count.Enqueue("a").Deliver("a", 1).Deliver("a", 1);
  cases.push_back(
      {"two deliveries of one item with dequeue count 1", same_count, Queued({{"a", 2}})});
  cases.push_back(
      {"a dead letter dequeued only 1 times", QueueHist().Enqueue("a"), Queued({}, {{"a", 1}})});
  for (const Case& c : cases) {
    const std::string found = CheckQueue(c.h.ops(), c.end, 3);
    EXPECT_EQ(found.rfind(c.name, 0), 0u) << "expected '" << c.name << "', got: " << found;
  }
}

// What the first Azurite runs through the fault proxy found: an enqueue
// whose create was applied but whose answer was held; the item is
// delivered and completed, then the create's retry makes it again, and it
// is delivered and completed a second time. The checker names the enqueue
// that outlasted the first completion.
TEST(QueueChecker, AnItemMadeAgainAfterItWasCompletedIsCaught) {
  QueueHist h;
  h.Enqueue("a").Deliver("a", 1).Complete("a", OpType::kOk).Deliver("a", 1);
  h.Complete("a", OpType::kOk).EndAt(0, 35);  // the enqueue returned between them
  const std::string found = CheckQueue(h.ops(), {}, 3);
  EXPECT_EQ(found.rfind("completed OK twice", 0), 0u) << found;
  EXPECT_NE(found.find("ended only after that completion"), std::string::npos) << found;
}

// A lock history: holds' acquisitions and fenced increments.
class LockHist : public Hist {
 public:
  LockHist& Acquire(int64_t token) {
    Add("acquire", OpType::kOk, {{"l", "stress", token}});
    return *this;
  }
  LockHist& Incr(int64_t token, int64_t read, int64_t read_token, OpType type = OpType::kOk) {
    Add("incr", type,
        {{"i",
          "counter",
          {{"token", token}, {"read", read}, {"read_token", read_token}, {"stale", false}}}});
    return *this;
  }
};

TEST(LockChecker, AValidHistoryPasses) {
  LockHist h;
  h.Acquire(1).Incr(1, 0, 0).Incr(1, 1, 1);
  h.Acquire(2).Incr(2, 2, 1);
  h.Incr(1, 3, 2, OpType::kFail);  // a stale holder, fenced
  h.Incr(2, 3, 2, OpType::kInfo);  // unknown: landed, or not
  h.Acquire(3);                    // a hold that wrote nothing
  EXPECT_EQ(CheckLock(h.ops(), {3, 2}), "");
  EXPECT_EQ(CheckLock(h.ops(), {4, 2}), "");
  const std::string summary = MakeLockWorkload()->Summary(h.ops());
  EXPECT_NE(summary.find("acquires 3 ok / 0 failed / 0 unknown; increments 3 ok / 1 failed / 1 "
                         "unknown"),
            std::string::npos)
      << summary;
  // A stale holder's write that lands before any newer holder wrote is
  // allowed: nothing newer is recorded yet.
  LockHist stale;
  stale.Acquire(1).Acquire(2).Incr(1, 0, 0).Incr(2, 1, 1);
  EXPECT_EQ(CheckLock(stale.ops(), {2, 2}), "");
}

TEST(LockChecker, EachBrokenGuaranteeIsNamed) {
  struct Case {
    const char* name;
    LockHist h;
    CounterEnd end;
  };
  std::vector<Case> cases;
  cases.push_back({"two acquisitions got token 1", LockHist().Acquire(1).Acquire(1), {}});
  cases.push_back(
      {"a token not larger than an earlier acquisition's", LockHist().Acquire(2).Acquire(1), {}});
  cases.push_back({"FencedUpdate accepted an older token after a newer holder wrote",
                   LockHist().Incr(2, 0, 0).Incr(1, 1, 2),
                   {2, 2}});
  cases.push_back({"an increment lost: two increments that were OK both read 0",
                   LockHist().Incr(1, 0, 0).Incr(2, 0, 0),
                   {1, 2}});
  cases.push_back(
      {"the counter's token went back", LockHist().Incr(2, 0, 0).Incr(1, 1, 1), {2, 2}});
  cases.push_back(
      {"an increment read value 1 with token 3", LockHist().Incr(2, 0, 0).Incr(3, 1, 3), {2, 3}});
  cases.push_back({"increments lost", LockHist().Incr(1, 0, 0).Incr(1, 1, 1), {1, 1}});
  cases.push_back({"the counter is 3 at the end: more than",
                   LockHist().Incr(1, 0, 0).Incr(1, 1, 1, OpType::kInfo),
                   {3, 1}});
  cases.push_back({"the counter's token went back: it is 1 at the end",
                   LockHist().Incr(1, 0, 0).Incr(2, 1, 1),
                   {2, 1}});
  for (const Case& c : cases) {
    const std::string found = CheckLock(c.h.ops(), c.end);
    EXPECT_EQ(found.rfind(c.name, 0), 0u) << "expected '" << c.name << "', got: " << found;
  }
}

}  // namespace
}  // namespace blobtable::stress
