// SPDX-License-Identifier: Apache-2.0
// The queue workload: workers share one WorkQueue (visibility 15 s, the
// shortest, so that leases run out often). They enqueue items whose body is
// a unique name (worker, generation, operation), and dequeue them; a
// delivery is completed at once, or held while the worker goes on with
// other operations (its "work": a few seconds, or about the visibility, so
// that some leases run out before the worker acts) and then completed,
// abandoned, or extended and completed later. A killed worker's deliveries
// run out and are delivered again. The checker (queue_check.cc): exactly
// one Complete says OK, nothing lost, nothing invented.
#include <algorithm>
#include <array>
#include <limits>
#include <map>

#include "blobtable/queue.h"
#include "coord/coord_names.h"
#include "devtools/stress/coord_check.h"
#include "devtools/stress/workload.h"
#include "storage/list_all.h"
#include "util/macros.h"

namespace blobtable::stress {
namespace {

using std::chrono::milliseconds;

constexpr char kQueue[] = "stress";
constexpr int kVisibility = 15;
constexpr int kMaxDequeues = 3;  // low, so that some items become dead letters
// Deliveries a worker holds at once; with more, it finishes the first due.
constexpr size_t kMaxHeld = 3;

QueueOptions Options() {
  QueueOptions o;
  o.visibility_seconds = kVisibility;
  o.max_dequeues = kMaxDequeues;
  return o;
}

// A number in [lo, hi) milliseconds.
milliseconds Between(std::mt19937_64& rng, int64_t lo, int64_t hi) {
  return milliseconds(lo + static_cast<int64_t>(rng() % static_cast<uint64_t>(hi - lo)));
}

// What a worker does with a delivery when its work is done.
enum class Plan { kComplete, kAbandon, kExtend };

struct Held {
  QueueItem item;
  Plan plan = Plan::kComplete;
  SteadyTime due;
};

// Deletes what an earlier run on the same store left in the queue (no
// worker runs yet): its items would be deliveries no enqueue of this run
// made.
Status Clear(BlobStore& blobs) {
  for (const std::string& prefix :
       {internal::coord::QueueItemPrefix(kQueue), internal::coord::QueueDeadPrefix(kQueue)}) {
    ListOptions list;
    list.prefix = prefix;
    BT_RETURN_IF_ERROR(internal::ForEachListed(blobs, list, [&](const BlobItem& item) {
      if (item.properties.lease_state == LeaseState::kLeased)
        (void)blobs.BreakLease(item.name, 0, {});  // a killed worker's delivery
      Status s = blobs.Delete(item.name, {});
      return s.IsNotFound() ? Status::OK() : s;
    }));
  }
  return Status::OK();
}

class QueueWorkload final : public Workload {
 public:
  std::string name() const override { return "queue"; }

  Status Setup(Store& store) override { return Clear(store.blob_store()); }

  void RunOne(WorkerContext& ctx) override {
    auto first = std::min_element(held_.begin(), held_.end(),
                                  [](const Held& a, const Held& b) { return a.due < b.due; });
    if (first != held_.end() &&
        (ClockOf(ctx.store).Steady() >= first->due || held_.size() >= kMaxHeld)) {
      Held h = std::move(*first);
      held_.erase(first);
      return Finish(ctx, std::move(h));
    }
    // More enqueues while dequeues find nothing, fewer while they deliver:
    // the queue stays short, with workers racing for its items (a queue
    // that kept growing would only make every Dequeue list more).
    if (ctx.rng() % 100 < (found_nothing_ ? 60u : 25u)) return Enqueue(ctx);
    Dequeue(ctx);
  }

  std::string Check(const std::vector<Op>& history, Store& store) override {
    auto end = ReadEnd(store);
    if (!end.ok()) return "reading the queue at the end: " + end.status().ToString();
    end_ = std::move(*end);
    return CheckQueue(history, end_, kMaxDequeues);
  }

  std::string Summary(const std::vector<Op>& history) const override;

 private:
  static Result<WorkQueue> Open(const Store& store) {
    return WorkQueue::Open(store, kQueue, Options());
  }

  void Enqueue(WorkerContext& ctx) {
    const int64_t index = ctx.history.NextIndex();
    const std::string body = "w" + std::to_string(ctx.worker) + "g" + std::to_string(ctx.gen) +
                             "n" + std::to_string(index);
    std::vector<MicroOp> mops = {{"e", body, nullptr}};
    ctx.history.Invoke("enqueue", mops);
    auto q = Open(ctx.store);
    auto id = q.ok() ? q->Enqueue(body) : Result<std::string>(q.status());
    if (id.ok()) mops[0].value = *id;
    // An enqueue is a conditional write (If-None-Match *): Unavailable says
    // it did nothing (status.h), so it is a failure the checker holds to.
    ctx.history.Complete(index, "enqueue", OutcomeOf(id.status()), mops,
                         id.ok() ? "" : id.status().ToString());
  }

