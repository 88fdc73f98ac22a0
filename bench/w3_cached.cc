// SPDX-License-Identifier: Apache-2.0
#include "bench/w3_cached.h"

#include <algorithm>
#include <cstdio>
#include <functional>
#include <memory>

#include "blobtable/store.h"

namespace bench {
namespace {

using blobtable::ReadPolicy;
using blobtable::Result;
using blobtable::Status;

struct Mode {
  std::string name;
  bool remote;  // an Azure store (else the embedded one)
  bool cached;  // through the cache, warmed by a read of every entity
  ReadPolicy policy;
  bool asks_storage;  // every read goes to storage (a round trip)
};

// The embedded get first: the reference, the speed max-stale and offline
// reads should reach (they are LMDB reads too).
std::vector<Mode> Modes() {
  return {{"embedded", false, false, ReadPolicy::Fresh(), false},
          {"uncached", true, false, ReadPolicy::Fresh(), true},
          {"fresh", true, true, ReadPolicy::Fresh(), true},
          {"max-stale", true, true, ReadPolicy::MaxStale(std::chrono::hours(1)), false},
          {"offline", true, true, ReadPolicy::Offline(), false}};
}

// One round: `keys` entities written, read once each to fill the cache if
// the mode has one (not timed), then read by the mode's policy.
Result<Sample> Round(const Mode& m, int port, const W3Options& o, const std::string& value) {
  Scratch dir;
  if (dir.path().empty()) return Status::IOError("no scratch directory");
  blobtable::StoreOptions so;
  so.cache.enabled = m.cached;
  so.cache.directory = dir.path() + "/cache";
  so.container = FreshName("w3c");
  const RequestCounter counter = CountRequests(so);
  auto store = blobtable::Store::Open(m.remote ? ConnectionTo(port) : dir.path() + "/store", so);
  if (!store.ok()) return store.status();
  auto table = (*store)->OpenTable("bench");
  if (!table.ok()) return table.status();
  const int64_t keys = 100;
  for (int64_t i = 0; i < keys; ++i) {
    blobtable::Entity e("p", RowKey(i));
    e.Set("v", blobtable::Binary{value});
    if (auto w = table->Upsert(e); !w.ok()) return w.status();
    if (m.cached) {
      if (auto r = table->Get("p", RowKey(i)); !r.ok()) return r.status();
    }
  }
  const int64_t n = m.asks_storage ? o.remote_ops : o.local_ops;
  (*counter)->Clear();
  Result<Sample> s = RunThreads(1, n, [&](int, int64_t i) {
    return table->Get("p", RowKey((i * 7919) % keys), m.policy).status();
  });
  if (s.ok()) s->requests = (*counter)->Total();
  return s;
}

}  // namespace

Result<std::vector<Row>> RunW3(const W3Options& o) {
  const std::string value = ValueBytes(o.value_bytes);
  std::vector<Row> rows;
  for (const W2Endpoint& at : o.endpoints) {
    std::vector<System> systems;
    for (const Mode& m : Modes()) {
      if (!o.systems.empty() &&
          std::find(o.systems.begin(), o.systems.end(), m.name) == o.systems.end())
        continue;
      systems.push_back({m.name, [&, m, port = at.port] { return Round(m, port, o, value); }});
    }
    auto cell =
        RunCell("W3-" + std::to_string(at.added_rtt_ms) + "ms", "get", 1, systems, o.rounds);
    if (!cell.ok()) return cell.status();
    rows.insert(rows.end(), cell->begin(), cell->end());
  }
  return rows;
}

}  // namespace bench
