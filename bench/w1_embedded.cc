// SPDX-License-Identifier: Apache-2.0
#include "bench/w1_embedded.h"

#include <stdlib.h>

#include <cstdio>
#include <filesystem>
#include <algorithm>
#include <functional>
#include <memory>

#include "bench/kv_peer.h"

namespace bench {
namespace {

using blobtable::Result;
using blobtable::Status;

std::string Key(int thread, int64_t i) { return ThreadKey('t', thread, i); }

struct PeerKind {
  std::string name;
  std::function<std::unique_ptr<KvPeer>()> make;
};

std::vector<PeerKind> Peers() {
  return {{"blobtable", [] { return NewBlobtablePeer(false); }},
          {"blobtable-relaxed", [] { return NewBlobtablePeer(true); }},
          {"sqlite-wal-full", [] { return NewSqlitePeer("FULL"); }},
          {"sqlite-wal-normal", [] { return NewSqlitePeer("NORMAL"); }},
          {"rocksdb-sync", [] { return NewRocksDbPeer(true); }},
          {"rocksdb-nosync", [] { return NewRocksDbPeer(false); }},
          {"lmdb-raw", [] { return NewLmdbPeer(); }}};
}

// One round of `op` on a fresh store of `kind`: the keys it needs written
// first (not timed), then the operations timed.
Result<Sample> Round(const PeerKind& kind, const std::string& op, int threads, const W1Options& o,
                     const std::string& value) {
  Scratch dir;
  if (dir.path().empty()) return Status::IOError("no scratch directory");
  std::unique_ptr<KvPeer> peer = kind.make();
  if (Status s = peer->Open(dir.path(), threads); !s.ok()) return s;
  // Two threads' worth a round, shared by the threads beyond two: a round's
  // loading (durable inserts) stays a few seconds at 8 threads.
  const int64_t n = std::max<int64_t>(1, o.ops_per_thread * std::min(threads, 2) / threads);
  if (op != "insert") {
    auto loaded =
        RunThreads(threads, n, [&](int t, int64_t i) { return peer->Insert(t, Key(t, i), value); });
    if (!loaded.ok()) return loaded.status();
  }
  if (op == "insert")
    return RunThreads(threads, n,
                      [&](int t, int64_t i) { return peer->Insert(t, Key(t, i), value); });
  if (op == "get")
    return RunThreads(threads, n,
                      [&](int t, int64_t i) { return peer->Get(t, Key(t, (i * 7919) % n)); });
  if (op == "replace")
    return RunThreads(threads, n,
                      [&](int t, int64_t i) { return peer->Replace(t, Key(t, i), value); });
  // range100: a tenth as many queries, each from a spread-out start.
  const int64_t span = std::max<int64_t>(1, n - 100);
  return RunThreads(threads, std::max<int64_t>(1, n / 10), [&](int t, int64_t i) {
    return peer->Range(t, Key(t, (i * 7919) % span), 100);
  });
}

}  // namespace

Result<std::vector<Row>> RunW1(const W1Options& o) {
  const std::string value = ValueBytes(o.value_bytes);
  std::vector<Row> rows;
  for (int threads : o.threads) {
    for (const std::string& op : o.ops) {
      std::vector<System> systems;
      for (const PeerKind& kind : Peers()) {
        if (!o.systems.empty() &&
            std::find(o.systems.begin(), o.systems.end(), kind.name) == o.systems.end())
          continue;
        systems.push_back(
            {kind.name, [&, kind, op] { return Round(kind, op, threads, o, value); }});
      }
      auto cell = RunCell("W1", op, threads, systems, o.rounds);
      if (!cell.ok()) return cell.status();
      rows.insert(rows.end(), cell->begin(), cell->end());
    }
  }
  return rows;
}

}  // namespace bench
