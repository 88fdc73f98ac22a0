// SPDX-License-Identifier: Apache-2.0
// The lock workload: workers take one Lock (lease 15 s, the shortest; a
// short timeout) and, while holding it, add one to a counter entity 1-3
// times, each a read-modify-write through FencedUpdate with the hold's
// token; the hold's interval [acquired, released] is recorded with its
// token. Now and then a worker writes with the token of a hold it already
// released, as a holder paused past its lease would: the fence must refuse
// it once a newer holder has written. Faults break leases (a lost lease:
// another worker takes the lock while this one still thinks it holds it),
// and killed holders leave theirs to run out. The checker (lock_check.cc):
// tokens only go up, the fence never lets an older token write after a
// newer one, and no increment is lost. The leader workload is the same
// with a LeaderElection for the Lock and its term for the token: a hold is
// a term of leadership, ended by Resign.
#include "blobtable/leader.h"
#include "blobtable/lock.h"
#include "devtools/stress/coord_check.h"
#include "devtools/stress/workload.h"
#include "util/macros.h"

namespace blobtable::stress {
namespace {

using std::chrono::milliseconds;

constexpr char kLock[] = "stress";
constexpr char kTable[] = "lockcounter";
constexpr char kPk[] = "c";
constexpr char kRk[] = "n";
constexpr char kCounterKey[] = "lockcounter/c/n";
constexpr char kValue[] = "n";

class LockWorkload final : public Workload {
 public:
  explicit LockWorkload(bool leader) : leader_(leader) {}
  std::string name() const override { return leader_ ? "leader" : "lock"; }

  // The counter starts at 0 with no token recorded (an earlier run on the
  // same store may have left one; the lock's own tokens only go on up).
  Status Setup(Store& store) override {
    auto table = store.OpenTable(kTable);
    if (!table.ok()) return table.status();
    Entity zero(kPk, kRk);
    zero.Set(kValue, int64_t{0});
    return table->Upsert(zero).status();
  }

  void RunOne(WorkerContext& ctx) override {
    if (last_token_ > 0 && ctx.rng() % 10 == 0) {
      Increment(ctx, last_token_, /*stale=*/true);
      return;
    }
    Hold(ctx);
  }

  std::string Check(const std::vector<Op>& history, Store& store) override {
    auto table = store.OpenTable(kTable);
    if (!table.ok()) return "opening the counter's table: " + table.status().ToString();
    auto e = table->Get(kPk, kRk, ReadPolicy::Validate());
    if (!e.ok()) return "reading the counter at the end: " + e.status().ToString();
    end_.value = e->GetAs<int64_t>(kValue).value_or(0);
    end_.token = e->GetAs<int64_t>(kFencingTokenProperty).value_or(0);
    return CheckLock(history, end_);
  }

  std::string Summary(const std::vector<Op>& history) const override;

