// SPDX-License-Identifier: Apache-2.0
// A stress worker process, and the options every process opens the store
// with.
#include <dirent.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <fstream>
#include <iostream>
#include <memory>
#include <thread>

#include "blobtable/store.h"
#include "devtools/stress/scaled_clock.h"
#include "devtools/stress/stress.h"
#include "devtools/stress/workload.h"
#include "util/random.h"
#include "testing/hooks.h"

namespace blobtable::stress {
namespace {

std::atomic<bool> g_stop{false};

void OnTerm(int) { g_stop.store(true); }

int64_t RssKb() {
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);)
    if (line.rfind("VmRSS:", 0) == 0) return std::stoll(line.substr(6));
  return -1;
}

int64_t OpenFds() {
  int64_t n = 0;
  if (DIR* d = opendir("/proc/self/fd")) {
    while (dirent* e = readdir(d))
      if (e->d_name[0] != '.') ++n;
    closedir(d);
  }
  return n - 1;  // the directory stream itself
}

}  // namespace

bool Config::azure() const { return IsConnectionString(store); }

FaultOptions Config::Faults() const {
  FaultOptions f;
  f.seed = internal::Mix64(
      seed ^ internal::Mix64(static_cast<uint64_t>(worker) << 32 | static_cast<uint64_t>(gen)));
  if (fault_rate <= 0) return f;
  f.rates.server_busy = fault_rate;
  f.rates.internal_error = 2 * fault_rate;
  f.rates.timeout = 2 * fault_rate;
  f.rates.reset_before = fault_rate;
  f.rates.reset_after = fault_rate;
  f.rates.lease_lost = 2 * fault_rate;
  return f;
}

StoreOptions Config::Options(Clock* clock) const {
  StoreOptions o;
  o.container = container;
  o.clock = clock;
  o.cache.enabled = cache;
  o.short_lived = short_lived;
  o.cache.directory = cache_dir;
  // A stale answer would be an old version by design: the checkers judge
  // answers that claim to be current.
  o.cache.read_policy.stale_if_error = false;
  o.busy_timeout = std::chrono::seconds(20 + lease_seconds);
  o.txn_lease_seconds = lease_seconds;
  o = internal::WithAtomicCommits(o, commit == "atomic" || (commit == "mixed" && worker % 2 == 0));
  if (commit == "mixed") {  // the coordinator's commit points beside every batch
    internal::TestingHooks hooks = internal::HooksOf(o);
    hooks.coordinator_commits_beside = true;
    o.testing = std::make_shared<const internal::TestingHooks>(hooks);
  }
  o.azure.retry.initial_delay = std::chrono::milliseconds(20);
  o.azure.retry.max_total = std::chrono::seconds(20);
  // Short enough for the proxy's stalls to outlast it without slowing a
  // run to a crawl.
  o.azure.request_timeout = std::chrono::seconds(proxy_fault_rate > 0 ? 2 : 10);
  o.warn = [](const std::string& m) { std::cerr << m << "\n"; };
  return o;
}

int RunWorker(const Config& c) {
  signal(SIGTERM, OnTerm);
  std::unique_ptr<Clock> scaled;
  if (c.clock_speed != 1)
    scaled =
        std::make_unique<ScaledClock>(c.clock_speed, c.clock_base_wall_ns, c.clock_base_steady_ns);
  const std::string base =
      c.work_dir + "/w" + std::to_string(c.worker) + "g" + std::to_string(c.gen);
  HistoryWriter history(base + ".jsonl", c.worker, c.gen);
  if (!history.status().ok()) {
    std::cerr << "stress worker: " << history.status().ToString() << "\n";
    return 2;
  }
  StoreOptions o = c.Options(scaled.get());
  if (c.fault_rate > 0) {
    FaultOptions faults = c.Faults();
    faults.log = [&history](const std::string& line) { history.Fault(line); };
    o.wrap_blob_store = [faults](std::shared_ptr<BlobStore> s) {
      return std::make_shared<FaultInjectingBlobStore>(std::move(s), faults);
    };
  }
  auto store = Store::Open(c.store, o);
  if (!store.ok()) {
    std::cerr << "stress worker: " << store.status().ToString() << "\n";
    return 2;
  }
  std::unique_ptr<Workload> workload = MakeWorkload(c.workload);
  std::mt19937_64 rng(c.Faults().seed);
  WorkerContext ctx{**store, rng, history, c.worker, c.gen, {}};
  ctx.txn.lease_seconds = c.lease_seconds;
  ctx.txn.lock_timeout = std::chrono::seconds(5);
  ctx.key_era_ns = static_cast<uint64_t>(c.KeySeconds() * 1e9);
  ctx.clock = scaled ? scaled.get() : Clock::Real();
  uint64_t ops = 0;
  int64_t next_stat = 0;
  const int64_t gap_ns = c.rate > 0 ? static_cast<int64_t>(1e9 / c.rate) : 0;
  int64_t next_op = static_cast<int64_t>(MonotonicNs());
  while (!g_stop.load() && static_cast<int64_t>(MonotonicNs()) < c.deadline_ns) {
    if (gap_ns > 0) {  // paced; a worker behind its pace does not burst to catch up
      const int64_t now = static_cast<int64_t>(MonotonicNs());
      next_op = std::max(next_op + gap_ns, now);
      if (next_op > now) std::this_thread::sleep_for(std::chrono::nanoseconds(next_op - now));
    }
    if (c.soak && static_cast<int64_t>(MonotonicNs()) >= next_stat) {
      history.Stat(RssKb(), OpenFds());
      next_stat = static_cast<int64_t>(MonotonicNs()) + 2'000'000'000;
    }
    workload->RunOne(ctx);
    ++ops;
  }
  if (c.soak) history.Stat(RssKb(), OpenFds());
  return history.status().ok() ? 0 : 2;
}

}  // namespace blobtable::stress
