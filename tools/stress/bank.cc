// The bank workload: eight accounts in four partitions; transactions move
// money between two of them and record each transfer in a ledger table (in
// the same transaction), or read every account; plain reads read one. The
// checker: money is conserved in every committed read and at the end, and
// every transfer is all or nothing (the final balances are exactly the
// opening ones plus the ledger rows present, and a ledger row is present
// for every acknowledged transfer and for no failed one).
#include <map>

#include "tools/stress/workload.h"

namespace blobtable::stress {
namespace {

constexpr int kAccounts = 8;
constexpr int64_t kOpening = 100;
const char* const kBank = "bank";
const char* const kLedger = "ledger";
const char* const kLedgerPartition = "t";

std::string Account(int a) { return "p" + std::to_string(a / 2) + "/" + (a % 2 ? "b" : "a"); }
std::string Pk(int a) { return "p" + std::to_string(a / 2); }
std::string Rk(int a) { return a % 2 ? "b" : "a"; }

int64_t BalanceOf(const Entity& e) {
  const int64_t* b = e.FindAs<int64_t>("balance");
  return b == nullptr ? INT64_MIN : *b;
}

class Bank final : public Workload {
 public:
  std::string name() const override { return "bank"; }

  Status Setup(Store& store) override {
    auto bank = store.OpenTable(kBank);
    if (!bank.ok()) return bank.status();
    for (int a = 0; a < kAccounts; ++a) {
      Entity e(Pk(a), Rk(a));
      e.Set("balance", kOpening);
      auto put = bank->Upsert(e);
      if (!put.ok()) return put.status();
    }
    return Status::OK();
  }

  void RunOne(WorkerContext& ctx) override {
    const uint64_t dice = ctx.rng() % 100;
    if (dice < 60) Transfer(ctx);
    else if (dice < 85) ReadAll(ctx);
    else ReadOne(ctx);
  }

  std::string Check(const std::vector<Op>& history, Store& store) override;

 private:
  void Transfer(WorkerContext& ctx) {
    const int from = static_cast<int>(ctx.rng() % kAccounts);
    const int to = (from + 1 + static_cast<int>(ctx.rng() % (kAccounts - 1))) % kAccounts;
    const int64_t amount = 1 + static_cast<int64_t>(ctx.rng() % 20);
    const int64_t index = ctx.history.NextIndex();
    const std::string id =
        "w" + std::to_string(ctx.worker) + "g" + std::to_string(ctx.gen) + "n" + std::to_string(index);
    const std::vector<MicroOp> mops = {{"t", id, {Account(from), Account(to), amount}}};
    ctx.history.Invoke("transfer", mops);
    auto done = [&](OpType type, const Status& s) {
      ctx.history.Complete(index, "transfer", type, mops, s.ok() ? "" : s.ToString());
    };
    auto bank = ctx.store.OpenTable(kBank);
    auto ledger = ctx.store.OpenTable(kLedger);
    auto txn = ctx.store.Begin(ctx.txn);
    auto a = txn->Get(*bank, Pk(from), Rk(from));
    auto b = a.ok() ? txn->Get(*bank, Pk(to), Rk(to)) : a;
    if (!a.ok() || !b.ok()) return done(OpType::kFail, !a.ok() ? a.status() : b.status());
    if (BalanceOf(*a) < amount) return done(OpType::kFail, Status::Conflict("insufficient funds"));
    Entity debit = *a, credit = *b;
    debit.Set("balance", BalanceOf(*a) - amount);
    credit.Set("balance", BalanceOf(*b) + amount);
    Entity row(kLedgerPartition, id);
    row.Set("from", Account(from)).Set("to", Account(to)).Set("amount", amount);
    Status s = txn->Replace(*bank, debit, a->etag());
    if (s.ok()) s = txn->Replace(*bank, credit, b->etag());
    if (s.ok()) s = txn->Insert(*ledger, row);
    if (!s.ok()) return done(OpType::kFail, s);
    auto committed = txn->Commit();
    done(OutcomeOf(committed.status()), committed.status());
  }

  // Every account in one transaction: a consistent snapshot once committed.
  void ReadAll(WorkerContext& ctx) {
    std::vector<MicroOp> mops;
    for (int a = 0; a < kAccounts; ++a) mops.push_back({"b", Account(a), nullptr});
    const int64_t index = ctx.history.Invoke("read-all", mops);
    auto bank = ctx.store.OpenTable(kBank);
    auto txn = ctx.store.Begin(ctx.txn);
    for (int a = 0; a < kAccounts; ++a) {
      auto e = txn->Get(*bank, Pk(a), Rk(a));
      if (!e.ok()) {
        ctx.history.Complete(index, "read-all", OpType::kFail, mops, e.status().ToString());
        return;
      }
      mops[a].value = BalanceOf(*e);
    }
    auto committed = txn->Commit();
    if (!committed.ok())
      for (MicroOp& m : mops) m.value = nullptr;  // an uncommitted read proves nothing
    ctx.history.Complete(index, "read-all", committed.ok() ? OpType::kOk : OpType::kFail, mops,
                         committed.ok() ? "" : committed.status().ToString());
  }

