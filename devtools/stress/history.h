// SPDX-License-Identifier: Apache-2.0
// The stress tool's history: every operation's invocation and completion,
// one JSON line each, written by the worker process that ran it, so that a
// worker killed mid-operation leaves an invocation without a completion (an
// outcome the checkers treat as unknown).
//
//   {"w":2,"g":1,"i":17,"t":123456789,"type":"invoke","f":"txn","mops":[["r","la/p0/a",null],
//    ["a","la/p1/b","w2g1n17"]]}
//   {"w":2,"g":1,"i":17,"t":123999999,"type":"ok","f":"txn","mops":[["r","la/p0/a",["w0g0n3"]],
//    ["a","la/p1/b","w2g1n17"]]}
//
// w: worker, g: its generation (restarts after a kill), i: its operation
// number, t: CLOCK_MONOTONIC nanoseconds (one clock for every process of the
// machine). type: invoke, ok (acknowledged), fail (certainly no effect),
// info (outcome unknown). A micro-operation is [kind, key, value]: "r" a
// read (value: the list read, null at invocation), "a" an append (value:
// the element), "t" a transfer's [from, to, amount] (amount "all": a close),
// "b" a balance read, and the bank's plain writes that move no money, value
// null: "n" a note merged, "o" an empty account opened, "z" an empty one
// deleted. The queue and lock workloads' kinds are in coord_check.h.
#ifndef BLOBTABLE_DEVTOOLS_STRESS_HISTORY_H_
#define BLOBTABLE_DEVTOOLS_STRESS_HISTORY_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "blobtable/status.h"

namespace blobtable::stress {

enum class OpType { kInvoke, kOk, kFail, kInfo };

// How a call's Status reads as an outcome: OK -> ok; OutcomeUnknown (and
// failures from inside a process: Internal, IOError) -> info; every other
// code says nothing was done -> fail.
OpType OutcomeOf(const Status& s);

struct MicroOp {
  std::string kind;  // "r", "a", "t", "b", "n", "o", "z"
  std::string key;
  nlohmann::json value;  // null when not known
};

// One operation as the checkers see it: its invocation and its completion
// paired (no completion: info, ended never).
struct Op {
  int worker = 0, gen = 0;
  int64_t index = 0;
  std::string f;  // "txn", "append", "read", "query", "transfer", "read-all", "write"
  OpType type = OpType::kInfo;
  uint64_t start = 0, end = UINT64_MAX;
  std::vector<MicroOp> mops;  // the completion's if there is one, else the invocation's
  std::string error;          // the status text of a failure
  std::string Describe() const;
};

uint64_t MonotonicNs();

// Appends one process's events to its file (O_APPEND, one write per line:
// a SIGKILL loses at most the line being written).
class HistoryWriter {
 public:
  HistoryWriter(const std::string& path, int worker, int gen);
  ~HistoryWriter();
  Status status() const { return status_; }
  // The index the next operation gets (to name what it writes), and its
  // invocation.
  int64_t NextIndex() const { return next_; }
  int64_t Invoke(const std::string& f, const std::vector<MicroOp>& mops);
  void Complete(int64_t index, const std::string& f, OpType type, const std::vector<MicroOp>& mops,
                const std::string& error = "");
  // A line of resource figures (soak mode): {"type":"stat",...}.
  void Stat(int64_t rss_kb, int64_t fds);
  // A fault the fault injector reported: {"type":"fault","line":...}.
  void Fault(const std::string& line);

 private:
  void Write(const nlohmann::json& j);
  int fd_ = -1;
  int worker_, gen_;
  int64_t next_ = 0;
  Status status_;
};

// Every history file in `dir`, paired into operations (in order of start).
Result<std::vector<Op>> ReadHistory(const std::string& dir);

// Resource figures each worker process reported, by "w/g": after its
// warm-up (its second report, if it made two) and last.
struct ResourceFigures {
  int64_t first_rss_kb = 0, last_rss_kb = 0, first_fds = 0, last_fds = 0;
  int reports = 0;
};
Result<std::vector<std::pair<std::string, ResourceFigures>>> ReadStats(const std::string& dir);

// Faults injected, as the workers' histories recorded them.
Result<uint64_t> CountFaults(const std::string& dir);

}  // namespace blobtable::stress

#endif  // BLOBTABLE_DEVTOOLS_STRESS_HISTORY_H_
