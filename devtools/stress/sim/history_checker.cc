// SPDX-License-Identifier: Apache-2.0
#include "devtools/stress/sim/history_checker.h"

#include <functional>
#include <sstream>
#include <unordered_set>

namespace blobtable::sim {
namespace {

using State = std::map<std::string, Version>;
using Kind = HistOp::Kind;
using Outcome = HistEntry::Outcome;

std::string Show(const Version& v) { return v ? *v : "(absent)"; }

// Whether `op`'s precondition and answer hold in `s`.
bool Holds(const HistOp& op, const State& s, bool check_reads) {
  auto it = s.find(op.key);
  const Version cur = it == s.end() ? Version{} : it->second;
  switch (op.kind) {
    case Kind::kGet: return !check_reads || cur == op.observed;
    case Kind::kInsert: return !cur.has_value();
    case Kind::kUpsert: return true;
    case Kind::kReplace:
    case Kind::kDelete:
    case Kind::kMerge: return cur.has_value() && (!op.if_version || *op.if_version == *cur);
  }
  return false;
}

void Apply(const HistOp& op, State& s) {
  switch (op.kind) {
    case Kind::kGet: break;
    case Kind::kInsert:
    case Kind::kUpsert:
    case Kind::kReplace: s[op.key] = op.value; break;
    case Kind::kDelete: s[op.key] = std::nullopt; break;
    case Kind::kMerge: {
      const std::string& cur = *s[op.key];
      s[op.key] = cur.substr(0, cur.find('+')) + "+" + op.value;
      break;
    }
  }
}

// Applies `e` in `s` if it can happen there; false if not.
bool Happen(const HistEntry& e, State& s) {
  const bool check_reads = e.outcome != Outcome::kUnknown;
  if (e.outcome == Outcome::kAbsent || e.outcome == Outcome::kExists) {
    auto it = s.find(e.ops.front().key);
    bool present = it != s.end() && it->second.has_value();
    return present == (e.outcome == Outcome::kExists);
  }
  for (const HistOp& op : e.ops)
    if (!Holds(op, s, check_reads)) return false;
  for (const HistOp& op : e.ops) Apply(op, s);
  return true;
}

std::string Encode(uint64_t mask, const State& s) {
  std::string k = std::to_string(mask);
  for (const auto& [key, v] : s) k += "|" + key + "=" + Show(v);
  return k;
}

}  // namespace

std::string History::Describe() const {
  std::ostringstream out;
  out << "initial:";
  for (const auto& [k, v] : initial_) out << " " << k << "=" << Show(v);
  out << "\n";
  for (size_t i = 0; i < entries_.size(); ++i) {
    const HistEntry& e = entries_[i];
    static const char* kOutcome[] = {"ok", "not-found", "exists", "no-effect", "unknown"};
    out << "  [" << i << "] " << e.who << " @" << e.start << ".."
        << (e.end == std::numeric_limits<uint64_t>::max() ? std::string("never")
                                                          : std::to_string(e.end))
        << " " << kOutcome[static_cast<int>(e.outcome)] << (e.txn ? " txn{" : " ");
    for (const HistOp& op : e.ops) {
      static const char* kKind[] = {"get", "insert", "replace", "upsert", "delete", "merge"};
      out << kKind[static_cast<int>(op.kind)] << "(" << op.key;
      if (op.kind == Kind::kGet)
        out << ")=" << Show(op.observed) << " ";
      else {
        if (!op.value.empty()) out << "," << op.value;
        if (op.if_version) out << ",if=" << *op.if_version;
        out << ") ";
      }
    }
    out << (e.txn ? "} " : "") << e.detail.substr(0, 160) << "\n";
  }
  return out.str();
}

namespace {
// "p0/a" for a status naming "entity (PartitionKey 'p0', RowKey 'a')"; ""
// if it names none.
std::string NamedKey(const std::string& detail) {
  const std::string pk = "(PartitionKey '", rk = "', RowKey '";
  const size_t at = detail.find(pk);
  if (at == std::string::npos) return "";
  const size_t mid = detail.find(rk, at + pk.size());
  const size_t end = mid == std::string::npos ? mid : detail.find("')", mid + rk.size());
  if (end == std::string::npos) return "";
  return detail.substr(at + pk.size(), mid - at - pk.size()) + "/" +
         detail.substr(mid + rk.size(), end - mid - rk.size());
}
}  // namespace

std::string History::UnexplainedConflicts() const {
  // Another client at work on the key: a write, or a transaction that reads
  // it (its intent fences the key like a write's, so the two contend). A
  // plain read is not: it writes nothing of its own.
  auto contends = [](const HistEntry& e, const std::string& key) {
    for (const HistOp& op : e.ops)
      if ((e.txn || op.kind != HistOp::Kind::kGet) && op.key == key) return true;
    return false;
  };
  std::string out;
  for (const HistEntry& t : entries_) {
    // "already exists": an insert that found the entity, a fact about the
    // state rather than about another writer at work.
    if (!t.txn || t.detail.rfind("Conflict", 0) != 0 ||
        t.detail.find("already exists") != std::string::npos)
      continue;
    // The entity the Conflict names, where it names one: only a client at
    // work on that one explains it (a live coordinator aborted by a
    // recoverer was told "written by another client" about an entity
    // nobody wrote: violation 3 of issue 54).
    const std::string named = NamedKey(t.detail);
    bool explained = false;
    for (const HistEntry& o : entries_) {
      if (&o == &t || o.start >= t.end || o.end <= t.start) continue;
      for (const HistOp& op : t.ops)
        explained = explained || ((named.empty() || named == op.key) && contends(o, op.key));
    }
    if (!explained)
      out += t.who + " failed with a Conflict no other write explains: " + t.detail + "\n";
  }
  return out;
}

std::string History::Check() const {
  if (std::string unexplained = UnexplainedConflicts(); !unexplained.empty())
    return unexplained + Describe();
  std::vector<const HistEntry*> es;
  for (const HistEntry& e : entries_)
    if (e.outcome != Outcome::kNoEffect) es.push_back(&e);
  if (es.size() > 63) return "history too long to check (" + std::to_string(es.size()) + ")";
  const uint64_t all = es.size() == 64 ? ~0ull : (1ull << es.size()) - 1;
  std::vector<uint64_t> preds(es.size(), 0);
  for (size_t i = 0; i < es.size(); ++i)
    for (size_t j = 0; j < es.size(); ++j)
      if (es[j]->end < es[i]->start) preds[i] |= 1ull << j;

  std::unordered_set<std::string> dead_ends;
  std::function<bool(uint64_t, const State&)> search = [&](uint64_t placed, const State& s) {
    if (placed == all) return true;
    if (!dead_ends.insert(Encode(placed, s)).second) return false;
    for (size_t i = 0; i < es.size(); ++i) {
      const uint64_t bit = 1ull << i;
      if ((placed & bit) || (preds[i] & ~placed)) continue;
      if (es[i]->outcome == Outcome::kUnknown && search(placed | bit, s)) return true;  // left out
      State next = s;
      if (Happen(*es[i], next) && search(placed | bit, next)) return true;
    }
    return false;
  };
  State start(initial_.begin(), initial_.end());
  if (search(0, start)) return "";
  return "no serial order (consistent with real time) explains this history:\n" + Describe();
}

}  // namespace blobtable::sim
