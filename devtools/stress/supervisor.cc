// SPDX-License-Identifier: Apache-2.0
// The stress supervisor: starts the workers (this program again, with
// --worker), kills and restarts them at random, and after each round
// recovers abandoned transactions and runs the workload's checker.
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <iostream>
#include <map>
#include <memory>
#include <random>
#include <thread>

#include "blobtable/store.h"
#include "storage/azure/azure_config.h"
#include "devtools/proxy/fault_proxy.h"
#include "devtools/stress/scaled_clock.h"
#include "devtools/stress/stress.h"
#include "devtools/stress/workload.h"
#include "txn/recovery.h"
#include "txn/txn_record.h"
#include "util/macros.h"
#include "util/stored_format.h"
#include "util/random.h"

namespace blobtable::stress {
namespace {

using std::chrono::milliseconds;

struct Counts {
  uint64_t ops = 0, ok = 0, fail = 0, unknown = 0, txns = 0, faults = 0;
};

class Supervisor {
 public:
  Supervisor(Config c, std::vector<std::string> argv, std::ostream& out)
      : c_(std::move(c)), argv_(std::move(argv)), out_(out), rng_(c_.seed) {}

  int Run() {
    if (c_.proxy_fault_rate > 0)
      if (std::string why = StartProxy(); !why.empty()) return Fail(why);
    if (c_.clock_speed != 1) {
      c_.clock_base_wall_ns = ScaledClock::RealWallNs();
      c_.clock_base_steady_ns = ScaledClock::RealSteadyNs();
      clock_ = std::make_unique<ScaledClock>(c_.clock_speed, c_.clock_base_wall_ns,
                                             c_.clock_base_steady_ns);
    }
    std::unique_ptr<Workload> workload = MakeWorkload(c_.workload);
    auto store = Store::Open(c_.store, c_.Options(clock_.get()));
    if (!store.ok()) return Fail("opening the store: " + store.status().ToString());
    if (Status s = workload->Setup(**store); !s.ok()) return Fail("setting up: " + s.ToString());
    store->reset();  // nothing of it is carried into the workers' fork
    const int rounds = std::max(1, static_cast<int>(c_.seconds / c_.round_seconds + 0.5));
    gens_.assign(static_cast<size_t>(c_.processes), 0);
    for (int round = 1; round <= rounds; ++round) {
      RunRound(c_.seconds / rounds);
      const Verdict verdict = CheckAll(*workload);
      if (!verdict.unchecked.empty()) {
        out_ << "stress: could not check round " << round << ": " << verdict.unchecked
             << "\nstress: the history is kept in " << c_.work_dir << std::endl;
        return 2;
      }
      const std::string& violation = verdict.violation;
      Counts n = Count();
      Report(round == rounds || !violation.empty() ? "run" : "round " + std::to_string(round), n,
             violation.empty() ? 0 : 1);
      if (std::string figures = workload->Summary(history_); !figures.empty())
        out_ << "stress: " << c_.workload << ": " << figures << std::endl;
      if (!violation.empty()) {
        out_ << "stress: VIOLATION: " << violation << "\nstress: the history is kept in "
             << c_.work_dir << "\n";
        return 1;
      }
    }
    if (c_.soak && !SoakFlat()) return 1;
    return 0;
  }

 private:
  int Fail(const std::string& why) {
    out_ << "stress: " << why << "\n";
    return 2;
  }