 private:
  // What a hold is: a Lock, or a term of leadership.
  struct Held {
    std::unique_ptr<Lock> lock;
    std::unique_ptr<LeaderElection> election;
    int64_t token = 0;
    Status Release() { return lock ? lock->Release() : election->Resign(); }
  };
  Result<Held> Take(WorkerContext& ctx) {
    const std::string owner = "w" + std::to_string(ctx.worker) + "g" + std::to_string(ctx.gen);
    Held h;
    if (!leader_) {
      LockOptions o;
      o.lease_seconds = 15;
      o.timeout = milliseconds(2'000);
      o.owner = owner;
      BT_ASSIGN_OR_RETURN(h.lock, Lock::Acquire(ctx.store, kLock, o));
      h.token = h.lock->token();
      return h;
    }
    LeaderOptions o;
    o.lease_seconds = 15;
    o.identity = owner;
    BT_ASSIGN_OR_RETURN(h.election, LeaderElection::Start(ctx.store, kLock, o));
    if (!h.election->WaitForLeadership(milliseconds(2'000)))
      return Status::LockTimeout("not leader within 2 s");
    h.token = h.election->term();
    if (h.token == 0) return Status::LeaseLost("leadership lost as it was won");
    return h;
  }

  // Acquires, increments 1-3 times (with a little work between), releases.
  void Hold(WorkerContext& ctx) {
    std::vector<MicroOp> mops = {{"l", kLock, nullptr}};
    const int64_t index = ctx.history.Invoke("acquire", mops);
    auto lock = Take(ctx);
    if (!lock.ok()) {
      ctx.history.Complete(index, "acquire", OutcomeOf(lock.status()), mops,
                           lock.status().ToString());
      return;
    }
    const int64_t token = lock->token;
    const uint64_t acquired = MonotonicNs();
    mops[0].value = token;
    ctx.history.Complete(index, "acquire", OpType::kOk, mops);
    for (int n = 1 + static_cast<int>(ctx.rng() % 3); n > 0; --n) {
      if (ctx.rng() % 3 == 0)
        ClockOf(ctx.store).SleepFor(milliseconds(static_cast<int64_t>(ctx.rng() % 300)));
      Increment(ctx, token, /*stale=*/false);
    }
    std::vector<MicroOp> release = {{"u", kLock, {{"token", token}, {"acquired", acquired}}}};
    const int64_t r = ctx.history.Invoke("release", release);
    Status s = lock->Release();
    release[0].value["released"] = MonotonicNs();
    ctx.history.Complete(r, "release", OutcomeOf(s), release, s.ok() ? "" : s.ToString());
    last_token_ = token;
  }

  // Adds one to the counter through FencedUpdate with `token`, recording
  // what the write read (the value and the token recorded before it).
  void Increment(WorkerContext& ctx, int64_t token, bool stale) {
    nlohmann::json value = {
        {"token", token}, {"read", nullptr}, {"read_token", nullptr}, {"stale", stale}};
    std::vector<MicroOp> mops = {{"i", kCounterKey, value}};
    const int64_t index = ctx.history.Invoke("incr", mops);
    auto table = ctx.store.OpenTable(kTable);
    // The last attempt's reading is the one written (Update may try again
    // after losing a race).
    auto add_one = [&](Entity& e, bool) {
      const int64_t read = e.GetAs<int64_t>(kValue).value_or(0);
      mops[0].value["read"] = read;
      mops[0].value["read_token"] = e.GetAs<int64_t>(kFencingTokenProperty).value_or(0);
      e.Set(kValue, read + 1);
      return Status::OK();
    };
    auto written = table.ok() ? FencedUpdate(*table, kPk, kRk, token, add_one)
                              : Result<Entity>(table.status());
    // A conditional write: OutcomeUnknown is "info"; a fenced refusal
    // (LeaseLost), a lost race, Unavailable say it wrote nothing.
    ctx.history.Complete(index, "incr", OutcomeOf(written.status()), mops,
                         written.ok() ? "" : written.status().ToString());
  }

  const bool leader_;
  int64_t last_token_ = 0;  // a worker's last released hold: its stale writes
  CounterEnd end_;          // the supervisor's: as the last Check read it
};

std::string LockWorkload::Summary(const std::vector<Op>& history) const {
  uint64_t n[3][3] = {};  // acquire, incr, stale incr x ok, fail, info
  for (const Op& op : history) {
    if (op.f != "acquire" && op.f != "incr") continue;
    const nlohmann::json* v = op.mops.size() == 1 ? &op.mops[0].value : nullptr;
    const bool stale = v != nullptr && v->is_object() && v->contains("stale") &&
                       (*v)["stale"].is_boolean() && (*v)["stale"].get<bool>();
    const int row = op.f == "acquire" ? 0 : stale ? 2 : 1;
    ++n[row][op.type == OpType::kOk ? 0 : op.type == OpType::kFail ? 1 : 2];
  }
  auto three = [&](int row) {
    return std::to_string(n[row][0]) + " ok / " + std::to_string(n[row][1]) + " failed / " +
           std::to_string(n[row][2]) + " unknown";
  };
  return "acquires " + three(0) + "; increments " + three(1) + "; stale-token increments " +
         three(2) + "; counter at the end " + std::to_string(end_.value) + ", token " +
         std::to_string(end_.token);
}

}  // namespace

std::unique_ptr<Workload> MakeLockWorkload() { return std::make_unique<LockWorkload>(false); }
std::unique_ptr<Workload> MakeLeaderWorkload() { return std::make_unique<LockWorkload>(true); }

}  // namespace blobtable::stress
