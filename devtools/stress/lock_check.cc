// SPDX-License-Identifier: Apache-2.0
// The lock workload's checker (coord_check.h): tokens only go up, the fence
// never lets an older token write after a newer one, no increment is lost.
#include <algorithm>

#include "devtools/stress/coord_check.h"

namespace blobtable::stress {
namespace {

struct Acquisition {
  const Op* op;
  int64_t token;
};

// An increment that was OK, and what it read and wrote.
struct Increment {
  const Op* op;
  int64_t token, read, read_token;
};

std::optional<int64_t> IntAt(const nlohmann::json& v, const char* key) {
  if (!v.is_object() || !v.contains(key) || !v[key].is_number_integer()) return std::nullopt;
  return v[key].get<int64_t>();
}

// Every OK acquisition has its own token, larger than the token of every
// acquisition that ended before it began.
std::string CheckTokens(std::vector<Acquisition> acquired) {
  std::map<int64_t, const Op*> by_token;
  for (const Acquisition& a : acquired) {
    if (a.token <= 0)
      return "an acquisition with token " + std::to_string(a.token) + ": " + a.op->Describe();
    auto [it, fresh] = by_token.emplace(a.token, a.op);
    if (!fresh)
      return "two acquisitions got token " + std::to_string(a.token) + ": " +
             it->second->Describe() + " and " + a.op->Describe();
  }
  std::vector<Acquisition> by_end = acquired;
  std::sort(by_end.begin(), by_end.end(),
            [](const Acquisition& a, const Acquisition& b) { return a.op->end < b.op->end; });
  std::sort(acquired.begin(), acquired.end(),
            [](const Acquisition& a, const Acquisition& b) { return a.op->start < b.op->start; });
  // Sweep in order of start, keeping the largest token of those ended.
  const Acquisition* newest = nullptr;
  size_t ended = 0;
  for (const Acquisition& a : acquired) {
    for (; ended < by_end.size() && by_end[ended].op->end < a.op->start; ++ended)
      if (newest == nullptr || by_end[ended].token > newest->token) newest = &by_end[ended];
    if (newest != nullptr && a.token <= newest->token)
      return "a token not larger than an earlier acquisition's: " + a.op->Describe() +
             " began after " + newest->op->Describe() + " ended";
  }
  return "";
}

// The OK increments form the counter's chain of versions: each wrote the
// value it read plus one, at the version it read, so no two wrote the same
// value, and the tokens recorded never go back along the chain.
std::string CheckChain(const std::vector<Increment>& ok) {
  std::map<int64_t, const Increment*> by_value;  // the value written
  for (const Increment& i : ok) {
    if (i.read_token > i.token)
      return "FencedUpdate accepted an older token after a newer holder wrote: " +
             i.op->Describe() + " wrote with token " + std::to_string(i.token) + " over token " +
             std::to_string(i.read_token);
    auto [it, fresh] = by_value.emplace(i.read + 1, &i);
    if (!fresh)
      return "an increment lost: two increments that were OK both read " + std::to_string(i.read) +
             ": " + it->second->op->Describe() + " and " + i.op->Describe();
  }
  const Increment* before = nullptr;
  for (const auto& [value, i] : by_value) {
    if (before != nullptr && i->token < before->token)
      return "the counter's token went back: " + before->op->Describe() + " wrote " +
             std::to_string(before->read + 1) + " with token " + std::to_string(before->token) +
             ", then " + i->op->Describe() + " wrote " + std::to_string(value) +
             " with the older token " + std::to_string(i->token);
    // It read the version the one before wrote: it saw that one's token.
    if (before != nullptr && before->read + 1 == i->read && i->read_token != before->token)
      return "an increment read value " + std::to_string(i->read) + " with token " +
             std::to_string(i->read_token) + ", but that value was written with token " +
             std::to_string(before->token) + ": " + before->op->Describe() + ", then " +
             i->op->Describe();
    before = i;
  }
  return "";
}

// The counter at the end counts every OK increment and some of those of
// unknown outcome, and holds the newest token written.
std::string CheckEnd(const std::vector<Increment>& ok, uint64_t unknown, const CounterEnd& end) {
  const int64_t acknowledged = static_cast<int64_t>(ok.size());
  if (end.value < acknowledged)
    return "increments lost: the counter is " + std::to_string(end.value) + " at the end, but " +
           std::to_string(acknowledged) + " increments were OK";
  if (end.value > acknowledged + static_cast<int64_t>(unknown))
    return "the counter is " + std::to_string(end.value) + " at the end: more than the " +
           std::to_string(acknowledged) + " increments that were OK and the " +
           std::to_string(unknown) + " of unknown outcome";
  for (const Increment& i : ok) {
    if (i.read + 1 > end.value)
      return "an increment wrote " + std::to_string(i.read + 1) + ", more than the counter's " +
             std::to_string(end.value) + " at the end: " + i.op->Describe();
    if (i.token > end.token)
      return "the counter's token went back: it is " + std::to_string(end.token) +
             " at the end, but " + i.op->Describe() + " wrote with token " +
             std::to_string(i.token);
  }
  return "";
}

}  // namespace

std::string CheckLock(const std::vector<Op>& history, const CounterEnd& end) {
  std::vector<Acquisition> acquired;
  std::vector<Increment> ok;
  uint64_t unknown = 0;
  for (const Op& op : history) {
    if (op.mops.size() != 1 || op.type != OpType::kOk) {
      unknown += op.f == "incr" && op.type == OpType::kInfo;
      continue;
    }
    const nlohmann::json& v = op.mops[0].value;
    if (op.f == "acquire") {
      if (!v.is_number_integer()) return "an acquisition without its token: " + op.Describe();
      acquired.push_back({&op, v.get<int64_t>()});
    } else if (op.f == "incr") {
      const auto token = IntAt(v, "token"), read = IntAt(v, "read"),
                 read_token = IntAt(v, "read_token");
      if (!token || !read || !read_token)
        return "an increment that was OK without what it read: " + op.Describe();
      ok.push_back({&op, *token, *read, *read_token});
    }
  }
  if (std::string v = CheckTokens(std::move(acquired)); !v.empty()) return v;
  if (std::string v = CheckChain(ok); !v.empty()) return v;
  return CheckEnd(ok, unknown, end);
}

}  // namespace blobtable::stress