  // Puts the fault proxy between the workers and a storage endpoint on
  // 127.0.0.1 (the checks still go straight to it): the workers' connection
  // string names the proxy's port as its BlobEndpoint.
  std::string StartProxy() {
    const std::string loopback = "127.0.0.1:";
    auto config =
        c_.azure() ? internal::ParseConnectionString(c_.store) : Status::InvalidArgument("");
    const std::string endpoint = config.ok() ? config->blob_endpoint : "";
    const size_t at = endpoint.find(loopback);
    if (at == std::string::npos)
      return "--proxy-faults needs an Azure store on 127.0.0.1 (Azurite)";
    const size_t digits = at + loopback.size();
    const size_t end = endpoint.find_first_not_of("0123456789", digits);
    const int port = std::atoi(endpoint.substr(digits, end - digits).c_str());
    auto started = proxy::FaultProxy::Start(port, 0, c_.seed);
    if (!started.ok()) return started.status().ToString();
    proxy_ = std::move(*started);
    const int n = c_.proxy_fault_rate;
    for (auto [fault, rate] :
         {std::pair{proxy::ProxyFault::kAnswer503, n}, std::pair{proxy::ProxyFault::kLoseAnswer, n},
          std::pair{proxy::ProxyFault::kResetRequest, n},
          std::pair{proxy::ProxyFault::kResetResponse, n},
          std::pair{proxy::ProxyFault::kStall, 4 * n}})
      proxy_->InjectRate(fault, rate);
    proxy_->SetStall(std::chrono::seconds(c_.proxy_stall_seconds));
    const std::string named = loopback + std::to_string(port);
    const std::string proxied = loopback + std::to_string(proxy_->port());
    const size_t in_store = c_.store.find(named);
    worker_store_ = c_.store;
    if (in_store != std::string::npos)  // an explicit BlobEndpoint: its port replaced
      worker_store_.replace(in_store, named.size(), proxied);
    else  // UseDevelopmentStorage's implied endpoint, named (a key may appear once)
      worker_store_ += ";BlobEndpoint=" + endpoint.substr(0, at) + proxied +
                       (end == std::string::npos ? "" : endpoint.substr(end));
    return "";
  }

  pid_t Spawn(int worker) {
    std::vector<std::string> args = argv_;
    if (!worker_store_.empty()) {
      args.push_back("--store");
      args.push_back(worker_store_);
    }
    for (const std::string& a :
         {std::string("--worker"), std::to_string(worker), std::string("--gen"),
          std::to_string(gens_[worker]), std::string("--deadline-ns"), std::to_string(deadline_),
          std::string("--seed"), std::to_string(c_.seed), std::string("--work-dir"), c_.work_dir,
          std::string("--cache-dir"), c_.cache_dir, std::string("--clock-base-wall-ns"),
          std::to_string(c_.clock_base_wall_ns), std::string("--clock-base-steady-ns"),
          std::to_string(c_.clock_base_steady_ns)})
      args.push_back(a);
    pid_t pid = fork();
    if (pid == 0) {
      std::vector<char*> cargs;
      for (std::string& a : args) cargs.push_back(a.data());
      cargs.push_back(nullptr);
      execv("/proc/self/exe", cargs.data());
      _exit(127);
    }
    return pid;
  }

  // Workers run until the round's deadline; meanwhile one is SIGKILLed at
  // random moments (exponential gaps of mean kill_every) and restarted as
  // its next generation.
  void RunRound(double seconds) {
    deadline_ = static_cast<int64_t>(MonotonicNs()) + static_cast<int64_t>(seconds * 1e9);
    std::map<pid_t, int> running;
    for (int w = 0; w < c_.processes; ++w) running[Spawn(w)] = w;
    std::exponential_distribution<double> gap(c_.kill_every > 0 ? 1.0 / c_.kill_every : 1.0);
    double next_kill = c_.kill_every > 0 && !c_.soak ? gap(rng_) : 1e18;
    const int64_t started = static_cast<int64_t>(MonotonicNs());
    while (static_cast<int64_t>(MonotonicNs()) < deadline_) {
      std::this_thread::sleep_for(milliseconds(20));
      Reap(running, /*block=*/false);
      const double elapsed = (static_cast<int64_t>(MonotonicNs()) - started) / 1e9;
      if (elapsed < next_kill || running.empty()) continue;
      next_kill = elapsed + gap(rng_);
      auto victim = std::next(running.begin(), static_cast<long>(rng_() % running.size()));
      const int w = victim->second;
      kill(victim->first, SIGKILL);
      waitpid(victim->first, nullptr, 0);
      running.erase(victim);
      ++kills_;
      ++gens_[w];
      running[Spawn(w)] = w;
    }
    // They stop by themselves at the deadline (an operation may be waiting
    // out a lock); SIGTERM after a grace period, SIGKILL after another.
    WaitOut(running, 30 + 2 * c_.lease_seconds / c_.clock_speed, SIGTERM);
    WaitOut(running, 10, SIGKILL);
    for (auto& [pid, w] : running) {
      kill(pid, SIGKILL);
      ++kills_;
    }
    Reap(running, /*block=*/true);
    for (int& g : gens_) ++g;
  }

