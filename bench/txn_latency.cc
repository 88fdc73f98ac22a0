// Commit latency and requests of a transaction on the Azure backend, through
// the latency proxy (README "Transactions: cost"): a transaction that reads
// one entity in each of k partitions and replaces them, against one round
// trip (a HEAD) and against the same k replaces written plain, one after
// another, measured in the same run. Then 8 workers moving money between
// the same two entities in opposite orders (commits/s, conflicts).
//
//   scripts/txn-latency [--latency-ms 10] [--commits 30]   (starts Azurite)
//   build/bench/txn_latency --azurite-port P [options]
//
// Requests are counted by the proxy: those relayed before Commit() returned,
// and all of them once the store has finished the commit in the background.
#include <CLI/CLI.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <random>
#include <sstream>
#include <thread>
#include <vector>

#include "blobtable/store.h"
#include "tools/proxy/fault_proxy.h"

namespace {

using namespace blobtable;
using Steady = std::chrono::steady_clock;

double Ms(Steady::duration d) { return std::chrono::duration<double, std::milli>(d).count(); }

double Quantile(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<size_t>(q * v.size()))];
}

std::string Connection(int port) {
  return "DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;"
         "AccountKey=Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/"
         "K1SZFPTOtr/KBHBeksoGMGw==;BlobEndpoint=http://127.0.0.1:" +
         std::to_string(port) + "/devstoreaccount1";
}

int Fail(const std::string& what, const Status& s) {
  std::fprintf(stderr, "txn_latency: %s: %s\n", what.c_str(), s.ToString().c_str());
  return 1;
}

struct Row {
  int k = 0;
  double p50 = 0, p90 = 0, plain_p50 = 0;
  double before_return = 0, total = 0;
};

// Reads then replaces one entity in each of k partitions, `commits` times.
Result<Row> MeasureK(Store& store, proxy::FaultProxy& proxy, int k, int commits) {
  auto table = store.OpenTable("lat");
  if (!table.ok()) return table.status();
  auto pk = [&](int p) { return "k" + std::to_string(k) + "-" + std::to_string(p); };
  for (int p = 0; p < k; ++p) {
    Entity e(pk(p), "r");
    e.Set("n", int64_t{0});
    Status s = table->Upsert(e).status();
    if (!s.ok()) return s;
  }
  Row row;
  row.k = k;
  std::vector<double> lat, plain, before, total;
  for (int c = -1; c < commits; ++c) {  // the first makes the lock blobs
    auto txn = store.Begin();
    for (int p = 0; p < k; ++p) {
      auto e = txn->Get(*table, pk(p), "r");
      if (!e.ok()) return e.status();
      Entity next = *e;
      next.Set("n", int64_t{c});
      Status s = txn->Replace(*table, next, e->etag());
      if (!s.ok()) return s;
    }
    const int r0 = proxy.relayed();
    const auto t0 = Steady::now();
    auto done = txn->Commit();
    const auto t1 = Steady::now();
    const int r1 = proxy.relayed();
    if (!done.ok()) return done.status();
    store.WaitForFinishing();
    if (c < 0) continue;
    lat.push_back(Ms(t1 - t0));
    before.push_back(r1 - r0);
    total.push_back(proxy.relayed() - r0);
    // The peer: the same k replaces, plain, one after another.
    std::vector<Entity> current;
    for (int p = 0; p < k; ++p) current.push_back(*table->Get(pk(p), "r"));
    const auto p0 = Steady::now();
    for (Entity& e : current) {
      e.Set("n", int64_t{c});
      Status s = table->Replace(e, e.etag()).status();
      if (!s.ok()) return s;
    }
    plain.push_back(Ms(Steady::now() - p0));
  }
  row.p50 = Quantile(lat, 0.5);
  row.p90 = Quantile(lat, 0.9);
  row.plain_p50 = Quantile(plain, 0.5);
  row.before_return = Quantile(before, 0.5);
  row.total = Quantile(total, 0.5);
  return row;
}

