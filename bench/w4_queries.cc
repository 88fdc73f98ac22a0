// SPDX-License-Identifier: Apache-2.0
#include "bench/w4_queries.h"

#include <algorithm>
#include <cstdio>
#include <memory>

#include "bench/node_peer.h"
#include "blobtable/store.h"

namespace bench {
namespace {

using blobtable::Result;
using blobtable::Status;

// One cell: `rows` entities of `bytes` in partition "p" of the container
// (blob service) and of the table (Table service), loaded once.
struct Cell {
  int port = 0, table_port = 0;
  int64_t rows = 0;
  size_t bytes = 0;
  std::string container, table;
  int reps = 1;  // queries a round
};

// Declared so that the cache's directory goes last, after the store.
struct Opened {
  std::unique_ptr<Scratch> cache_dir;
  RequestCounter counter;
  std::unique_ptr<blobtable::Store> store;
  blobtable::Table table;
};

// The cell's table, through a cache of its own (empty) or none.
Result<Opened> Open(const Cell& c, bool cached) {
  blobtable::StoreOptions so;
  so.container = c.container;
  so.cache.enabled = cached;
  auto dir = std::make_unique<Scratch>();
  if (cached) so.cache.directory = dir->path() + "/cache";
  RequestCounter counter = CountRequests(so);
  auto store = blobtable::Store::Open(ConnectionTo(c.port), so);
  if (!store.ok()) return store.status();
  auto table = (*store)->OpenTable("bench");
  if (!table.ok()) return table.status();
  return Opened{std::move(dir), std::move(counter), std::move(*store), std::move(*table)};
}

blobtable::Entity Numbered(int64_t i, const std::string& value, int version) {
  blobtable::Entity e("p", RowKey(i));
  e.Set("v", blobtable::Binary{value});
  e.Set("version", int64_t{version});
  return e;
}

// Writes the cell's entities, 16 at once.
Status Load(const Cell& c, const std::string& value) {
  auto o = Open(c, false);
  if (!o.ok()) return o.status();
  const int workers = 16;
  const int64_t each = (c.rows + workers - 1) / workers;
  return RunThreads(workers, each,
                    [&](int w, int64_t i) -> Status {
                      const int64_t n = w * each + i;
                      return n < c.rows ? o->table.Upsert(Numbered(n, value, 0)).status()
                                        : Status::OK();
                    })
      .status();
}

// One timed query through `o`, added to `s` with the requests it sent.
Status TimedQuery(const Cell& c, Opened& o, Sample& s) {
  Stopwatch watch((*o.counter)->Total());
  if (Status q = QueryAll(o.table, c.rows); !q.ok()) return q;
  watch.Stop((*o.counter)->Total());
  watch.AddTo(s, (*o.counter)->Total());
  return Status::OK();
}

// `reps` times: before(rep) (not timed), then the timed query.
Result<Sample> TimedQueries(const Cell& c, Opened& o, const std::function<Status(int)>& before) {
  Sample s;
  for (int rep = 0; rep < c.reps; ++rep) {
    if (Status b = before(rep); !b.ok()) return b;
    if (Status q = TimedQuery(c, o, s); !q.ok()) return q;
  }
  return s;
}

// A query through a fresh, empty cache each time.
Result<Sample> Cold(const Cell& c) {
  Sample s;
  for (int rep = 0; rep < c.reps; ++rep) {
    auto o = Open(c, true);
    if (!o.ok()) return o.status();
    if (Status q = TimedQuery(c, *o, s); !q.ok()) return q;
  }
  return s;
}

// A store with a cache warmed by one query (not timed), and a writer
// without one: kept for every round of a system, as a long-lived client's.
struct WarmClient {
  Opened reader, writer;
  int version = 0;  // of the rows the writer rewrote last
};

Result<std::unique_ptr<WarmClient>> WarmUp(const Cell& c) {
  auto reader = Open(c, true);
  if (!reader.ok()) return reader.status();
  if (Status w = QueryAll(reader->table, c.rows); !w.ok()) return w;
  auto writer = Open(c, false);
  if (!writer.ok()) return writer.status();
  return std::make_unique<WarmClient>(WarmClient{std::move(*reader), std::move(*writer)});
}

// Queries through the warm cache of `client` (made on the first round);
// with `changed_pct`, that share of the rows is rewritten by the writer
// before each query.
Result<Sample> Warm(const Cell& c, const std::string& value, int changed_pct,
                    std::unique_ptr<WarmClient>& client) {
  if (!client) {
    auto made = WarmUp(c);
    if (!made.ok()) return made.status();
    client = std::move(*made);
  }
  WarmClient& w = *client;
  // Other systems of the cell (changed-1pct) rewrote rows since this one's
  // last round: one query, not timed, brings its cache up to date.
  if (changed_pct == 0) {
    if (Status q = QueryAll(w.reader.table, c.rows); !q.ok()) return q;
  }
  const int64_t changes = changed_pct ? std::max<int64_t>(1, c.rows * changed_pct / 100) : 0;
  return TimedQueries(c, w.reader, [&](int) -> Status {
    ++w.version;
    for (int64_t i = 0; i < changes; ++i) {
      const int64_t row = (i * 100 + w.version * 7) % c.rows;  // spread over the partition
      Status s = w.writer.table.Upsert(Numbered(row, value, w.version)).status();
      if (!s.ok()) return s;
    }
    return Status::OK();
  });
}

// A GET of each row by its key, eight at once (what the query does for the
// rows its listing cannot answer), no cache: one "query" a round.
Result<Sample> GetPerRow(const Cell& c) {
  auto o = Open(c, false);
  if (!o.ok()) return o.status();
  const int workers = 8;
  const int64_t each = (c.rows + workers - 1) / workers;
  const double cpu0 = CpuSeconds();
  auto all = RunThreads(workers, each, [&](int w, int64_t i) -> Status {
    const int64_t n = w * each + i;
    return n < c.rows ? o->table.Get("p", RowKey(n)).status() : Status::OK();
  });
  if (!all.ok()) return all.status();
  Sample s;
  s.ops = 1;
  s.seconds = all->seconds;
  s.cpu_seconds = CpuSeconds() - cpu0;
  s.latencies_us = {all->seconds * 1e6};
  s.requests = (*o->counter)->Total();
  return s;
}

Result<Sample> TablesSdk(const Cell& c, const W4Options& o) {
  return RunNodePeer(o.tables_script,
                     {TableConnectionTo(c.table_port), c.table, "query", std::to_string(c.rows),
                      std::to_string(c.bytes), std::to_string(c.reps)});
}

bool Wanted(const W4Options& o, const std::string& name) {
  return o.systems.empty() ||
         std::find(o.systems.begin(), o.systems.end(), name) != o.systems.end();
}

std::string OpName(const Cell& c) {
  return "q" + std::to_string(c.rows) + "x" + std::to_string(c.bytes / 1000) + "k";
}

Result<std::vector<Row>> RunCellOf(const Cell& c, const W4Options& o, const std::string& workload) {
  const std::string value = ValueBytes(c.bytes);
  if (Status s = Load(c, value); !s.ok()) return s.WithContext("loading " + OpName(c));
  std::vector<System> systems;
  auto add = [&](const char* name, std::function<Result<Sample>()> run) {
    if (Wanted(o, name)) systems.push_back({name, std::move(run)});
  };
  add("cold", [&] { return Cold(c); });
  std::unique_ptr<WarmClient> cached, changed;
  add("cached", [&] { return Warm(c, value, 0, cached); });
  add("changed-1pct", [&] { return Warm(c, value, 1, changed); });
  if (c.rows <= o.max_rows_get_per_row) add("get-per-row", [&] { return GetPerRow(c); });
  if (c.table_port != 0 && Wanted(o, "tables-sdk")) {
    auto loaded = RunNodePeer(o.tables_script, {TableConnectionTo(c.table_port), c.table, "load",
                                                std::to_string(c.rows), std::to_string(c.bytes)});
    if (!loaded.ok()) return loaded.status();
    add("tables-sdk", [&] { return TablesSdk(c, o); });
  }
  return RunCell(workload, OpName(c), 1, systems, o.rounds);
}

}  // namespace

Result<std::vector<Row>> RunW4(const W4Options& o) {
  std::vector<Row> rows;
  for (size_t e = 0; e < o.endpoints.size(); ++e) {
    const W2Endpoint& at = o.endpoints[e];
    const std::string workload = "W4-" + std::to_string(at.added_rtt_ms) + "ms";
    for (size_t bytes : o.value_bytes) {
      for (int64_t n : o.rows) {
        if (n * static_cast<int64_t>(bytes) > o.max_cell_bytes) continue;
        if (at.added_rtt_ms > 0 && n > o.max_rows_with_latency) continue;
        Cell c;
        c.port = at.port;
        c.table_port = e < o.table_endpoints.size() ? o.table_endpoints[e].port : 0;
        c.rows = n;
        c.bytes = bytes;
        c.container = FreshName("w4c");
        c.table = FreshName("w4t");
        c.reps = static_cast<int>(std::clamp<int64_t>(2000 / n, 1, 5));
        auto cell = RunCellOf(c, o, workload);
        if (!cell.ok()) return cell.status();
        rows.insert(rows.end(), cell->begin(), cell->end());
      }
    }
  }
  return rows;
}

}  // namespace bench