  void Reap(std::map<pid_t, int>& running, bool block) {
    for (auto it = running.begin(); it != running.end();) {
      int status = 0;
      if (waitpid(it->first, &status, block ? 0 : WNOHANG) == it->first) {
        if (WIFEXITED(status) && WEXITSTATUS(status) == 2) setup_errors_++;
        it = running.erase(it);
      } else {
        ++it;
      }
    }
  }

  void WaitOut(std::map<pid_t, int>& running, double seconds, int then) {
    const int64_t until = static_cast<int64_t>(MonotonicNs()) + static_cast<int64_t>(seconds * 1e9);
    while (!running.empty() && static_cast<int64_t>(MonotonicNs()) < until) {
      Reap(running, false);
      std::this_thread::sleep_for(milliseconds(20));
    }
    for (auto& [pid, w] : running) kill(pid, then);
  }

  // What transactions left that is not settled: records other than the
  // aborted ones kept as fences, and entities still holding an
  // intent.
  static Result<size_t> Unresolved(BlobStore& blobs) {
    size_t n = 0;
    for (const char* prefix : {internal::kRecordPrefix, internal::kTablePrefix}) {
      ListOptions list;
      list.prefix = prefix;
      int pages = 0;
      for (;;) {
        BT_ASSIGN_OR_RETURN(ListPage page, blobs.List(list));
        for (const BlobItem& item : page.items) {
          if (prefix == internal::kTablePrefix) {
            // An intent never leased may be one Recover does not see (its
            // coordinator died in round 1, perhaps before its record): the
            // sweep below settles those. A leased one it must find (P1).
            n += !internal::MarkingTransaction(item.properties).empty() &&
                         item.properties.lease_state == LeaseState::kLeased
                     ? 1
                     : 0;
            continue;
          }
          auto got = blobs.Get(item.name, {});
          if (got.status().IsNotFound()) continue;
          if (!got.ok()) return got.status();
          auto rec = internal::DecodeRecord(got->data, item.name);
          n += rec.ok() && rec->state == internal::TxnState::kAborted ? 0 : 1;
        }
        BT_ASSIGN_OR_RETURN(bool more, NextListPage(list, page, &pages));
        if (!more) break;
      }
    }
    return n;
  }

  struct Verdict {
    std::string violation;  // a guarantee broken
    std::string unchecked;  // storage could not be read to tell
  };

  // Recovers every abandoned transaction (waiting out the leases of killed
  // coordinators) from the records alone, which must leave no
  // leased intent and no committed record (P1), then checks the whole
  // history so far.
  Verdict CheckAll(Workload& workload) {
    StoreOptions o = c_.Options(clock_.get());
    o.cache.enabled = false;  // the state as storage holds it
    // Patient: a service loaded by the run just ended may answer slowly.
    o.azure.request_timeout = std::chrono::seconds(30);
    o.azure.retry.max_total = std::chrono::seconds(120);
    o.azure.retry.max_attempts = 10;
    auto store = Store::Open(c_.store, o);
    if (!store.ok()) return {"", "opening the store to check it: " + store.status().ToString()};
    const Clock& clock = clock_ ? *clock_ : *Clock::Real();
    const SteadyTime until = clock.Steady() + std::chrono::seconds(3 * c_.lease_seconds + 30);
    for (;;) {
      auto recovered = (*store)->Recover();
      auto left = Unresolved((*store)->blob_store());
      if (recovered.ok() && left.ok() && *left == 0) break;
      if (clock.Steady() >= until) {
        // Records left while storage answers are a violation; no answer is
        // no verdict.
        const Status& failed = !recovered.ok() ? recovered.status() : left.status();
        if (!failed.ok() && failed.IsUnavailable()) return {"", failed.ToString()};
        return {
            "transactions still unresolved after their leases ran out: " +
                (failed.ok() ? std::to_string(*left) + " records or intents" : failed.ToString()),
            ""};
      }
      clock.SleepFor(milliseconds(500));
    }
    // What no record names (intents of a coordinator killed in its first
    // round), settled by a sweep of every entity before the checks.
    RecoverOptions everything;
    everything.scan_everything = true;
    auto swept = (*store)->RecoverAndReport(everything);
    if (!swept.ok()) return {"", "recovering every entity: " + swept.status().ToString()};
    auto history = ReadHistory(c_.work_dir);
    if (!history.ok()) return {"", "reading the history: " + history.status().ToString()};
    history_ = std::move(*history);
    return {workload.Check(history_, **store), ""};
  }

