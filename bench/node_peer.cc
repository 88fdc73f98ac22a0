// SPDX-License-Identifier: Apache-2.0
#include "bench/node_peer.h"

#include <nlohmann/json.hpp>

#include <cstdio>

namespace bench {

using blobtable::Result;
using blobtable::Status;

namespace {

// One shell word: every argument single-quoted (a connection string holds
// ';' and '=').
std::string Quoted(const std::string& arg) {
  std::string out = "'";
  for (char c : arg) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

}  // namespace

Result<Sample> RunNodePeer(const std::string& script, const std::vector<std::string>& args) {
  std::string command = "node " + Quoted(script);
  for (const std::string& a : args) command += " " + Quoted(a);
  FILE* p = popen(command.c_str(), "r");
  if (p == nullptr) return Status::IOError("cannot run " + command);
  std::string out;
  char buf[65536];
  size_t got;
  while ((got = fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, got);
  if (pclose(p) != 0) return Status::Internal("a JavaScript peer failed: " + command);
  auto j = nlohmann::json::parse(out, nullptr, /*allow_exceptions=*/false);
  if (j.is_object() && j.empty()) return Sample{};
  if (j.is_discarded() || !j.contains("latencies_us") || !j.contains("ops"))
    return Status::Internal("a JavaScript peer printed no result: " + out.substr(0, 200));
  Sample s;
  try {
    s.ops = j["ops"].get<int64_t>();
    s.seconds = j["seconds"].get<double>();
    s.cpu_seconds = j["cpu_seconds"].get<double>();
    s.latencies_us = j["latencies_us"].get<std::vector<double>>();
    if (j.contains("requests")) s.requests = j["requests"].get<int64_t>();
  } catch (const nlohmann::json::exception& e) {
    return Status::Internal(std::string("a JavaScript peer's result: ") + e.what());
  }
  return s;
}

}  // namespace bench
