// SPDX-License-Identifier: Apache-2.0
#include "bench/harness.h"

#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <mutex>
#include <thread>

namespace bench {
namespace {

using Steady = std::chrono::steady_clock;
using blobtable::Result;
using blobtable::Status;

// The medians over rounds of each rate any round reported, "a=1;b=0.5".
std::string MedianRates(const std::vector<Sample>& rounds) {
  std::map<std::string, std::vector<double>> by_name;
  for (const Sample& s : rounds)
    for (const auto& [name, value] : s.rates) by_name[name].push_back(value);
  std::string out;
  for (const auto& [name, values] : by_name) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%s%s=%.3g", out.empty() ? "" : ";", name.c_str(),
                  Quantile(values, 0.5));
    out += buf;
  }
  return out;
}

}  // namespace

double CpuSeconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  auto s = [](const timeval& t) { return static_cast<double>(t.tv_sec) + t.tv_usec / 1e6; };
  return s(u.ru_utime) + s(u.ru_stime);
}

double Quantile(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<size_t>(q * static_cast<double>(v.size())))];
}

Result<Sample> RunThreads(int threads, int64_t ops_per_thread,
                          const std::function<Status(int, int64_t)>& op) {
  std::vector<std::vector<double>> lat(threads);
  std::vector<Status> failed(threads);
  const double cpu0 = CpuSeconds();
  const auto t0 = Steady::now();
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&, t] {
      lat[t].reserve(static_cast<size_t>(ops_per_thread));
      for (int64_t i = 0; i < ops_per_thread; ++i) {
        const auto a = Steady::now();
        Status s = op(t, i);
        if (!s.ok()) {
          failed[t] = s;
          return;
        }
        lat[t].push_back(std::chrono::duration<double, std::micro>(Steady::now() - a).count());
      }
    });
  }
  for (auto& th : pool) th.join();
  Sample out;
  out.seconds = std::chrono::duration<double>(Steady::now() - t0).count();
  out.cpu_seconds = CpuSeconds() - cpu0;
  for (int t = 0; t < threads; ++t) {
    if (!failed[t].ok()) return failed[t];
    out.latencies_us.insert(out.latencies_us.end(), lat[t].begin(), lat[t].end());
  }
  out.ops = static_cast<int64_t>(out.latencies_us.size());
  return out;
}

Stopwatch::Stopwatch(int64_t requests_before)
    : requests0_(requests_before), cpu0_(CpuSeconds()), t0_(Steady::now()), t1_(t0_) {}

int64_t Stopwatch::Stop(int64_t requests_now) {
  t1_ = Steady::now();
  return requests_now - requests0_;
}

void Stopwatch::AddTo(Sample& s, int64_t requests_now) const {
  const double us = std::chrono::duration<double, std::micro>(t1_ - t0_).count();
  s.latencies_us.push_back(us);
  s.seconds += us / 1e6;
  s.cpu_seconds += CpuSeconds() - cpu0_;
  s.requests = std::max<int64_t>(s.requests, 0) + requests_now - requests0_;
  ++s.ops;
}

