// SPDX-License-Identifier: Apache-2.0
// The bank workload: eight accounts in four partitions; transactions move
// money between two of them and record each transfer in a ledger table (in
// the same transaction), close an account by moving all of its money out
// and deleting it (a transfer to a closed account opens it again), or read
// every account; plain operations read one, merge a note into one, open an
// absent one with nothing in it, or delete one that holds nothing. A closed
// account holds nothing. Balances are written with every write kind:
// Replace and Merge with the ETag read, Upsert and UpsertMerge over a read
// the transaction validates, Insert. The checker: money is conserved in
// every committed read and at the end, and every transfer is all or
// nothing (the final balances are exactly the opening ones plus the ledger
// rows present, and a ledger row is present for every acknowledged
// transfer and for no failed one).
#include <map>

#include "devtools/stress/workload.h"

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
    if (dice < 55)
      Transfer(ctx);
    else if (dice < 80)
      ReadAll(ctx);
    else if (dice < 90)
      ReadOne(ctx);
    else
      PlainWrite(ctx);
  }

  std::string Check(const std::vector<Op>& history, Store& store) override;

 private:
  // Moves 1-20 from one account to another, or (one in twenty) all of it,
  // closing the source. Logged as [from, to, amount], "all" for a close.
  void Transfer(WorkerContext& ctx) {
    const int from = static_cast<int>(ctx.rng() % kAccounts);
    const int to = (from + 1 + static_cast<int>(ctx.rng() % (kAccounts - 1))) % kAccounts;
    const bool close = ctx.rng() % 20 == 0;
    const int64_t amount = 1 + static_cast<int64_t>(ctx.rng() % 20);
    const int64_t index = ctx.history.NextIndex();
    const std::string id = "w" + std::to_string(ctx.worker) + "g" + std::to_string(ctx.gen) + "n" +
                           std::to_string(index);
    const nlohmann::json how_much = close ? nlohmann::json("all") : nlohmann::json(amount);
    const std::vector<MicroOp> mops = {{"t", id, {Account(from), Account(to), how_much}}};
    ctx.history.Invoke("transfer", mops);
    auto done = [&](const Status& s) {
      ctx.history.Complete(index, "transfer", OutcomeOf(s), mops, s.ok() ? "" : s.ToString());
    };
    auto bank = ctx.store.OpenTable(kBank);
    auto ledger = ctx.store.OpenTable(kLedger);
    auto txn = ctx.store.Begin(ctx.txn);
    if (!txn.ok()) return done(txn.status());
    auto a = txn->Get(*bank, Pk(from), Rk(from));
    if (!a.ok()) return done(a.status());  // a closed account has nothing to send
    auto b = txn->Get(*bank, Pk(to), Rk(to));
    if (!b.ok() && !b.status().IsNotFound()) return done(b.status());
    const int64_t moved = close ? BalanceOf(*a) : amount;
    if (BalanceOf(*a) < moved) return done(Status::Conflict("insufficient funds"));
    // Closing only accounts that hold no more than they opened with keeps
    // the money from piling up in a few accounts over a long run.
    if (close && moved > kOpening) return done(Status::Conflict("too rich to close"));
    Entity row(kLedgerPartition, id);
    row.Set("from", Account(from)).Set("to", Account(to)).Set("amount", moved);
    Status s = close ? txn->Delete(*bank, Pk(from), Rk(from), a->etag())
                     : BufferBalance(*txn, *bank, from, BalanceOf(*a) - moved, a->etag(), ctx.rng);
    if (s.ok())
      s = BufferBalance(*txn, *bank, to, (b.ok() ? BalanceOf(*b) : 0) + moved,
                        b.ok() ? b->etag() : "", ctx.rng);
    if (s.ok()) s = txn->Insert(*ledger, row);
    done(s.ok() ? txn->Commit().status() : s);
  }

  // Buffers an account's new balance over the version the transaction read
  // (etag; "" for absent): Replace or Merge with the ETag, or Insert; or
  // Upsert or UpsertMerge, which the validated read keeps just as safe.
  static Status BufferBalance(blobtable::Transaction& txn, const Table& bank, int account,
                              int64_t balance, const std::string& etag, std::mt19937_64& rng) {
    Entity e(Pk(account), Rk(account));
    e.Set("balance", balance);
    switch (rng() % 4) {
      case 0: return txn.Upsert(bank, e);
      case 1: return txn.UpsertMerge(bank, e);
      case 2: return etag.empty() ? txn.Insert(bank, e) : txn.Replace(bank, e, etag);
      default: return etag.empty() ? txn.Insert(bank, e) : txn.Merge(bank, e, etag);
    }
  }

  // A plain write that moves no money: merge a note into an account ("n"),
  // open an absent one with nothing in it ("o"), or delete one that holds
  // nothing ("z"). The checker sees them only through the balances: a
  // write that broke its condition would create or destroy money.
  void PlainWrite(WorkerContext& ctx) {
    const int a = static_cast<int>(ctx.rng() % kAccounts);
    const char* const kinds[] = {"n", "o", "z"};
    const std::string kind = kinds[ctx.rng() % 3];
    const std::vector<MicroOp> mops = {{kind, Account(a), nullptr}};
    const int64_t index = ctx.history.Invoke("write", mops);
    auto bank = ctx.store.OpenTable(kBank);
    Status s;
    if (kind == "n") {
      Entity note(Pk(a), Rk(a));
      note.Set("note", "w" + std::to_string(ctx.worker) + "n" + std::to_string(index));
      s = bank->Merge(note, kAnyETag).status();
    } else if (kind == "o") {
      Entity empty(Pk(a), Rk(a));
      empty.Set("balance", int64_t{0});
      s = bank->Insert(empty).status();
    } else {
      auto e = bank->Get(Pk(a), Rk(a));
      s = !e.ok()              ? e.status()
          : BalanceOf(*e) != 0 ? Status::Conflict("the account holds money")
                               : bank->Delete(Pk(a), Rk(a), e->etag());
    }
    ctx.history.Complete(index, "write", OutcomeOf(s), mops, s.ok() ? "" : s.ToString());
  }

  // Every account in one transaction: a consistent snapshot once committed.
  void ReadAll(WorkerContext& ctx) {
    std::vector<MicroOp> mops;
    for (int a = 0; a < kAccounts; ++a) mops.push_back({"b", Account(a), nullptr});
    const int64_t index = ctx.history.Invoke("read-all", mops);
    auto bank = ctx.store.OpenTable(kBank);
    auto txn = ctx.store.Begin(ctx.txn);
    if (!txn.ok()) {
      ctx.history.Complete(index, "read-all", OpType::kFail, mops, txn.status().ToString());
      return;
    }
    for (int a = 0; a < kAccounts; ++a) {
      auto e = txn->Get(*bank, Pk(a), Rk(a));
      if (!e.ok() && !e.status().IsNotFound()) {
        ctx.history.Complete(index, "read-all", OpType::kFail, mops, e.status().ToString());
        return;
      }
      mops[a].value = e.ok() ? BalanceOf(*e) : 0;  // a closed account holds nothing
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
    if (!e.ok() && !e.status().IsNotFound()) {
      ctx.history.Complete(index, "read", OpType::kFail, mops, e.status().ToString());
      return;
    }
    mops[0].value = e.ok() ? BalanceOf(*e) : 0;
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
    if (!e.ok() && !e.status().IsNotFound())
      return "reading account " + Account(a) + ": " + e.status().ToString();
    balance[Account(a)] = e.ok() ? BalanceOf(*e) : 0;
    expected[Account(a)] = kOpening;
    total += balance[Account(a)];
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
      if (m.value.get<int64_t>() < 0) return "negative balance read: " + op.Describe();
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
    // A close ("all") moves whatever the account held.
    if (from == nullptr || to == nullptr || amount == nullptr || *from != t[0] || *to != t[1] ||
        (t[2].is_number() ? *amount != t[2].get<int64_t>() : *amount < 0))
      return "a ledger row that differs from its transfer: " + op.Describe();
    if (op.type == OpType::kFail)
      return "a failed transfer's ledger row is present: " + op.Describe();
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
  if (name == "queue") return MakeQueueWorkload();
  if (name == "lock") return MakeLockWorkload();
  if (name == "leader") return MakeLeaderWorkload();
  if (name == "index") return MakeIndexWorkload();
  if (name == "unique-race") return MakeUniqueRaceWorkload();
  return nullptr;
}

}  // namespace blobtable::stress
