// SPDX-License-Identifier: Apache-2.0
#include "devtools/stress/sim/sim_actor.h"

namespace blobtable::sim {
namespace {
using std::chrono::milliseconds;
using Outcome = HistEntry::Outcome;
using Kind = HistOp::Kind;
}  // namespace

Actor::Actor(int id, uint64_t seed, World& world, SimScheduler& sched, Store* atomic)
    : id_(id),
      rng_(seed * 1000 + id),
      world_(world),
      sched_(sched),
      atomic_(atomic),
      table_(*world.protocol().OpenTable("sim")) {
  if (atomic_ != nullptr) atomic_table_ = *atomic_->OpenTable("sim");
}

std::string Actor::NewValue(int op, int key) const {
  return "a" + std::to_string(id_) + "o" + std::to_string(op) + "k" + std::to_string(key);
}

Entity Actor::Make(int key, const std::string& v) const {
  Entity e(kKeys[key][0], kKeys[key][1]);
  e.Set("v", v);
  return e;
}

// Adds the entry as unknown before the call: a kill leaves it so.
size_t Actor::Begin(HistEntry e) {
  e.outcome = Outcome::kUnknown;
  e.start = sched_.Step();
  std::lock_guard<std::mutex> lk(world_.mu());
  return world_.history().Add(std::move(e));
}

void Actor::End(size_t i, Outcome o, const Status& s, std::optional<Version> observed) {
  uint64_t end = sched_.Step();
  std::lock_guard<std::mutex> lk(world_.mu());
  HistEntry& e = world_.history().at(i);
  e.end = end;
  e.outcome = o;
  e.detail = s.ok() ? "" : s.ToString();
  if (observed) e.ops.front().observed = *observed;
}

void Actor::SetOps(size_t i, std::vector<HistOp> ops) {
  std::lock_guard<std::mutex> lk(world_.mu());
  world_.history().at(i).ops = std::move(ops);
}

Outcome Actor::Failed(const Status& s) {
  switch (s.code()) {
    case Code::kUnavailable:
    case Code::kInternal:
    case Code::kOutcomeUnknown: return Outcome::kUnknown;
    default: return Outcome::kNoEffect;
  }
}

void Actor::Run(int ops, ActorStats& stats) {
  for (int i = 0; i < ops; ++i) {
    // Runnable actors run before simulated time moves at all: without
    // pauses between operations, every client would act within one
    // instant, never across a lease running out.
    if (max_think_.count() > 0 && rng_() % 2)
      sched_.Sleep(milliseconds(static_cast<int64_t>(rng_() % (max_think_.count() + 1))));
    if (role_ == Role::kReader && rng_() % 2) {
      RandomTxn(i, /*read_only=*/true);
      ++stats.txns;
    } else if (role_ == Role::kReader) {
      Get(i, RandomKey());
    } else if (role_ == Role::kMixed && rng_() % 3 != 0) {
      RandomTxn(i, /*read_only=*/rng_() % 4 == 0);
      ++stats.txns;
    } else {
      Plain(i);
    }
    ++stats.ops;
  }
}

void Actor::Get(int op, int k) {
  HistEntry e;
  e.who = Who(op);
  HistOp o;
  o.kind = Kind::kGet;
  o.key = KeyName(k);
  e.ops.push_back(o);
  size_t i = Begin(e);
  auto r = table_.Get(kKeys[k][0], kKeys[k][1]);
  if (r.ok() || r.status().IsNotFound()) {
    last_read_[k] = {ValueOf(r), r.ok() ? std::optional(r->etag()) : std::nullopt};
    End(i, Outcome::kOk, r.status(), ValueOf(r));
  } else {
    End(i, Failed(r.status()), r.status());
  }
}

void Actor::Replace(int op, int k) { PlainWrite(op, k, 3); }

void Actor::Recover() {
  Store& store = world_.recoverer() != nullptr ? *world_.recoverer() : world_.protocol();
  Status s = store.Recover().status();
  if (s.IsCorruption() || s.IsInternal()) recover_errors_ += "Recover: " + s.ToString() + "\n";
}

void Actor::Plain(int op) {
  int k = RandomKey();
  int kind = rng_() % 9;
  if (kind == 8) return PlainMerge(op, k);
  if (kind == 0 || kind == 5) return Get(op, k);
  PlainWrite(op, k, kind);
}

// kind: 1 insert, 2 replace "*", 3 replace conditional, 4 upsert, 6 delete
// "*", 7 delete conditional (conditional on the ETag last read, if any).
void Actor::PlainWrite(int op, int k, int kind) {
  static const Kind kKinds[] = {Kind::kGet,    Kind::kInsert, Kind::kReplace, Kind::kReplace,
                                Kind::kUpsert, Kind::kGet,    Kind::kDelete,  Kind::kDelete};
  HistEntry e;
  e.who = Who(op);
  HistOp o;
  o.key = KeyName(k);
  const std::string v = NewValue(op, k);
  const auto& last = last_read_[k];
  const bool conditional = (kind == 3 || kind == 7) && last.etag.has_value();
  if (conditional) o.if_version = last.version;
  o.kind = kKinds[kind];
  if (o.kind != Kind::kDelete) o.value = v;
  e.ops.push_back(o);
  const std::string etag = conditional ? *last.etag : "*";
  size_t i = Begin(e);
  if (o.kind == Kind::kInsert || o.kind == Kind::kUpsert) {
    Status s = o.kind == Kind::kInsert ? table_.Insert(Make(k, v)).status()
                                       : table_.Upsert(Make(k, v)).status();
    bool exists = s.IsConflict() && s.message().find("already exists") != std::string::npos;
    End(i, s.ok() ? Outcome::kOk : exists ? Outcome::kExists : Failed(s), s);
    return;
  }
  Status s = o.kind == Kind::kReplace ? table_.Replace(Make(k, v), etag).status()
                                      : table_.Delete(kKeys[k][0], kKeys[k][1], etag);
  End(i, s.ok() ? Outcome::kOk : s.IsNotFound() ? Outcome::kAbsent : Failed(s), s);
}

void Actor::PlainMerge(int op, int k) {
  HistEntry e;
  e.who = Who(op);
  HistOp o;
  o.kind = Kind::kMerge;
  o.key = KeyName(k);
  o.value = NewValue(op, k);
  e.ops.push_back(o);
  size_t i = Begin(e);
  Entity patch(kKeys[k][0], kKeys[k][1]);
  patch.Set("m", o.value);
  Status s = table_.Merge(patch, "*").status();
  End(i, s.ok() ? Outcome::kOk : s.IsNotFound() ? Outcome::kAbsent : Failed(s), s);
}

// A third of transactions only read (2-3 keys, then Commit: one GET per
// entity, no record); the others read, write, or only read each key. On a
// run with an atomic store, every other transaction commits as a batch.
void Actor::RandomTxn(int op, bool read_only) {
  static const int kLockTimeoutsMs[] = {0, 1'000, 30'000};
  const milliseconds lock_timeout(kLockTimeoutsMs[rng_() % 3]);
  const int n_keys = static_cast<int>(keys_.size());
  int first = rng_() % n_keys, count = (read_only ? 2 : 1) + rng_() % (read_only ? 2 : 3);
  std::vector<Step> steps;
  for (int n = 0; n < std::min(count, n_keys); ++n)
    steps.push_back(
        {keys_[(first + n) % n_keys], read_only ? Plan::kReadOnly : static_cast<Plan>(rng_() % 3)});
  const bool atomic = atomic_ != nullptr && rng_() % 2;
  RunTxn(op, steps, atomic, /*scripted=*/false, lock_timeout);
}

void Actor::Txn(int op, const std::vector<Step>& steps, bool atomic) {
  RunTxn(op, steps, atomic && atomic_ != nullptr, /*scripted=*/true, milliseconds(30'000));
}

HistOp Actor::BufferWrite(Transaction& txn, int op, int k, std::optional<bool> present,
                          bool scripted, bool merge) {
  const Table& table = txn_table_ != nullptr ? *txn_table_ : table_;
  HistOp w;
  w.key = KeyName(k);
  w.value = NewValue(op, k);
  Status s;
  int pick = scripted ? (present.value_or(false) ? 2 : 1) : static_cast<int>(rng_() % 5);
  if (!scripted && present.has_value()) pick = *present ? 2 + pick % 3 : pick % 2;
  if (merge) pick = 4;
  switch (pick) {
    case 0:
      w.kind = Kind::kInsert;
      s = txn.Insert(table, Make(k, w.value));
      break;
    case 1:
      w.kind = Kind::kUpsert;
      s = txn.Upsert(table, Make(k, w.value));
      break;
    case 2:
      w.kind = Kind::kReplace;
      s = txn.Replace(table, Make(k, w.value), "*");
      break;
    case 4: {
      w.kind = Kind::kMerge;
      Entity patch(kKeys[k][0], kKeys[k][1]);
      patch.Set("m", w.value);
      s = txn.Merge(table, patch, "*");
      break;
    }
    default:
      w.kind = Kind::kDelete;
      w.value.clear();
      s = txn.Delete(table, kKeys[k][0], kKeys[k][1], "*");
  }
  if (!s.ok()) buffer_errors_ += "a buffered operation was refused: " + s.ToString() + "\n";
  return w;
}

void Actor::RunTxn(int op, const std::vector<Step>& steps, bool atomic, bool scripted,
                   milliseconds lock_timeout) {
  TransactionOptions t;
  t.lease_seconds = 15;
  t.renewal_margin = std::chrono::seconds(5);
  t.lock_timeout = lock_timeout;
  HistEntry e;
  e.txn = true;
  e.who = Who(op) +
          (atomic ? " (atomic batch"
                  : " (lock timeout " + std::to_string(lock_timeout.count()) + " ms") +
          ")";
  size_t i = Begin(e);
  Store& store = atomic ? *atomic_ : world_.protocol();
  txn_table_ = atomic ? &*atomic_table_ : &table_;
  auto txn = store.Begin(t);
  std::vector<HistOp> ops;
  for (const Step& step : steps) {
    const int k = step.key;
    std::optional<bool> present;
    const bool merge = step.plan == Plan::kBlindMerge;
    if (step.plan != Plan::kBlindWrite && !merge) {
      auto r = txn->Get(*txn_table_, kKeys[k][0], kKeys[k][1]);
      if (!r.ok() && !r.status().IsNotFound()) {
        SetOps(i, ops);
        End(i, Failed(r.status()), r.status());
        return;
      }
      HistOp g;
      g.kind = Kind::kGet;
      g.key = KeyName(k);
      g.observed = ValueOf(r);
      ops.push_back(g);
      present = r.ok();
      if (step.plan == Plan::kReadOnly) continue;
    }
    ops.push_back(BufferWrite(*txn, op, k, present, scripted, merge));
  }
  SetOps(i, ops);
  const int troubles = sched_.TroublesOfCaller();
  auto r = txn->Commit();
  const Status& s = r.status();
  if (s.code() == Code::kLeaseLost && sched_.TroublesOfCaller() == troubles)
    fenced_at_work_ +=
        "L2: " + e.who + " was fenced although it never stalled: " + s.ToString() + "\n";
  // The previous protocol reported a failure after its commit point with
  // the words "is committed": it did commit.
  bool committed = r.ok() || s.message().find(" is committed") != std::string::npos;
  End(i, committed ? Outcome::kOk : Failed(s), s);
}

}  // namespace blobtable::sim
