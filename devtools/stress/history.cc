// SPDX-License-Identifier: Apache-2.0
#include "devtools/stress/history.h"

#include <fcntl.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <tuple>

namespace blobtable::stress {

using json = nlohmann::json;

OpType OutcomeOf(const Status& s) {
  switch (s.code()) {
    case Code::kOk: return OpType::kOk;
    case Code::kOutcomeUnknown:
    case Code::kInternal:
    case Code::kIOError: return OpType::kInfo;
    default: return OpType::kFail;
  }
}

namespace {

const char* TypeName(OpType t) {
  switch (t) {
    case OpType::kInvoke: return "invoke";
    case OpType::kOk: return "ok";
    case OpType::kFail: return "fail";
    case OpType::kInfo: return "info";
  }
  return "?";
}

json MopsJson(const std::vector<MicroOp>& mops) {
  json out = json::array();
  for (const MicroOp& m : mops) out.push_back(json::array({m.kind, m.key, m.value}));
  return out;
}

std::vector<MicroOp> MopsOf(const json& j) {
  std::vector<MicroOp> out;
  if (!j.is_array()) return out;
  for (const json& m : j)
    if (m.is_array() && m.size() == 3 && m[0].is_string() && m[1].is_string())
      out.push_back(MicroOp{m[0].get<std::string>(), m[1].get<std::string>(), m[2]});
  return out;
}

}  // namespace

std::string Op::Describe() const {
  std::string s = "w" + std::to_string(worker) + "g" + std::to_string(gen) + "#" +
                  std::to_string(index) + " " + f + " " + TypeName(type) + " " +
                  MopsJson(mops).dump();
  if (!error.empty()) s += " (" + error + ")";
  return s;
}

uint64_t MonotonicNs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1'000'000'000u + static_cast<uint64_t>(ts.tv_nsec);
}

HistoryWriter::HistoryWriter(const std::string& path, int worker, int gen)
    : worker_(worker), gen_(gen) {
  fd_ = open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd_ < 0) status_ = Status::IOError("cannot open " + path + ": " + std::strerror(errno));
}

HistoryWriter::~HistoryWriter() {
  if (fd_ >= 0) close(fd_);
}

void HistoryWriter::Write(const json& j) {
  if (fd_ < 0) return;
  const std::string line = j.dump(-1, ' ', false, json::error_handler_t::replace) + "\n";
  if (write(fd_, line.data(), line.size()) != static_cast<ssize_t>(line.size()) && status_.ok())
    status_ = Status::IOError(std::string("writing the history: ") + std::strerror(errno));
}

int64_t HistoryWriter::Invoke(const std::string& f, const std::vector<MicroOp>& mops) {
  const int64_t i = next_++;
  Write({{"w", worker_},
         {"g", gen_},
         {"i", i},
         {"t", MonotonicNs()},
         {"type", "invoke"},
         {"f", f},
         {"mops", MopsJson(mops)}});
  return i;
}

void HistoryWriter::Complete(int64_t index, const std::string& f, OpType type,
                             const std::vector<MicroOp>& mops, const std::string& error) {
  json j = {{"w", worker_},
            {"g", gen_},
            {"i", index},
            {"t", MonotonicNs()},
            {"type", TypeName(type)},
            {"f", f},
            {"mops", MopsJson(mops)}};
  if (!error.empty()) j["error"] = error;
  Write(j);
}

void HistoryWriter::Stat(int64_t rss_kb, int64_t fds) {
  Write({{"w", worker_},
         {"g", gen_},
         {"t", MonotonicNs()},
         {"type", "stat"},
         {"rss_kb", rss_kb},
         {"fds", fds}});
}

void HistoryWriter::Fault(const std::string& line) {
  Write({{"w", worker_}, {"g", gen_}, {"type", "fault"}, {"line", line}});
}

namespace {

// Calls fn(json) for every well-formed line of every history file in `dir`
// (a line cut short by a kill is skipped).
template <typename Fn>
Status ForEachEvent(const std::string& dir, Fn&& fn) {
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    if (entry.path().extension() != ".jsonl") continue;
    std::ifstream in(entry.path());
    for (std::string line; std::getline(in, line);) {
      json j = json::parse(line, nullptr, /*allow_exceptions=*/false);
      if (!j.is_discarded() && j.is_object() && j.contains("type")) fn(j);
    }
  }
  if (ec) return Status::IOError("reading " + dir + ": " + ec.message());
  return Status::OK();
}

}  // namespace

Result<std::vector<Op>> ReadHistory(const std::string& dir) {
  std::map<std::tuple<int, int, int64_t>, Op> ops;
  Status s = ForEachEvent(dir, [&](const json& j) {
    const std::string type = j.value("type", "");
    if (type == "stat" || !j.contains("i")) return;
    auto key = std::make_tuple(j.value("w", 0), j.value("g", 0), j.value("i", int64_t{0}));
    Op& op = ops[key];
    std::tie(op.worker, op.gen, op.index) = key;
    op.f = j.value("f", "");
    if (type == "invoke") {
      op.start = j.value("t", uint64_t{0});
      if (op.mops.empty()) op.mops = MopsOf(j["mops"]);
      return;
    }
    op.end = j.value("t", uint64_t{0});
    op.type = type == "ok" ? OpType::kOk : type == "fail" ? OpType::kFail : OpType::kInfo;
    op.mops = MopsOf(j["mops"]);
    op.error = j.value("error", "");
  });
  if (!s.ok()) return s;
  std::vector<Op> out;
  out.reserve(ops.size());
  for (auto& [key, op] : ops) out.push_back(std::move(op));
  std::sort(out.begin(), out.end(), [](const Op& a, const Op& b) { return a.start < b.start; });
  return out;
}

Result<std::vector<std::pair<std::string, ResourceFigures>>> ReadStats(const std::string& dir) {
  std::map<std::string, ResourceFigures> figures;
  Status s = ForEachEvent(dir, [&](const json& j) {
    if (j.value("type", "") != "stat") return;
    const std::string who = std::to_string(j.value("w", 0)) + "/" + std::to_string(j.value("g", 0));
    ResourceFigures& f = figures[who];
    const int64_t rss = j.value("rss_kb", int64_t{0}), fds = j.value("fds", int64_t{0});
    if (++f.reports <= 2) {  // the second report is the one after warming up
      f.first_rss_kb = rss;
      f.first_fds = fds;
    }
    f.last_rss_kb = rss;
    f.last_fds = fds;
  });
  if (!s.ok()) return s;
  return std::vector<std::pair<std::string, ResourceFigures>>(figures.begin(), figures.end());
}

Result<uint64_t> CountFaults(const std::string& dir) {
  uint64_t n = 0;
  Status s = ForEachEvent(dir, [&](const json& j) { n += j.value("type", "") == "fault"; });
  if (!s.ok()) return s;
  return n;
}

}  // namespace blobtable::stress