// `workers` threads, half moving a -> b and half b -> a (each reads both in
// its own order), for `seconds`.
void Opposite(Store& store, int workers, int seconds) {
  auto table = *store.OpenTable("opp");
  for (const char* pk : {"a", "b"}) {
    Entity e(pk, "acct");
    e.Set("balance", int64_t{1000});
    (void)table.Upsert(e);
  }
  std::atomic<int> ok{0}, conflict{0}, timeout{0}, other{0}, waits{0};
  const auto until = Steady::now() + std::chrono::seconds(seconds);
  std::vector<std::thread> threads;
  for (int w = 0; w < workers; ++w) {
    threads.emplace_back([&, w] {
      const char* first = w % 2 ? "a" : "b";
      const char* second = w % 2 ? "b" : "a";
      while (Steady::now() < until) {
        auto txn = store.Begin();
        auto x = txn->Get(table, first, "acct");
        auto y = txn->Get(table, second, "acct");
        if (!x.ok() || !y.ok()) {
          ++other;
          continue;
        }
        Entity x2 = *x, y2 = *y;
        x2.Set("balance", *x->FindAs<int64_t>("balance") - 1);
        y2.Set("balance", *y->FindAs<int64_t>("balance") + 1);
        (void)txn->Replace(table, x2, x->etag());
        (void)txn->Replace(table, y2, y->etag());
        Status s = txn->Commit().status();
        waits += txn->commit_stats().lock_waits;
        if (s.ok()) ++ok;
        else if (s.IsConflict()) ++conflict;
        else if (s.code() == Code::kLockTimeout) ++timeout;
        else ++other;
      }
    });
  }
  for (auto& t : threads) t.join();
  store.WaitForFinishing();
  const int64_t sum = *table.Get("a", "acct")->FindAs<int64_t>("balance") +
                      *table.Get("b", "acct")->FindAs<int64_t>("balance");
  const int tries = ok + conflict + timeout + other;
  std::printf("opposite order, %d workers, %d s: %.1f commits/s (%d committed, %d conflicts, "
              "%d lock timeouts, %d other failures); lock waits: %d (%.2f a commit try); "
              "money conserved: %s\n",
              workers, seconds, static_cast<double>(ok) / seconds, ok.load(), conflict.load(),
              timeout.load(), other.load(), waits.load(),
              tries ? static_cast<double>(waits) / tries : 0.0, sum == 2000 ? "yes" : "NO");
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"txn_latency: commit latency and requests through the latency proxy"};
  int azurite_port = 0, latency_ms = 10, commits = 30, workers = 8, seconds = 10;
  std::string ks = "1,2,4,8";
  app.add_option("--azurite-port", azurite_port, "Azurite's blob port on 127.0.0.1")->required();
  app.add_option("--latency-ms", latency_ms, "added each way by the proxy")->capture_default_str();
  app.add_option("--commits", commits, "commits measured per k")->capture_default_str();
  app.add_option("--ks", ks, "partitions per transaction, comma-separated")->capture_default_str();
  app.add_option("--workers", workers, "opposite-order workers (0: skip)")->capture_default_str();
  app.add_option("--seconds", seconds, "opposite-order run time")->capture_default_str();
  CLI11_PARSE(app, argc, argv);

  auto proxy = proxy::FaultProxy::Start(azurite_port);
  if (!proxy.ok()) return Fail("starting the proxy", proxy.status());
  const auto each_way = std::chrono::milliseconds(latency_ms);
  (*proxy)->SetLatency({each_way, each_way, std::chrono::milliseconds(0)});
  StoreOptions o;
  o.container = "txnlat" + std::to_string(std::random_device{}() % 1000000);
  auto store = Store::Open(Connection((*proxy)->port()), o);
  if (!store.ok()) return Fail("opening the store", store.status());
  BlobStore& blobs = (*store)->blob_store();
  if (Status s = blobs.Put("rtt", "", {}).status(); !s.ok()) return Fail("a first write", s);
  std::vector<double> rtt;
  for (int i = 0; i < 30; ++i) {
    const auto t0 = Steady::now();
    (void)blobs.Head("rtt", {});
    rtt.push_back(Ms(Steady::now() - t0));
  }
  const double round_trip = Quantile(rtt, 0.5);
  std::printf("latency %d ms each way; one round trip (HEAD), median: %.1f ms\n", latency_ms,
              round_trip);
  std::printf("%3s %12s %12s %10s %16s %10s %14s %10s\n", "k", "commit p50", "commit p90",
              "p50/RTT", "reqs before ret", "reqs all", "k plain p50", "txn/plain");
  std::stringstream list(ks);
  for (std::string item; std::getline(list, item, ',');) {
    auto row = MeasureK(**store, **proxy, std::stoi(item), commits);
    if (!row.ok()) return Fail("k=" + item, row.status());
    std::printf("%3d %10.1fms %10.1fms %10.2f %16.0f %10.0f %12.1fms %10.2f\n", row->k, row->p50,
                row->p90, row->p50 / round_trip, row->before_return, row->total, row->plain_p50,
                row->p50 / row->plain_p50);
  }
  if (workers > 0) Opposite(**store, workers, seconds);
  return 0;
}
