// SPDX-License-Identifier: Apache-2.0
// The queue workload's checker (coord_check.h): exactly one Complete says
// OK, nothing lost, nothing invented.
#include "devtools/stress/coord_check.h"

namespace blobtable::stress {
namespace {

// Everything the history and the end say about one item (one body).
struct ItemHistory {
  const Op* enqueue = nullptr;
  std::vector<const Op*> deliveries;       // dequeues that were OK and delivered it
  std::vector<const Op*> completes;        // every Complete of it, whatever its outcome
  std::map<std::string, std::string> ids;  // id -> where it was seen
  const QueueEnd::Item* queued = nullptr;
  const QueueEnd::Item* dead = nullptr;
};

std::string DescribeAll(const std::vector<const Op*>& ops) {
  std::string s;
  for (const Op* op : ops) s += (s.empty() ? "" : "; ") + op->Describe();
  return s.empty() ? "(none)" : s;
}

std::string IdOf(const MicroOp& m) {
  if (m.value.is_string()) return m.value.get<std::string>();
  if (m.value.is_object() && m.value.contains("id") && m.value["id"].is_string())
    return m.value["id"].get<std::string>();
  return "";
}

// Gathers the history and the end by item.
std::map<std::string, ItemHistory> ByItem(const std::vector<Op>& history, const QueueEnd& end) {
  std::map<std::string, ItemHistory> items;
  for (const Op& op : history) {
    if (op.mops.size() != 1) continue;
    const MicroOp& m = op.mops[0];
    const std::string id = IdOf(m);
    if (op.f == "enqueue") {
      items[m.key].enqueue = &op;
      if (op.type == OpType::kOk && !id.empty()) items[m.key].ids.emplace(id, op.Describe());
    } else if (op.f == "dequeue" && op.type == OpType::kOk && !m.key.empty()) {
      items[m.key].deliveries.push_back(&op);
      if (!id.empty()) items[m.key].ids.emplace(id, op.Describe());
    } else if (op.f == "complete") {
      items[m.key].completes.push_back(&op);
    }
  }
  for (const auto& [id, item] : end.queued) {
    items[item.body].queued = &item;
    items[item.body].ids.emplace(id, "the queue at the end");
  }
  for (const auto& [id, item] : end.dead) {
    items[item.body].dead = &item;
    items[item.body].ids.emplace(id, "the dead letters at the end");
  }
  return items;
}

// Nothing delivered, completed or left at the end that no enqueue made
// (one that was OK or of unknown outcome), nor delivered before its
// enqueue began; one enqueue, one item.
std::string CheckInvented(const std::string& body, const ItemHistory& h) {
  const Op* seen = !h.deliveries.empty()  ? h.deliveries[0]
                   : !h.completes.empty() ? h.completes[0]
                                          : nullptr;
  const bool at_end = h.queued != nullptr || h.dead != nullptr;
  if (seen == nullptr && !at_end) return "";
  const std::string where = seen != nullptr       ? seen->Describe()
                            : h.queued != nullptr ? "the queue at the end"
                                                  : "the dead letters at the end";
  if (h.enqueue == nullptr) return "an item no enqueue made: item " + body + " in " + where;
  if (h.enqueue->type == OpType::kFail)
    return "an item whose enqueue failed (so did nothing) exists: item " + body + " in " + where +
           "; its enqueue " + h.enqueue->Describe();
  for (const Op* d : h.deliveries)
    if (d->end < h.enqueue->start)
      return "delivered before it was enqueued: item " + body + ": " + d->Describe() +
             " ended before " + h.enqueue->Describe() + " began";
  if (h.ids.size() > 1) {
    std::string s =
        "one enqueue made several items: item " + body + " (" + h.enqueue->Describe() + ") has ids";
    for (const auto& [id, at] : h.ids) s += " " + id + " (in " + at + ")";
    return s;
  }
  return "";
}

// Exactly one Complete says OK, and after it the item is gone for good.
std::string CheckCompletedOnce(const std::string& body, const ItemHistory& h) {
  std::vector<const Op*> ok;
  for (const Op* c : h.completes)
    if (c->type == OpType::kOk) ok.push_back(c);
  if (ok.empty()) return "";
  // A create retried after its answer was lost can make again an item
  // completed meanwhile: say so when the enqueue outlasted a completion.
  const std::string remade =
      h.enqueue != nullptr && h.enqueue->end > ok[0]->end
          ? "; its enqueue " + h.enqueue->Describe() + " ended only after that completion"
          : "";
  if (ok.size() > 1)
    return "completed OK twice: item " + body + ": " + ok[0]->Describe() + " and " +
           ok[1]->Describe() + "; its deliveries: " + DescribeAll(h.deliveries) + remade;
  for (const Op* d : h.deliveries)
    if (d->start > ok[0]->end)
      return "delivered after it was completed OK: item " + body + ": " + d->Describe() +
             " began after " + ok[0]->Describe() + " ended" + remade;
  if (h.queued != nullptr)
    return "completed OK, yet still in the queue at the end: item " + body + ": " +
           ok[0]->Describe() + remade;
  if (h.dead != nullptr)
    return "completed OK, yet a dead letter at the end: item " + body + ": " + ok[0]->Describe() +
           remade;
  return "";
}

// Each delivery has its own count, 1..max; the end counts no fewer.
std::string CheckCounts(const std::string& body, const ItemHistory& h, int max_dequeues) {
  std::map<int64_t, const Op*> by_count;
  for (const Op* d : h.deliveries) {
    const nlohmann::json& v = d->mops[0].value;
    const bool known = v.is_object() && v.contains("count") && v["count"].is_number_integer();
    const int64_t n = known ? v["count"].get<int64_t>() : 0;
    if (n < 1 || n > max_dequeues)
      return "a delivery with dequeue count " + std::to_string(n) + " (max_dequeues " +
             std::to_string(max_dequeues) + "): " + d->Describe();
    auto [it, fresh] = by_count.emplace(n, d);
    if (!fresh)
      return "two deliveries of one item with dequeue count " + std::to_string(n) + ": " +
             it->second->Describe() + " and " + d->Describe();
  }
  const int64_t delivered = by_count.empty() ? 0 : by_count.rbegin()->first;
  for (const QueueEnd::Item* at_end : {h.queued, h.dead})
    if (at_end != nullptr && at_end->dequeue_count < delivered)
      return "item " + body + " counts " + std::to_string(at_end->dequeue_count) +
             " dequeues at the end, but was delivered with count " + std::to_string(delivered) +
             ": " + by_count.rbegin()->second->Describe();
  if (h.dead != nullptr && h.dead->dequeue_count < max_dequeues)
    return "a dead letter dequeued only " + std::to_string(h.dead->dequeue_count) +
           " times (max_dequeues " + std::to_string(max_dequeues) + "): item " + body +
           "; its deliveries: " + DescribeAll(h.deliveries);
  return "";
}

// An item enqueued OK is completed OK, still queued, a dead letter, or
// named by a Complete of unknown outcome.
std::string CheckNotLost(const std::string& body, const ItemHistory& h) {
  if (h.enqueue == nullptr || h.enqueue->type != OpType::kOk) return "";
  if (h.queued != nullptr || h.dead != nullptr) return "";
  for (const Op* c : h.completes)
    if (c->type == OpType::kOk || c->type == OpType::kInfo) return "";
  return "lost: item " + body + " was enqueued OK (" + h.enqueue->Describe() +
         ") but no Complete of it said OK or had an unknown outcome, and it is neither in the "
         "queue nor a dead letter at the end; its deliveries: " +
         DescribeAll(h.deliveries) + "; its completes: " + DescribeAll(h.completes);
}

}  // namespace

std::string CheckQueue(const std::vector<Op>& history, const QueueEnd& end, int max_dequeues) {
  const std::map<std::string, ItemHistory> items = ByItem(history, end);
  // The rarest breaks first: an item that should not exist explains the
  // rest of what is wrong with it.
  for (const auto& [body, h] : items)
    if (std::string v = CheckInvented(body, h); !v.empty()) return v;
  for (const auto& [body, h] : items)
    if (std::string v = CheckCompletedOnce(body, h); !v.empty()) return v;
  for (const auto& [body, h] : items)
    if (std::string v = CheckCounts(body, h, max_dequeues); !v.empty()) return v;
  for (const auto& [body, h] : items)
    if (std::string v = CheckNotLost(body, h); !v.empty()) return v;
  return "";
}

}  // namespace blobtable::stress