  void Dequeue(WorkerContext& ctx) {
    std::vector<MicroOp> mops = {{"d", "", nullptr}};
    const int64_t index = ctx.history.Invoke("dequeue", mops);
    auto q = Open(ctx.store);
    auto item = q.ok() ? q->Dequeue() : Result<std::optional<QueueItem>>(q.status());
    found_nothing_ = item.ok() && !*item;
    if (!item.ok() || !*item) {
      ctx.history.Complete(index, "dequeue", OutcomeOf(item.status()), mops,
                           item.ok() ? "" : item.status().ToString());
      return;
    }
    QueueItem& got = **item;
    mops[0] = {"d", got.body, {{"id", got.id}, {"count", got.dequeue_count}}};
    ctx.history.Complete(index, "dequeue", OpType::kOk, mops);
    const uint64_t dice = ctx.rng() % 100;
    Held h{std::move(got),
           dice < 60   ? Plan::kComplete
           : dice < 80 ? Plan::kAbandon
                       : Plan::kExtend,
           ClockOf(ctx.store).Steady()};
    const uint64_t work = ctx.rng() % 100;
    if (work < 45) return Finish(ctx, std::move(h));
    // Some work outlasts what the lease can be counted on (a tenth short of
    // the visibility), some the lease itself: then the item goes to
    // another worker, and this one's Complete must not also say OK.
    h.due += work < 85 ? Between(ctx.rng, 1, 3'000)
                       : Between(ctx.rng, kVisibility * 800, kVisibility * 1'300);
    held_.push_back(std::move(h));
  }

  // Completes, abandons, or extends (and holds again, to complete later).
  void Finish(WorkerContext& ctx, Held h) {
    const char* f = h.plan == Plan::kComplete  ? "complete"
                    : h.plan == Plan::kAbandon ? "abandon"
                                               : "extend";
    const char* kind = h.plan == Plan::kComplete ? "c" : h.plan == Plan::kAbandon ? "g" : "x";
    const std::vector<MicroOp> mops = {{kind, h.item.body, h.item.id}};
    const int64_t index = ctx.history.Invoke(f, mops);
    auto q = Open(ctx.store);
    Status s = !q.ok()                     ? q.status()
               : h.plan == Plan::kComplete ? q->Complete(h.item)
               : h.plan == Plan::kAbandon  ? q->Abandon(h.item)
                                           : q->Extend(&h.item);
    // Complete deletes under the delivery's lease, a conditional write:
    // OutcomeUnknown is "info"; NotFound, LeaseLost and Unavailable say it
    // did nothing.
    ctx.history.Complete(index, f, OutcomeOf(s), mops, s.ok() ? "" : s.ToString());
    if (h.plan != Plan::kExtend) return;
    // Completed after more work, whether the extension held or not (a
    // Complete after a refused Extend must not say OK either).
    h.plan = Plan::kComplete;
    h.due = ClockOf(ctx.store).Steady() + Between(ctx.rng, 1, 2'000);
    held_.push_back(std::move(h));
  }

  // The items and dead letters at the end, with their bodies.
  static Result<QueueEnd> ReadEnd(const Store& store) {
    auto q = Open(store);
    if (!q.ok()) return q.status();
    QueueEnd end;
    const int all = std::numeric_limits<int>::max();
    for (bool dead : {false, true}) {
      auto entries = dead ? q->DeadLetters(all) : q->List(all);
      if (!entries.ok()) return entries.status();
      for (const QueueEntry& e : *entries) {
        const std::string blob = dead ? internal::coord::QueueDeadName(kQueue, e.id)
                                      : internal::coord::QueueItemName(kQueue, e.id);
        auto got = store.blob_store().Get(blob, ReadOptions{});
        if (!got.ok()) return got.status().WithContext("reading " + blob);
        (dead ? end.dead : end.queued)[e.id] = QueueEnd::Item{got->data, e.dequeue_count};
      }
    }
    return end;
  }

  std::vector<Held> held_;     // a worker's deliveries still being "worked on"
  bool found_nothing_ = true;  // the last Dequeue found no visible item
  QueueEnd end_;               // the supervisor's: as the last Check read it
};

std::string QueueWorkload::Summary(const std::vector<Op>& history) const {
  // [ok, fail, info] of each kind of operation.
  std::map<std::string, std::array<uint64_t, 3>> n;
  uint64_t delivered = 0;
  for (const Op& op : history) {
    auto& c = n[op.f];
    ++c[op.type == OpType::kOk ? 0 : op.type == OpType::kFail ? 1 : 2];
    delivered +=
        op.f == "dequeue" && op.type == OpType::kOk && !op.mops.empty() && !op.mops[0].key.empty();
  }
  auto three = [&](const std::string& f) {
    const auto& c = n[f];
    return std::to_string(c[0]) + " ok / " + std::to_string(c[1]) + " failed / " +
           std::to_string(c[2]) + " unknown";
  };
  return "enqueues " + three("enqueue") + "; dequeues " + three("dequeue") + " (" +
         std::to_string(delivered) + " delivered an item); completes " + three("complete") +
         "; extends " + three("extend") + "; abandons " + three("abandon") + "; at the end " +
         std::to_string(end_.queued.size()) + " queued, " + std::to_string(end_.dead.size()) +
         " dead letters";
}

}  // namespace

std::unique_ptr<Workload> MakeQueueWorkload() { return std::make_unique<QueueWorkload>(); }

}  // namespace blobtable::stress
