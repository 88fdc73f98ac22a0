// SPDX-License-Identifier: Apache-2.0
// A history of single-entity operations and transactions over a few keys, and
// a checker for strict serializability: is there one serial order of the
// operations, consistent with real time (an operation that ended before
// another began comes first), in which every acknowledged operation has the
// effect and the answer it had? Operations whose outcome is unknown (the
// caller was killed, or was told "outcome unknown") may be in it or not, but
// wholly. Failures that assert something about the state ("not found",
// "already exists") are checked too; failures that changed nothing and assert
// nothing (Busy, LockTimeout, a transaction's Conflict) are left out.
//
// Each write stores a unique version id, so the checker sees which write a
// read observed. The search is exhaustive with memoisation, meant for small
// histories (up to ~24 operations).
#ifndef BLOBTABLE_DEVTOOLS_STRESS_SIM_HISTORY_CHECKER_H_
#define BLOBTABLE_DEVTOOLS_STRESS_SIM_HISTORY_CHECKER_H_

#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace blobtable::sim {

// What a key holds: a version id, or nothing.
using Version = std::optional<std::string>;

struct HistOp {
  // kMerge sets a second part of the value and keeps the first: the value it
  // leaves is "<base>+<value>", where <base> is what it found before any '+'.
  enum class Kind { kGet, kInsert, kReplace, kUpsert, kDelete, kMerge };
  Kind kind = Kind::kGet;
  std::string key;
  std::string value;  // the version a write stores
  // The condition of a Replace or Delete: any existing version (nullopt) or
  // exactly this one.
  std::optional<std::string> if_version;
  Version observed;  // kGet: what it returned
};

struct HistEntry {
  enum class Outcome {
    kOk,        // acknowledged: happened, with its answers
    kAbsent,    // failed with "not found": the key was absent at some point
    kExists,    // failed with "already exists": the key was present
    kNoEffect,  // failed and asserts nothing: left out
    kUnknown,   // may or may not have happened (wholly)
  };
  std::string who;   // actor and operation, for messages
  bool txn = false;  // a transaction: ops apply at one point, reads first
  std::vector<HistOp> ops;
  Outcome outcome = Outcome::kNoEffect;
  std::string detail;  // the status text
  uint64_t start = 0;
  uint64_t end = std::numeric_limits<uint64_t>::max();  // max: never returned
};

class History {
 public:
  void SetInitial(const std::string& key, Version v) { initial_[key] = std::move(v); }
  Version initial(const std::string& key) const {
    auto it = initial_.find(key);
    return it == initial_.end() ? std::nullopt : it->second;
  }
  size_t Add(HistEntry e) {
    entries_.push_back(std::move(e));
    return entries_.size() - 1;
  }
  HistEntry& at(size_t i) { return entries_[i]; }
  const std::vector<HistEntry>& entries() const { return entries_; }

  // Empty if a serial order exists and every transaction's Conflict is
  // explained; otherwise why not, with the history.
  std::string Check() const;
  // A transaction's Conflict says another client wrote one of its entities
  // while it ran: some other operation that writes one of its keys, or
  // another transaction that reads one, must overlap it in time (one never
  // answered overlaps everything after its start). One with none is the
  // protocol's own rewrite taken for a write (issue 29). Empty if every
  // Conflict is explained ("already exists" states a fact: not checked).
  std::string UnexplainedConflicts() const;
  std::string Describe() const;

 private:
  std::map<std::string, Version> initial_;
  std::vector<HistEntry> entries_;
};

}  // namespace blobtable::sim

#endif  // BLOBTABLE_DEVTOOLS_STRESS_SIM_HISTORY_CHECKER_H_
