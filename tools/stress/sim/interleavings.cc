// The randomized interleaving simulation (README "Transactions:
// Randomized interleavings"), as a mode of the stress tool and as a test.
// Each seed runs a few actors on the embedded store, one request at a time
// under the deterministic scheduler (sim_scheduler.h): transactions with
// short and long lock timeouts beside plain gets, inserts, replaces, upserts
// and deletes, conditional and not, while actors stall (past their leases),
// are killed at requests and sync points, and lose the answers to applied
// writes. Afterwards the leases run out, `Recover` runs, every key is read,
// and the history checker looks for one serial order, consistent with real
// time, that explains every answer (all or nothing for transactions, no lost
// or invented write, no read of a replaced version); a protocol monitor
// flags any write around a committed transaction.
#include "tools/stress/sim/interleavings.h"

#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <functional>
#include <iostream>
#include <mutex>
#include <random>

#include "blobtable/store.h"
#include "tools/stress/sim/history_checker.h"
#include "tools/stress/sim/sim_scheduler.h"
#include "txn/intent.h"
#include "txn/intent_resolver.h"
#include "txn/recovery.h"
#include "txn/sync_point.h"
#include "txn/txn_record.h"
#include "util/fake_clock.h"
#include "util/macros.h"

namespace blobtable::sim {
namespace {

using std::chrono::milliseconds;
using Outcome = HistEntry::Outcome;
using Kind = HistOp::Kind;

// A new directory, removed with everything in it: in memory (/dev/shm)
// where there is one, else under the temporary directory. The simulation
// searches the protocol's interleavings, not the disk's durability, and a
// run of 2,100 seeds commits tens of thousands of times: on a disk each
// commit waits for fsync, 23 s a run here and over 300 s when a build
// competed for the disk (a CI timeout), against 5 s in memory.
class TempDirectory {
 public:
  TempDirectory() {
    std::error_code ec;
    const std::filesystem::path shm = "/dev/shm";
    const std::filesystem::path base =
        std::filesystem::is_directory(shm, ec) && access(shm.c_str(), W_OK) == 0
            ? shm
            : std::filesystem::temp_directory_path();
    std::string tmpl = (base / "blobtable-sim-XXXXXX").string();
    if (mkdtemp(tmpl.data()) != nullptr) path_ = tmpl;
  }
  ~TempDirectory() {
    std::error_code ec;
    if (!path_.empty()) std::filesystem::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

const char* const kKeys[][2] = {{"p0", "a"}, {"p0", "b"}, {"p1", "c"}, {"p1", "d"}};
constexpr int kNumKeys = 4;
const char* const kSyncPoints[] = {
    "txn.locks_acquired", "txn.prewritten",      "txn.committed",    "txn.finished_one",
    "txn.finished",       "txn.record_deleted",  "txn.renewed",      "recovery.decided",
    "recovery.settled_one"};

std::string KeyName(int k) { return std::string(kKeys[k][0]) + "/" + kKeys[k][1]; }

// "<v>" or "<v>+<m>": what replaces and inserts wrote, and what a merge
// added on top (the checker's model of a merge).
Version ValueOf(const Result<Entity>& e) {
  if (!e.ok()) return std::nullopt;
  auto v = e->FindAs<std::string>("v");
  auto m = e->FindAs<std::string>("m");
  return (v ? *v : "(no v)") + (m ? "+" + *m : "");
}

// Watches the protocol from below the scheduler (its own reads are not
// scheduling points) for writes around a *committed* transaction, whether
// or not the history shows them:
// - protocol 2: a write that succeeds on an entity still holding the intent
//   of a committed transaction must be its finishing: the new version put
//   (stamped with the transaction, kSameAsMetadata naming the intent), the
//   entity deleted if the new version is none, or another transaction's
//   intent whose previous version is that new version;
// - protocol 1: a write or lease that succeeds on an entity carrying the
//   mark of a committed transaction, by anyone but that transaction (its
//   coordinator, or a resolver presenting its lease id).
class ProtocolMonitor final : public BlobStoreWrapper {
 public:
  using BlobStoreWrapper::BlobStoreWrapper;
  std::string violations;

  Result<WriteResult> Put(std::string_view n, std::string_view d, const PutOptions& o) override {
    auto finishes = [&](const EntityIntent& i, const BlobProperties& cur) {
      if (!PrewriteIn(o.metadata).empty()) {
        auto next = DecodeIntent(d, n);
        return next.ok() && next->prev_exists == i.next_exists &&
               next->prev_body == i.next_body && next->prev_etag == cur.etag;
      }
      auto stamp = o.metadata.find(kTxnMetadata);
      auto same = o.metadata.find(kSameAsMetadata);
      // A new version is named by the intent's ETag; an entity only read
      // keeps its version, named by the ETag the intent replaced.
      return i.next_exists && d == i.next_body && stamp != o.metadata.end() &&
             stamp->second == i.txn_id && same != o.metadata.end() &&
             NamesVersion(same->second, i.reads_only ? i.prev_etag : cur.etag);
    };
    return Watch(n, o.lease_id, "put", finishes, [&] { return BlobStoreWrapper::Put(n, d, o); });
  }
  Status Delete(std::string_view n, const WriteOptions& o) override {
    auto finishes = [](const EntityIntent& i, const BlobProperties&) { return !i.next_exists; };
    return Watch(n, o.lease_id, "delete", finishes,
                 [&] { return BlobStoreWrapper::Delete(n, o); });
  }
  Result<WriteResult> SetMetadata(std::string_view n, const Metadata& m,
                                  const WriteOptions& o) override {
    return Watch(n, o.lease_id, "metadata", kNever,
                 [&] { return BlobStoreWrapper::SetMetadata(n, m, o); });
  }
  Result<LeaseResult> AcquireLease(std::string_view n, int d, std::string_view p,
                                   const AccessConditions& c) override {
    auto no_write = [](const EntityIntent&, const BlobProperties&) { return true; };
    return Watch(n, std::string(p), "lease", no_write,
                 [&] { return BlobStoreWrapper::AcquireLease(n, d, p, c); });
  }

 private:
  using Finishes = std::function<bool(const EntityIntent&, const BlobProperties&)>;
  static bool kNever(const EntityIntent&, const BlobProperties&) { return false; }

  static std::string PrewriteIn(const Metadata& m) {
    auto it = m.find(kPrewriteMetadata);
    return it == m.end() ? "" : it->second;
  }

  // The committed record of transaction `txn`, if it has one.
  std::optional<TxnRecord> Committed(const std::string& txn) {
    auto record = target().Get(RecordBlobName(txn), {});
    if (!record.ok()) return std::nullopt;
    auto rec = DecodeRecord(record->data, "");
    if (!rec.ok() || rec->state != TxnState::kCommitted) return std::nullopt;
    return *rec;
  }

  // Which committed transaction a successful write on `name` would go
  // around ("" if none).
  std::string Around(std::string_view name, const std::string& lease_id,
                     const Finishes& finishes) {
    if (name.find("/e/") == std::string_view::npos) return "";
    auto cur = target().Get(name, {});
    if (!cur.ok()) return "";
    const std::string pw = PrewritingTransaction(cur->properties);
    if (!pw.empty()) {
      auto intent = DecodeIntent(cur->data, name);
      if (!intent.ok() || !Committed(pw)) return "";
      return finishes(*intent, cur->properties) ? "" : pw;
    }
    const std::string txn = MarkingTransaction(cur->properties);
    if (txn.empty()) return "";
    auto rec = Committed(txn);
    return rec && rec->lease_id != lease_id ? txn : "";
  }

  template <typename F>
  auto Watch(std::string_view name, const std::string& lease_id, const char* what,
             const Finishes& finishes, F call) -> decltype(call()) {
    const std::string committed_by = Around(name, lease_id, finishes);
    auto r = call();
    if (!committed_by.empty() && StatusOf(r).ok())
      violations += std::string(what) + " on " + std::string(name) + " by " +
                    (lease_id.empty() ? std::string("a plain write") : "lease " + lease_id) +
                    ", around committed transaction " + committed_by + "\n";
    return r;
  }
};


class Actor {
 public:
  Actor(int id, uint64_t seed, Store& store, SimScheduler& sched, History& h, std::mutex& mu)
      : id_(id), rng_(seed * 1000 + id), store_(store), sched_(sched), h_(h), mu_(mu),
        table_(*store.OpenTable("sim")) {}

  void Run(int ops, RunStats& stats) {
    for (int i = 0; i < ops; ++i) {
      if (rng_() % 2) {
        Txn(i);
        ++stats.txns;
      } else {
        Plain(i);
      }
      ++stats.ops;
    }
  }

 private:
  std::string NewValue(int op, int key) {
    return "a" + std::to_string(id_) + "o" + std::to_string(op) + "k" + std::to_string(key);
  }
  Entity Make(int key, const std::string& v) {
    Entity e(kKeys[key][0], kKeys[key][1]);
    e.Set("v", v);
    return e;
  }
  // Adds the entry as unknown before the call: a kill leaves it so.
  size_t Begin(HistEntry e) {
    e.outcome = Outcome::kUnknown;
    e.start = sched_.Step();
    std::lock_guard<std::mutex> lk(mu_);
    return h_.Add(std::move(e));
  }
  void End(size_t i, Outcome o, const Status& s, std::optional<Version> observed = {}) {
    uint64_t end = sched_.Step();
    std::lock_guard<std::mutex> lk(mu_);
    HistEntry& e = h_.at(i);
    e.end = end;
    e.outcome = o;
    e.detail = s.ok() ? "" : s.ToString();
    if (observed) e.ops.front().observed = *observed;
  }
  static Outcome Failed(const Status& s) {
    switch (s.code()) {
      case Code::kUnavailable:
      case Code::kInternal:
      case Code::kOutcomeUnknown: return Outcome::kUnknown;
      default: return Outcome::kNoEffect;
    }
  }

  void Plain(int op) {
    int k = rng_() % kNumKeys;
    HistEntry e;
    e.who = "actor" + std::to_string(id_) + " op" + std::to_string(op);
    HistOp o;
    o.key = KeyName(k);
    int kind = rng_() % 9;
    const std::string v = NewValue(op, k);
    const auto& last = last_read_[k];
    const bool conditional = (kind == 3 || kind == 7) && last.etag.has_value();
    if (kind == 8) return PlainMerge(op, k);
    if (conditional) o.if_version = last.version;
    static const Kind kKinds[] = {Kind::kGet,    Kind::kInsert, Kind::kReplace, Kind::kReplace,
                                  Kind::kUpsert, Kind::kGet,    Kind::kDelete,  Kind::kDelete};
    o.kind = kKinds[kind];
    if (o.kind != Kind::kGet && o.kind != Kind::kDelete) o.value = v;
    e.ops.push_back(o);
    const std::string etag = conditional ? *last.etag : "*";
    size_t i = Begin(e);
    switch (o.kind) {
      case Kind::kGet: {
        auto r = table_.Get(kKeys[k][0], kKeys[k][1]);
        if (r.ok() || r.status().IsNotFound()) {
          last_read_[k] = {ValueOf(r), r.ok() ? std::optional(r->etag()) : std::nullopt};
          End(i, Outcome::kOk, r.status(), ValueOf(r));
        } else {
          End(i, Failed(r.status()), r.status());
        }
        return;
      }
      case Kind::kInsert: {
        Status s = table_.Insert(Make(k, v)).status();
        bool exists = s.IsConflict() && s.message().find("already exists") != std::string::npos;
        End(i, s.ok() ? Outcome::kOk : exists ? Outcome::kExists : Failed(s), s);
        return;
      }
      case Kind::kUpsert: {
        Status s = table_.Upsert(Make(k, v)).status();
        End(i, s.ok() ? Outcome::kOk : Failed(s), s);
        return;
      }
      case Kind::kReplace:
      case Kind::kDelete: {
        Status s = o.kind == Kind::kReplace ? table_.Replace(Make(k, v), etag).status()
                                            : table_.Delete(kKeys[k][0], kKeys[k][1], etag);
        End(i, s.ok() ? Outcome::kOk : s.IsNotFound() ? Outcome::kAbsent : Failed(s), s);
        return;
      }
      case Kind::kMerge:  // PlainMerge's
        break;
    }
  }

  void PlainMerge(int op, int k) {
    HistEntry e;
    e.who = "actor" + std::to_string(id_) + " op" + std::to_string(op);
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

  void Txn(int op) {
    TransactionOptions t;
    t.lease_seconds = 15;
    t.renewal_margin = std::chrono::seconds(5);
    static const int kLockTimeoutsMs[] = {0, 1'000, 30'000};
    t.lock_timeout = milliseconds(kLockTimeoutsMs[rng_() % 3]);
    HistEntry e;
    e.txn = true;
    e.who = "actor" + std::to_string(id_) + " op" + std::to_string(op) + " (lock timeout " +
            std::to_string(t.lock_timeout.count()) + " ms)";
    size_t i = Begin(e);
    auto txn = store_.Begin(t);
    std::vector<HistOp> ops;
    int first = rng_() % kNumKeys, count = 1 + rng_() % 3;
    for (int n = 0; n < count; ++n) {
      int k = (first + n) % kNumKeys;
      HistOp w;
      w.key = KeyName(k);
      w.value = NewValue(op, k);
      int plan = rng_() % 3;  // 0: read then write, 1: blind write, 2: read only
      std::optional<bool> present;
      if (plan != 1) {
        auto r = txn->Get(table_, kKeys[k][0], kKeys[k][1]);
        if (!r.ok() && !r.status().IsNotFound()) {
          SetOps(i, ops);
          End(i, Failed(r.status()), r.status());
          return;
        }
        HistOp g;
        g.kind = Kind::kGet;
        g.key = w.key;
        g.observed = ValueOf(r);
        ops.push_back(g);
        present = r.ok();
        if (plan == 2) continue;
      }
      Status s;
      int pick = rng_() % 5;
      if (present.has_value()) pick = *present ? 2 + pick % 3 : pick % 2;
      switch (pick) {
        case 0: w.kind = Kind::kInsert; s = txn->Insert(table_, Make(k, w.value)); break;
        case 1: w.kind = Kind::kUpsert; s = txn->Upsert(table_, Make(k, w.value)); break;
        case 2: w.kind = Kind::kReplace; s = txn->Replace(table_, Make(k, w.value), "*"); break;
        case 4: {
          w.kind = Kind::kMerge;
          Entity patch(kKeys[k][0], kKeys[k][1]);
          patch.Set("m", w.value);
          s = txn->Merge(table_, patch, "*");
          break;
        }
        default:
          w.kind = Kind::kDelete;
          w.value.clear();
          s = txn->Delete(table_, kKeys[k][0], kKeys[k][1], "*");
      }
      if (!s.ok()) buffer_errors_ += "a buffered operation was refused: " + s.ToString() + "\n";
      ops.push_back(w);
    }
    SetOps(i, ops);
    auto r = txn->Commit();
    const Status& s = r.status();
    // The previous protocol reported a failure after its commit point with
    // the words "is committed": it did commit.
    bool committed = r.ok() || s.message().find(" is committed") != std::string::npos;
    End(i, committed ? Outcome::kOk : Failed(s), s);
  }
 public:
  const std::string& buffer_errors() const { return buffer_errors_; }

 private:
  void SetOps(size_t i, std::vector<HistOp> ops) {
    std::lock_guard<std::mutex> lk(mu_);
    h_.at(i).ops = std::move(ops);
  }

  struct LastRead {
    Version version;
    std::optional<std::string> etag;
  };
  int id_;
  std::mt19937_64 rng_;
  Store& store_;
  SimScheduler& sched_;
  History& h_;
  std::mutex& mu_;
  Table table_;
  LastRead last_read_[kNumKeys];
  std::string buffer_errors_;
};

}  // namespace

RunStats RunSeed(uint64_t seed, bool verbose, std::ostream& out) {
  RunStats stats;
  TempDirectory dir;
  FakeClock clock;
  SimFaults faults;
  faults.kill = 0.005;
  faults.kill_at_step = 0.1;
  faults.max_kills = 2;
  faults.stall = 0.03;
  faults.stall_at_step = 0.25;
  faults.max_stall = milliseconds(40'000);
  faults.lost_response = 0.01;
  // Each run focuses its kills on one protocol step.
  faults.focus_step = kSyncPoints[seed % std::size(kSyncPoints)];
  faults.kill_at_focus = 0.5;
  SimScheduler sched(seed, clock, faults);
  for (const char* p : kSyncPoints) SyncPoints::Set(p, [&sched, p] { sched.Point(p); });

  StoreOptions o;
  o.clock = &clock;
  o.atomic_commits = false;  // the lease protocol's interleavings are what it searches
  // Finishing runs in the committing actor (the scheduler runs one request
  // at a time and knows only its own threads).
  o.finish_in_background = false;
  clock.set_sleep([&](milliseconds d) { sched.Sleep(d); });
  // Resolvers hold a record longer than a coordinator's 15 s leases last:
  // a dead coordinator's locks and entities run out while it is settled.
  o.txn_lease_seconds = 60;
  ProtocolMonitor* monitor = nullptr;
  o.wrap_blob_store = [&](std::shared_ptr<BlobStore> b) {
    auto m = std::make_shared<ProtocolMonitor>(std::move(b));
    monitor = m.get();
    return WrapForSimulation(m, sched);
  };
  auto store = Store::Open(dir.path(), o);
  if (!store.ok()) {
    stats.violation = "opening the store: " + store.status().ToString();
    return stats;
  }
  auto table = *(*store)->OpenTable("sim");

  History h;
  std::mt19937_64 rng(seed);
  for (int k = 0; k < kNumKeys; ++k) {
    Version v;
    if (rng() % 2) {
      v = "init" + std::to_string(k);
      Entity e(kKeys[k][0], kKeys[k][1]);
      e.Set("v", *v);
      if (!table.Insert(e).ok()) stats.violation += "setting up " + KeyName(k) + " failed\n";
    }
    h.SetInitial(KeyName(k), v);
  }
  std::mutex mu;
  const int actors = 4, ops = 3;
  std::vector<std::unique_ptr<Actor>> all;
  for (int a = 0; a < actors; ++a) {
    all.push_back(std::make_unique<Actor>(a, seed, **store, sched, h, mu));
    Actor* actor = all.back().get();
    sched.Spawn("actor" + std::to_string(a), /*killable=*/true,
                [actor, &stats, ops] { actor->Run(ops, stats); });
  }
  sched.Run();
  SyncPoints::ClearAll();

  // Every lease runs out; a fresh process recovers, then reads every key.
  clock.Advance(std::chrono::minutes(5));
  StoreOptions after;
  after.clock = &clock;
  clock.set_sleep(nullptr);  // backoff just moves time now
  auto reader = Store::Open(dir.path(), after);
  if (!reader.ok()) {
    stats.violation += "reopening the store: " + reader.status().ToString();
    return stats;
  }
  Status recovered = (*reader)->Recover().status();
  auto final_table = *(*reader)->OpenTable("sim");
  for (int k = 0; k < kNumKeys; ++k) {
    HistEntry e;
    e.who = "final read";
    HistOp g;
    g.kind = Kind::kGet;
    g.key = KeyName(k);
    auto r = final_table.Get(kKeys[k][0], kKeys[k][1]);
    g.observed = ValueOf(r);
    e.ops.push_back(g);
    e.start = sched.Step() + 1'000'000;
    e.end = e.start;
    e.outcome = r.ok() || r.status().IsNotFound() ? Outcome::kOk : Outcome::kNoEffect;
    e.detail = r.ok() ? "" : r.status().ToString();
    if (!r.ok() && !r.status().IsNotFound())
      stats.violation = "final read failed: " + r.status().ToString() + "\n";
    h.Add(std::move(e));
  }
  if (!recovered.ok()) stats.violation += "recover failed: " + recovered.ToString() + "\n";
  for (const HistEntry& e : h.entries())
    if (e.txn && e.outcome == Outcome::kOk) ++stats.committed;
  for (const auto& actor : all) stats.violation += actor->buffer_errors();
  stats.violation += h.Check();
  if (!monitor->violations.empty())
    stats.violation += "protocol monitor:\n" + monitor->violations + h.Describe();
  stats.kills = sched.kills();
  stats.stalls = sched.stalls();
  stats.lost = sched.lost_responses();
  if (verbose || !stats.violation.empty()) {
    out << "seed " << seed << ":\n" << (stats.violation.empty() ? h.Describe() : stats.violation);
    if (verbose) out << "schedule (last events):\n" << sched.Trace();
  }
  return stats;
}


RunStats RunSeeds(uint64_t first, uint64_t count, std::optional<uint64_t> verbose_seed,
                  std::ostream& out, std::vector<uint64_t>* failing) {
  RunStats total;
  for (uint64_t seed = first; seed < first + count; ++seed) {
    RunStats s = RunSeed(seed, verbose_seed == seed, out);
    total.ops += s.ops;
    total.txns += s.txns;
    total.committed += s.committed;
    total.kills += s.kills;
    total.stalls += s.stalls;
    total.lost += s.lost;
    if (!s.violation.empty()) {
      failing->push_back(seed);
      if (total.violation.empty()) total.violation = s.violation;
    }
  }
  std::string seeds;
  for (uint64_t s : *failing) seeds += " " + std::to_string(s);
  out << "interleavings: seeds " << first << ".." << first + count - 1 << ", operations "
      << total.ops << " (transactions " << total.txns << ", committed " << total.committed
      << "), kills " << total.kills << ", stalls " << total.stalls << ", lost answers "
      << total.lost << ", violations " << failing->size() << (failing->empty() ? "" : ":")
      << seeds << "\n";
  return total;
}

}  // namespace blobtable::sim
