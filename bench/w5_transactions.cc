// SPDX-License-Identifier: Apache-2.0
#include "bench/w5_transactions.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <memory>
#include <random>
#include <thread>

#include "bench/node_peer.h"
#include "blobtable/store.h"
#include "blobtable/txn.h"

namespace bench {
namespace {

using blobtable::Entity;
using blobtable::Result;
using blobtable::Status;
using Steady = std::chrono::steady_clock;

double Micros(Steady::duration d) { return std::chrono::duration<double, std::micro>(d).count(); }

struct Opened {
  RequestCounter counter;
  std::unique_ptr<blobtable::Store> store;
  blobtable::Table table;
  std::vector<std::string> pks;  // one entity in each of these partitions
};

// A fresh container on the blob service at `port`, no cache (a
// transaction's reads go to storage whatever the cache holds).
Result<Opened> Open(int port) {
  blobtable::StoreOptions so;
  so.container = FreshName("w5c");
  so.cache.enabled = false;
  RequestCounter counter = CountRequests(so);
  auto store = blobtable::Store::Open(ConnectionTo(port), so);
  if (!store.ok()) return store.status();
  auto table = (*store)->OpenTable("bench");
  if (!table.ok()) return table.status();
  return Opened{std::move(counter), std::move(*store), std::move(*table), {}};
}

Entity Numbered(const std::string& pk, int64_t n, const std::string& value) {
  Entity e(pk, "r");
  e.Set("n", n);
  e.Set("v", blobtable::Binary{value});
  return e;
}

// Open(port), then one entity in each of k partitions, numbered n.
Result<Opened> OpenWith(int port, int k, int64_t n, const std::string& value) {
  auto o = Open(port);
  if (!o.ok()) return o.status();
  for (int p = 0; p < k; ++p) {
    o->pks.push_back("part" + std::to_string(p));
    if (Status s = o->table.Upsert(Numbered(o->pks.back(), n, value)).status(); !s.ok()) return s;
  }
  return o;
}

// `commits` transactions, each reading the k entities and replacing them;
// only Commit() timed. The first, not counted, makes the lock blobs.
// `back_to_back`: each starts as soon as the one before returned, on the
// rows that one wrote (its finishing still at work), as a worker updating
// its own rows does; else each waits for the finishing before it.
Result<Sample> TxnRound(int port, int k, int commits, const std::string& value, bool back_to_back) {
  auto o = OpenWith(port, k, 0, value);
  if (!o.ok()) return o.status();
  const auto requests = [&] { return (*o->counter)->Total(); };
  Sample s;
  int64_t before_return = 0, lock_waits = 0;
  for (int c = -1; c < commits; ++c) {
    auto txn = o->store->Begin();
    if (!txn.ok()) return txn.status();
    for (const std::string& pk : o->pks) {
      auto e = txn->Get(o->table, pk, "r");
      if (!e.ok()) return e.status();
      if (Status w = txn->Replace(o->table, Numbered(pk, c, value), e->etag()); !w.ok()) return w;
    }
    Stopwatch watch(requests());
    auto done = txn->Commit();
    const int64_t sent = watch.Stop(requests());
    if (!done.ok()) return done.status();
    if (!back_to_back || c < 0) o->store->WaitForFinishing();
    if (c < 0) continue;
    before_return += sent;
    lock_waits += txn->commit_stats().lock_waits;
    watch.AddTo(s, requests());
  }
  s.rates["requests_before_return"] = static_cast<double>(before_return) / commits;
  s.rates["lock_waits"] = static_cast<double>(lock_waits) / commits;
  return s;
}

// The same k entities read (not timed), then replaced plainly If-Match, one
// after another.
Result<Sample> PlainRound(int port, int k, int commits, const std::string& value) {
  auto o = OpenWith(port, k, 0, value);
  if (!o.ok()) return o.status();
  const auto requests = [&] { return (*o->counter)->Total(); };
  Sample s;
  for (int c = 0; c < commits; ++c) {
    std::vector<std::string> etags;
    for (const std::string& pk : o->pks) {
      auto e = o->table.Get(pk, "r");
      if (!e.ok()) return e.status();
      etags.push_back(e->etag());
    }
    Stopwatch watch(requests());
    for (size_t p = 0; p < o->pks.size(); ++p) {
      Status w = o->table.Replace(Numbered(o->pks[p], c, value), etags[p]).status();
      if (!w.ok()) return w;
    }
    watch.Stop(requests());
    watch.AddTo(s, requests());
  }
  return s;
}

// One round trip: a HEAD of an entity's blob, `commits` times, one after
// another (what a commit's p50 is read against).
Result<Sample> RoundTripRound(int port, int commits) {
  auto o = Open(port);
  if (!o.ok()) return o.status();
  blobtable::BlobStore& blobs = o->store->blob_store();
  if (Status s = blobs.Put("round-trip", "", {}).status(); !s.ok()) return s;
  const int64_t r0 = (*o->counter)->Total();
  auto s =
      RunThreads(1, commits, [&](int, int64_t) { return blobs.Head("round-trip", {}).status(); });
  if (s.ok()) s->requests = (*o->counter)->Total() - r0;
  return s;
}

struct Tally {
  std::atomic<int64_t> commits{0}, conflicts{0}, timeouts{0}, waits{0};
};

// One transfer of 1 from account `from` to account `to`: true if
// committed; Conflict and LockTimeout are tallied, anything else returned.
Result<bool> Transfer(Opened& o, const std::string& from, const std::string& to, Tally& tally) {
  auto txn = o.store->Begin();
  if (!txn.ok()) return txn.status();
  auto a = txn->Get(o.table, from, "r");
  if (!a.ok()) return a.status();
  auto b = txn->Get(o.table, to, "r");
  if (!b.ok()) return b.status();
  Entity a2 = *a, b2 = *b;
  a2.Set("n", *a->FindAs<int64_t>("n") - 1);
  b2.Set("n", *b->FindAs<int64_t>("n") + 1);
  if (Status s = txn->Replace(o.table, a2, a->etag()); !s.ok()) return s;
  if (Status s = txn->Replace(o.table, b2, b->etag()); !s.ok()) return s;
  Status s = txn->Commit().status();
  tally.waits += txn->commit_stats().lock_waits;
  if (s.ok())
    ++tally.commits;
  else if (s.IsConflict())
    ++tally.conflicts;
  else if (s.code() == blobtable::Code::kLockTimeout)
    ++tally.timeouts;
  else
    return s;
  return s.ok();
}

// `workers` threads each making `attempts` transfers, on random pairs of
// accounts or (opposite) on pairs each shared by two workers going
// opposite ways.
Result<Sample> ContentionRound(int port, bool opposite, const W5Options& w, int round_seed) {
  auto o = OpenWith(port, w.accounts, 1000, ValueBytes(100));
  if (!o.ok()) return o.status();
  const std::vector<std::string>& accounts = o->pks;
  Tally tally;
  std::vector<std::vector<double>> latencies(static_cast<size_t>(w.workers));
  const int pairs = w.accounts / 2;
  const int64_t r0 = (*o->counter)->Total();
  auto run = RunThreads(w.workers, w.attempts, [&](int worker, int64_t i) -> Status {
    std::mt19937 rng(static_cast<unsigned>(round_seed * 1000 + worker * 100 + i));
    int from, to;
    if (opposite) {
      const int pair = static_cast<int>((i + worker / 2) % pairs);
      from = 2 * pair + worker % 2;
      to = 2 * pair + 1 - worker % 2;
    } else {
      from = static_cast<int>(rng() % w.accounts);
      to = (from + 1 + static_cast<int>(rng() % (w.accounts - 1))) % w.accounts;
    }
    const auto t0 = Steady::now();
    auto committed = Transfer(*o, accounts[from], accounts[to], tally);
    if (!committed.ok()) return committed.status();
    if (*committed) latencies[worker].push_back(Micros(Steady::now() - t0));
    return Status::OK();
  });
  if (!run.ok()) return run.status();
  o->store->WaitForFinishing();
  int64_t money = 0;
  for (const std::string& pk : accounts) {
    auto e = o->table.Get(pk, "r");
    if (!e.ok()) return e.status();
    money += *e->FindAs<int64_t>("n");
  }
  if (money != 1000 * w.accounts) return Status::Internal("money was not conserved");
  Sample s = std::move(*run);
  s.ops = tally.commits;
  s.latencies_us.clear();
  for (const auto& l : latencies) s.latencies_us.insert(s.latencies_us.end(), l.begin(), l.end());
  s.requests = (*o->counter)->Total() - r0;
  const double tries = static_cast<double>(w.workers) * w.attempts;
  s.rates["conflicts"] = tally.conflicts / tries;
  s.rates["lock_waits"] = tally.waits / tries;
  s.rates["lock_timeouts"] = tally.timeouts / tries;
  return s;
}

// Issue 32, goal 1: `workers` threads sharing one store, each committing
// transactions that read and replace its own two rows, in one partition
// ("hot") or each in a partition of its own. No two transactions touch a
// row in common, so every wait is for a partition lock. ops/s = commits/s;
// p50/p99 of a whole transaction (its reads and Commit()).
Result<Sample> HotRound(int port, bool one_partition, int workers, const W5Options& w) {
  auto o = Open(port);
  if (!o.ok()) return o.status();
  const std::string value = ValueBytes(100);
  struct Rows {
    std::string pk, a, b;
  };
  std::vector<Rows> rows;
  for (int k = 0; k < workers; ++k) {
    const std::string w_id = "w" + std::to_string(k);
    rows.push_back({one_partition ? std::string("hot") : "p" + w_id, w_id + "a", w_id + "b"});
    for (const std::string& rk : {rows.back().a, rows.back().b}) {
      Entity e(rows.back().pk, rk);
      e.Set("n", int64_t{0});
      e.Set("v", blobtable::Binary{value});
      if (Status s = o->table.Upsert(e).status(); !s.ok()) return s;
    }
  }
  Tally tally;
  std::vector<std::vector<double>> latencies(static_cast<size_t>(workers));
  const int64_t r0 = (*o->counter)->Total();
  auto run = RunThreads(workers, w.hot_commits, [&](int worker, int64_t) -> Status {
    const Rows& r = rows[static_cast<size_t>(worker)];
    const auto t0 = Steady::now();
    auto txn = o->store->Begin();
    if (!txn.ok()) return txn.status();
    for (const std::string& rk : {r.a, r.b}) {
      auto e = txn->Get(o->table, r.pk, rk);
      if (!e.ok()) return e.status();
      Entity next = *e;
      next.Set("n", *e->FindAs<int64_t>("n") + 1);
      if (Status s = txn->Replace(o->table, next, e->etag()); !s.ok()) return s;
    }
    Status s = txn->Commit().status();
    tally.waits += txn->commit_stats().lock_waits;
    if (!s.ok()) return s.WithContext("worker " + std::to_string(worker));
    latencies[static_cast<size_t>(worker)].push_back(Micros(Steady::now() - t0));
    return Status::OK();
  });
  if (!run.ok()) return run.status();
  o->store->WaitForFinishing();
  Sample s = std::move(*run);
  s.latencies_us.clear();
  for (const auto& l : latencies) s.latencies_us.insert(s.latencies_us.end(), l.begin(), l.end());
  s.requests = (*o->counter)->Total() - r0;
  s.rates["lock_waits"] = static_cast<double>(tally.waits) / (workers * w.hot_commits);
  return s;
}

bool Wanted(const W5Options& o, const std::string& name) {
  return o.systems.empty() ||
         std::find(o.systems.begin(), o.systems.end(), name) != o.systems.end();
}

bool WantedOp(const W5Options& o, const std::string& op) {
  return o.ops.empty() || std::find(o.ops.begin(), o.ops.end(), op) != o.ops.end();
}

Result<std::vector<Row>> CommitCells(const W5Options& o, const W2Endpoint& at, int table_port,
                                     const std::string& workload) {
  const std::string value = ValueBytes(1000);
  std::vector<Row> rows;
  for (int k : o.partitions) {
    std::vector<System> systems;
    if (Wanted(o, "blobtable-txn"))
      systems.push_back(
          {"blobtable-txn", [&, k] { return TxnRound(at.port, k, o.commits, value, false); }});
    if (Wanted(o, "blobtable-txn-b2b"))
      systems.push_back(
          {"blobtable-txn-b2b", [&, k] { return TxnRound(at.port, k, o.commits, value, true); }});
    if (Wanted(o, "plain-writes"))
      systems.push_back(
          {"plain-writes", [&, k] { return PlainRound(at.port, k, o.commits, value); }});
    if (Wanted(o, "round-trip"))
      systems.push_back({"round-trip", [&] { return RoundTripRound(at.port, o.commits); }});
    if (k == 1 && table_port != 0 && Wanted(o, "tables-egt"))
      systems.push_back({"tables-egt", [&] {
                           return RunNodePeer(o.tables_script,
                                              {TableConnectionTo(table_port), FreshName("w5t"),
                                               "egt", std::to_string(o.commits), "1000"});
                         }});
    auto cell = RunCell(workload, "commit-k" + std::to_string(k), 1, systems, o.rounds);
    if (!cell.ok()) return cell.status();
    rows.insert(rows.end(), cell->begin(), cell->end());
  }
  return rows;
}

// One cell per worker count: blobtable's transactions on one partition and
// on one partition per worker, against Azurite's Table service committing
// the same pairs by entity group transactions in one partition.
Result<std::vector<Row>> HotCells(const W5Options& o, const W2Endpoint& at, int table_port,
                                  const std::string& workload) {
  std::vector<Row> rows;
  for (int workers : o.hot_workers) {
    std::vector<System> systems;
    if (Wanted(o, "blobtable-txn")) {
      systems.push_back({"blobtable-txn-one-partition",
                         [&, workers] { return HotRound(at.port, true, workers, o); }});
      systems.push_back({"blobtable-txn-own-partitions",
                         [&, workers] { return HotRound(at.port, false, workers, o); }});
    }
    if (table_port != 0 && Wanted(o, "tables-egt"))
      systems.push_back({"tables-egt-one-partition", [&, workers] {
                           return RunNodePeer(
                               o.tables_script,
                               {TableConnectionTo(table_port), FreshName("w5h"), "egt-hot",
                                std::to_string(o.hot_commits), "100", std::to_string(workers)});
                         }});
    if (systems.empty()) continue;
    // At most 3 rounds: five worker counts of three systems are the
    // suite's longest W5 cells, and the suite stays under 15 minutes.
    auto cell = RunCell(workload, "hot-partition", workers, systems, std::min(o.rounds, 3));
    if (!cell.ok()) return cell.status();
    rows.insert(rows.end(), cell->begin(), cell->end());
  }
  return rows;
}

}  // namespace

Result<std::vector<Row>> RunW5(const W5Options& o) {
  std::vector<Row> rows;
  for (size_t e = 0; e < o.endpoints.size(); ++e) {
    const W2Endpoint& at = o.endpoints[e];
    const int table_port = e < o.table_endpoints.size() ? o.table_endpoints[e].port : 0;
    const std::string workload = "W5-" + std::to_string(at.added_rtt_ms) + "ms";
    if (WantedOp(o, "commit")) {
      auto commits = CommitCells(o, at, table_port, workload);
      if (!commits.ok()) return commits.status();
      rows.insert(rows.end(), commits->begin(), commits->end());
    }
    // Hot partitions where a round trip costs something (at 0 ms added they
    // showed the same Azurite-bound picture, and took 70 s of the suite).
    const bool hot_here = at.added_rtt_ms > 0 || o.endpoints.size() == 1;
    if (WantedOp(o, "hot-partition") && hot_here) {
      auto hot = HotCells(o, at, table_port, workload);
      if (!hot.ok()) return hot.status();
      rows.insert(rows.end(), hot->begin(), hot->end());
    }
    if (!Wanted(o, "blobtable-txn") || !WantedOp(o, "transfer")) continue;
    for (bool opposite : {false, true}) {
      int seed = 0;
      auto cell =
          RunCell(workload, opposite ? "transfer-opposite" : "transfer-random", o.workers,
                  {{"blobtable-txn",
                    [&, opposite] { return ContentionRound(at.port, opposite, o, ++seed); }}},
                  o.rounds);
      if (!cell.ok()) return cell.status();
      rows.insert(rows.end(), cell->begin(), cell->end());
    }
  }
  return rows;
}

}  // namespace bench