Result<std::vector<Row>> RunCells(const std::string& workload, const std::vector<std::string>& ops,
                                  int threads, const std::vector<MultiSystem>& systems,
                                  int rounds) {
  const size_t n = systems.size();
  // samples[op][system][round]
  std::vector<std::vector<std::vector<Sample>>> all(ops.size(),
                                                    std::vector<std::vector<Sample>>(n));
  for (int r = 0; r < rounds; ++r) {
    for (size_t k = 0; k < n; ++k) {
      const size_t s = (k + static_cast<size_t>(r)) % n;
      auto got = systems[s].run();
      if (got.ok() && got->size() != ops.size())
        got = Status::Internal("measured " + std::to_string(got->size()) + " operations, not " +
                               std::to_string(ops.size()));
      if (!got.ok())
        return got.status().WithContext(workload + " " + ops[0] + " " + systems[s].name);
      for (size_t o = 0; o < ops.size(); ++o) all[o][s].push_back(std::move((*got)[o]));
    }
  }
  std::vector<Row> rows;
  for (size_t o = 0; o < ops.size(); ++o) {
    const std::string& op = ops[o];
    const std::vector<std::vector<Sample>>& samples = all[o];
    auto rate = [](const Sample& s) { return s.seconds > 0 ? s.ops / s.seconds : 0; };
    for (size_t s = 0; s < n; ++s) {
      Row row;
      row.workload = workload;
      row.op = op;
      row.system = systems[s].name;
      row.threads = threads;
      row.reference = systems[0].name;
      std::vector<double> per_s, p50, p99, cpu, req, ratio;
      for (int r = 0; r < rounds; ++r) {
        const Sample& x = samples[s][r];
        per_s.push_back(rate(x));
        p50.push_back(Quantile(x.latencies_us, 0.5));
        p99.push_back(Quantile(x.latencies_us, 0.99));
        cpu.push_back(x.ops ? x.cpu_seconds * 1e6 / static_cast<double>(x.ops) : 0);
        if (x.requests >= 0 && x.ops) req.push_back(static_cast<double>(x.requests) / x.ops);
        const double ref = rate(samples[0][r]);
        ratio.push_back(rate(x) > 0 ? ref / rate(x) : 0);
      }
      row.ops_per_s = Quantile(per_s, 0.5);
      row.p50_us = Quantile(p50, 0.5);
      row.p99_us = Quantile(p99, 0.5);
      row.cpu_us_per_op = Quantile(cpu, 0.5);
      row.requests_per_op = req.empty() ? -1 : Quantile(req, 0.5);
      row.ratio = Quantile(ratio, 0.5);
      row.rates = MedianRates(samples[s]);
      rows.push_back(row);
    }
  }
  return rows;
}

Result<std::vector<Row>> RunCell(const std::string& workload, const std::string& op, int threads,
                                 const std::vector<System>& systems, int rounds) {
  std::vector<MultiSystem> one;
  for (const System& s : systems)
    one.push_back({s.name, [&s]() -> Result<std::vector<Sample>> {
                     auto got = s.run();
                     if (!got.ok()) return got.status();
                     return std::vector<Sample>{std::move(*got)};
                   }});
  return RunCells(workload, {op}, threads, one, rounds);
}

std::string ThreadKey(char stem, int thread, int64_t i) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%c%02d-%08lld", stem, thread, static_cast<long long>(i));
  return buf;
}

std::string RowKey(int64_t i) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "r%08lld", static_cast<long long>(i));
  return buf;
}

std::string ValueBytes(size_t bytes) {
  std::string value(bytes, '\0');
  for (size_t i = 0; i < value.size(); ++i) value[i] = static_cast<char>((i * 131 + 7) % 251);
  return value;
}

void PrintRows(const std::vector<Row>& rows, std::ostream& out) {
  char line[512];
  std::snprintf(line, sizeof line, "%-4s %-10s %3s  %-22s %11s %9s %9s %9s %8s  %s\n", "work", "op",
                "thr", "system", "ops/s", "p50 us", "p99 us", "cpu us", "req/op",
                "reference/this  rates");
  out << line;
  for (const Row& r : rows) {
    char req[16] = "-";
    if (r.requests_per_op >= 0) std::snprintf(req, sizeof req, "%.2f", r.requests_per_op);
    std::snprintf(
        line, sizeof line, "%-4s %-10s %3d  %-22s %11.0f %9.1f %9.1f %9.1f %8s  %.2f (%s)  %s\n",
        r.workload.c_str(), r.op.c_str(), r.threads, r.system.c_str(), r.ops_per_s, r.p50_us,
        r.p99_us, r.cpu_us_per_op, req, r.ratio, r.reference.c_str(), r.rates.c_str());
    out << line;
  }
}

void WriteCsv(const std::vector<Row>& rows, std::ostream& out) {
  out << "workload,op,threads,system,ops_per_s,p50_us,p99_us,cpu_us_per_op,requests_per_op,"
         "ratio,reference,rates\n";
  for (const Row& r : rows)
    out << r.workload << ',' << r.op << ',' << r.threads << ',' << r.system << ',' << r.ops_per_s
        << ',' << r.p50_us << ',' << r.p99_us << ',' << r.cpu_us_per_op << ',' << r.requests_per_op
        << ',' << r.ratio << ',' << r.reference << ',' << r.rates << '\n';
}

}  // namespace bench