  Counts Count() {
    Counts n;
    if (proxy_)
      for (int k = 0; k < proxy::kProxyFaultCount; ++k)
        n.faults += static_cast<uint64_t>(proxy_->injected(static_cast<proxy::ProxyFault>(k)));
    for (const Op& op : history_) {
      ++n.ops;
      n.ok += op.type == OpType::kOk;
      n.fail += op.type == OpType::kFail;
      n.unknown += op.type == OpType::kInfo;
      n.txns += op.f == "txn" || op.f == "transfer" || op.f == "read-all";
    }
    auto faults = CountFaults(c_.work_dir);
    n.faults += faults.ok() ? *faults : 0;
    return n;
  }

  void Report(const std::string& what, const Counts& n, int violations) {
    out_ << "stress: " << what << ": seed " << c_.seed << ", " << c_.workload << " on "
         << (c_.azure() ? "azure" : "local (" + c_.commit + " commits)")
         << (c_.cache ? " (cache)" : "") << ", " << c_.processes << " processes: " << n.ops
         << " operations (" << n.ok << " ok, " << n.fail << " failed, " << n.unknown
         << " unknown), " << n.txns << " transactions, " << n.faults << " faults injected, "
         << kills_ << " processes killed, violations: " << violations
         << std::endl;  // a line as each round ends, even into a file
    if (setup_errors_ > 0)
      out_ << "stress: warning: " << setup_errors_ << " worker(s) could not start\n";
  }

  // Soak: resident memory and descriptors after warm-up against the end.
  bool SoakFlat() {
    auto stats = ReadStats(c_.work_dir);
    if (!stats.ok()) return false;
    bool flat = true;
    for (const auto& [who, f] : *stats) {
      const bool ok = f.last_fds <= f.first_fds + 4 &&
                      f.last_rss_kb <= f.first_rss_kb + f.first_rss_kb / 2 + 16 * 1024;
      out_ << "stress: soak: worker " << who << ": rss " << f.first_rss_kb << " -> "
           << f.last_rss_kb << " KiB, fds " << f.first_fds << " -> " << f.last_fds
           << (ok ? "" : "  GREW") << "\n";
      flat = flat && ok;
    }
    return flat;
  }

  Config c_;
  std::vector<std::string> argv_;
  std::ostream& out_;
  std::mt19937_64 rng_;
  std::unique_ptr<Clock> clock_;
  std::vector<int> gens_;
  int64_t deadline_ = 0;
  uint64_t kills_ = 0;
  int setup_errors_ = 0;
  std::vector<Op> history_;
  std::unique_ptr<proxy::FaultProxy> proxy_;
  std::string worker_store_;  // the proxy's endpoint, when there is one
};

}  // namespace

int RunSupervisor(const Config& config, const std::vector<std::string>& argv, std::ostream& out) {
  Config c = config;
  if (c.seed == 0)
    c.seed = internal::Mix64(std::random_device()()) >> 16;  // short enough to type back
  if (MakeWorkload(c.workload) == nullptr) {
    out << "stress: unknown workload '" << c.workload
        << "' (bank, list-append, queue, lock, leader, index, unique-race)\n";
    return 2;
  }
  if (c.clock_speed != 1 && c.azure()) {
    out << "stress: --clock-speed is for local stores (Azure's leases run on its own clock)\n";
    return 2;
  }
  if (c.work_dir.empty()) {
    std::string tmpl =
        (std::filesystem::temp_directory_path() / "blobtable-stress-XXXXXX").string();
    if (mkdtemp(tmpl.data()) == nullptr) {
      out << "stress: cannot make a work directory\n";
      return 2;
    }
    c.work_dir = tmpl;
  }
  if (c.cache_dir.empty()) c.cache_dir = c.work_dir + "/cache";
  const int rc = Supervisor(c, argv, out).Run();
  if (rc == 0 && config.work_dir.empty()) {
    std::error_code ec;
    std::filesystem::remove_all(c.work_dir, ec);
  }
  return rc;
}

}  // namespace blobtable::stress