  void ReadOne(WorkerContext& ctx) {
    const int a = static_cast<int>(ctx.rng() % kAccounts);
    std::vector<MicroOp> mops = {{"b", Account(a), nullptr}};
    const int64_t index = ctx.history.Invoke("read", mops);
    auto e = ctx.store.OpenTable(kBank)->Get(Pk(a), Rk(a));
    if (!e.ok()) {
      ctx.history.Complete(index, "read", OpType::kFail, mops, e.status().ToString());
      return;
    }
    mops[0].value = BalanceOf(*e);
    ctx.history.Complete(index, "read", OpType::kOk, mops);
  }
};

std::string Bank::Check(const std::vector<Op>& history, Store& store) {
  auto bank = store.OpenTable(kBank);
  auto ledger = store.OpenTable(kLedger);
  std::map<std::string, int64_t> balance, expected;
  int64_t total = 0;
  for (int a = 0; a < kAccounts; ++a) {
    auto e = bank->Get(Pk(a), Rk(a), ReadPolicy::Validate());
    if (!e.ok()) return "reading account " + Account(a) + ": " + e.status().ToString();
    balance[Account(a)] = BalanceOf(*e);
    expected[Account(a)] = kOpening;
    total += BalanceOf(*e);
  }
  std::map<std::string, Entity> rows;  // ledger rows by transfer id
  QueryOptions q;
  q.partition_key = kLedgerPartition;
  do {
    auto page = ledger->Query(q);
    if (!page.ok()) return "reading the ledger: " + page.status().ToString();
    for (Entity& e : page->entities) rows.emplace(e.row_key(), std::move(e));
    q.continuation = page->continuation;
  } while (!q.continuation.empty());

  std::map<std::string, const Op*> transfer_of;
  for (const Op& op : history) {
    for (const MicroOp& m : op.mops) {
      if (m.kind == "t") transfer_of[m.key] = &op;
      if (op.type != OpType::kOk || m.kind != "b" || !m.value.is_number()) continue;
      if (m.value.get<int64_t>() < 0)
        return "negative balance read: " + op.Describe();
    }
    if (op.f == "read-all" && op.type == OpType::kOk) {
      int64_t sum = 0;
      for (const MicroOp& m : op.mops) sum += m.value.is_number() ? m.value.get<int64_t>() : 0;
      if (sum != kAccounts * kOpening)
        return "money not conserved in a committed read (" + std::to_string(sum) +
               "): " + op.Describe();
    }
  }
  for (const auto& [id, row] : rows) {
    auto it = transfer_of.find(id);
    if (it == transfer_of.end()) return "a ledger row '" + id + "' that no transfer wrote";
    const Op& op = *it->second;
    const nlohmann::json& t = op.mops[0].value;
    const std::string* from = row.FindAs<std::string>("from");
    const std::string* to = row.FindAs<std::string>("to");
    const int64_t* amount = row.FindAs<int64_t>("amount");
    if (from == nullptr || to == nullptr || amount == nullptr || *from != t[0] || *to != t[1] ||
        *amount != t[2].get<int64_t>())
      return "a ledger row that differs from its transfer: " + op.Describe();
    if (op.type == OpType::kFail) return "a failed transfer's ledger row is present: " + op.Describe();
    expected[*from] -= *amount;
    expected[*to] += *amount;
  }
  for (const auto& [id, op] : transfer_of)
    if (op->type == OpType::kOk && rows.count(id) == 0)
      return "an acknowledged transfer's ledger row is missing: " + op->Describe();
  if (total != kAccounts * kOpening)
    return "money not conserved at the end: " + std::to_string(total);
  for (const auto& [account, b] : balance)
    if (b != expected[account])
      return "not all or nothing: account " + account + " holds " + std::to_string(b) +
             ", but its opening balance and the ledger say " + std::to_string(expected[account]);
  return "";
}

}  // namespace

std::unique_ptr<Workload> MakeBankWorkload() { return std::make_unique<Bank>(); }

std::unique_ptr<Workload> MakeWorkload(const std::string& name) {
  if (name == "bank") return MakeBankWorkload();
  if (name == "list-append") return MakeListAppendWorkload();
  return nullptr;
}

}  // namespace blobtable::stress
