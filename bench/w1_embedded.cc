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

// How many operations a round makes at `threads` threads: two threads'
// worth, shared by the threads beyond two (a round's loading, durable
// inserts, stays a few seconds at 8 threads).
int64_t RoundOps(const W1Options& o, int threads) {
  return std::max<int64_t>(1, o.ops_per_thread * std::min(threads, 2) / threads);
}

// One round of inserts on a fresh store of `kind`.
Result<Sample> InsertRound(const PeerKind& kind, int threads, const W1Options& o,
                           const std::string& value) {
  Scratch dir;
  if (dir.path().empty()) return Status::IOError("no scratch directory");
  std::unique_ptr<KvPeer> peer = kind.make();
  if (Status s = peer->Open(dir.path(), threads); !s.ok()) return s;
  return RunThreads(threads, RoundOps(o, threads),
                    [&](int t, int64_t i) { return peer->Insert(t, Key(t, i), value); });
}

// One round of the operations `ops` (get, get-value, range100, replace) on a fresh
// store of `kind`: the keys they need written once (not timed), then each
// operation timed in turn, replace last (it changes what the others read).
Result<std::vector<Sample>> ReadRound(const PeerKind& kind, const std::vector<std::string>& ops,
                                      int threads, const W1Options& o, const std::string& value) {
  Scratch dir;
  if (dir.path().empty()) return Status::IOError("no scratch directory");
  std::unique_ptr<KvPeer> peer = kind.make();
  if (Status s = peer->Open(dir.path(), threads); !s.ok()) return s;
  const int64_t n = RoundOps(o, threads);
  auto loaded =
      RunThreads(threads, n, [&](int t, int64_t i) { return peer->Insert(t, Key(t, i), value); });
  if (!loaded.ok()) return loaded.status();
  std::vector<Sample> samples;
  for (const std::string& op : ops) {
    Result<Sample> got = Status::Internal("no operation " + op);
    if (op == "get" || op == "get-value") {
      const ValueUse use = op == "get" ? ValueUse::kFind : ValueUse::kReadAll;
      got = RunThreads(threads, n,
                       [&](int t, int64_t i) { return peer->Get(t, Key(t, (i * 7919) % n), use); });
    } else if (op == "replace") {
      got = RunThreads(threads, n,
                       [&](int t, int64_t i) { return peer->Replace(t, Key(t, i), value); });
    } else if (op == "range100") {  // a tenth as many queries, each from a spread-out start
      const int64_t span = std::max<int64_t>(1, n - 100);
      got = RunThreads(threads, std::max<int64_t>(1, n / 10), [&](int t, int64_t i) {
        return peer->Range(t, Key(t, (i * 7919) % span), 100);
      });
    }
    if (!got.ok()) return got.status();
    samples.push_back(std::move(*got));
  }
  return samples;
}

}  // namespace

Result<std::vector<Row>> RunW1(const W1Options& o) {
  const std::string value = ValueBytes(o.value_bytes);
  auto wanted = [&](const std::string& op) {
    return std::find(o.ops.begin(), o.ops.end(), op) != o.ops.end();
  };
  // The reading operations share a round's store (loading it is most of a
  // round); replace goes last.
  std::vector<std::string> reads;
  for (const char* op : {"get", "get-value", "range100", "replace"})
    if (wanted(op)) reads.push_back(op);
  std::vector<Row> rows;
  for (int threads : o.threads) {
    std::vector<System> inserts;
    std::vector<MultiSystem> readers;
    for (const PeerKind& kind : Peers()) {
      if (!o.systems.empty() &&
          std::find(o.systems.begin(), o.systems.end(), kind.name) == o.systems.end())
        continue;
      inserts.push_back({kind.name, [&, kind] { return InsertRound(kind, threads, o, value); }});
      readers.push_back(
          {kind.name, [&, kind] { return ReadRound(kind, reads, threads, o, value); }});
    }
    if (wanted("insert")) {
      auto cell = RunCell("W1", "insert", threads, inserts, o.rounds);
      if (!cell.ok()) return cell.status();
      rows.insert(rows.end(), cell->begin(), cell->end());
    }
    if (!reads.empty()) {
      auto cells = RunCells("W1", reads, threads, readers, o.rounds);
      if (!cells.ok()) return cells.status();
      rows.insert(rows.end(), cells->begin(), cells->end());
    }
  }
  return rows;
}

}  // namespace bench
