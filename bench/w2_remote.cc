// SPDX-License-Identifier: Apache-2.0
#include "bench/w2_remote.h"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <map>
#include <memory>

#include "bench/node_peer.h"
#include "blobtable/store.h"
#include "blobtable/storage_options.h"

namespace bench {

using blobtable::Result;
using blobtable::Status;

namespace {

// Azurite's well-known development account.
std::string DevAccountWith(const char* endpoint, int port) {
  return std::string(
             "DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;"
             "AccountKey=Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/"
             "K1SZFPTOtr/KBHBeksoGMGw==;") +
         endpoint + "=http://127.0.0.1:" + std::to_string(port) + "/devstoreaccount1";
}

}  // namespace

std::string ConnectionTo(int port) { return DevAccountWith("BlobEndpoint", port); }
std::string TableConnectionTo(int port) { return DevAccountWith("TableEndpoint", port); }

std::string FreshName(const char* stem) {
  static std::atomic<int> n{0};
  return stem + std::to_string(getpid()) + "x" + std::to_string(n++);
}

blobtable::Status QueryAll(const blobtable::Table& table, int64_t rows) {
  blobtable::QueryOptions q;
  q.partition_key = "p";
  int64_t seen = 0;
  do {
    auto page = table.Query(q);
    if (!page.ok()) return page.status();
    seen += static_cast<int64_t>(page->entities.size());
    q.continuation = std::move(page->continuation);
  } while (!q.continuation.empty());
  if (seen != rows)
    return blobtable::Status::Internal("the query found " + std::to_string(seen) + " of " +
                                       std::to_string(rows) + " rows");
  return blobtable::Status::OK();
}

RequestCounter CountRequests(blobtable::StoreOptions& options) {
  auto counter = std::make_shared<std::shared_ptr<blobtable::internal::CountingBlobStore>>();
  options.wrap_blob_store = [counter](std::shared_ptr<blobtable::BlobStore> s) {
    *counter = std::make_shared<blobtable::internal::CountingBlobStore>(std::move(s));
    return std::shared_ptr<blobtable::BlobStore>(*counter);
  };
  return counter;
}

namespace {

std::string Key(int worker, int64_t i) { return ThreadKey('w', worker, i); }

struct Cell {
  std::string op;
  int concurrency;
  int port;
  int64_t ops_per_worker;
};

// One round of blobtable through `transport`: get reads an entity, upsert
// writes one, replace writes one If-Match the ETag it last wrote; each
// worker on keys of its own, written first for get and replace.
Result<Sample> BlobtableRound(const std::string& transport, const Cell& c, const W2Options& o,
                              const std::string& value) {
  blobtable::StoreOptions so;
  so.azure.http_transport = transport;
  so.cache.enabled = false;
  so.container = FreshName("w2c");
  const RequestCounter counter = CountRequests(so);
  auto store = blobtable::Store::Open(ConnectionTo(c.port), so);
  if (!store.ok()) return store.status();
  auto table = (*store)->OpenTable("bench");
  if (!table.ok()) return table.status();
  const int64_t n = c.ops_per_worker;
  std::vector<std::map<std::string, std::string>> etags(static_cast<size_t>(c.concurrency));
  auto write = [&](int w, int64_t i, bool if_match) -> Status {
    blobtable::Entity e("p", Key(w, i));
    e.Set("v", blobtable::Binary{value});
    std::string& etag = etags[static_cast<size_t>(w)][e.row_key()];
    auto r = if_match ? table->Replace(e, etag) : table->Upsert(e);
    if (r.ok()) etag = r->etag();
    return r.status();
  };
  if (c.op != "upsert") {
    auto loaded =
        RunThreads(c.concurrency, n, [&](int w, int64_t i) { return write(w, i, false); });
    if (!loaded.ok()) return loaded.status();
  }
  (*counter)->Clear();
  Result<Sample> s = RunThreads(c.concurrency, n, [&](int w, int64_t i) -> Status {
    if (c.op == "get") return table->Get("p", Key(w, (i * 7919) % n)).status();
    return write(w, i, c.op == "replace");
  });
  if (s.ok()) s->requests = (*counter)->Total();
  return s;
}

// One round of the SDK: bench/sdk_peer.mjs in a node process of its own.
Result<Sample> SdkRound(const Cell& c, const W2Options& o) {
  auto s = RunNodePeer(o.sdk_script,
                       {ConnectionTo(c.port), FreshName("w2s"), c.op, std::to_string(c.concurrency),
                        std::to_string(c.ops_per_worker), std::to_string(o.value_bytes), "k"});
  if (s.ok()) s->requests = s->ops;  // one Get Blob or Put Blob an operation
  return s;
}

bool Wanted(const W2Options& o, const std::string& name) {
  return o.systems.empty() ||
         std::find(o.systems.begin(), o.systems.end(), name) != o.systems.end();
}

}  // namespace

Result<std::vector<Row>> RunW2(const W2Options& o) {
  const std::string value = ValueBytes(o.value_bytes);
  std::vector<Row> rows;
  for (const W2Endpoint& at : o.endpoints) {
    const std::string workload = "W2-" + std::to_string(at.added_rtt_ms) + "ms";
    for (int concurrency : o.concurrency) {
      for (const std::string& op : o.ops) {
        const Cell cell{op, concurrency, at.port,
                        std::max<int64_t>(1, o.ops_per_round / concurrency)};
        std::vector<System> systems;
        for (const std::string& transport : blobtable::HttpTransportNames()) {
          const std::string name = "blobtable-" + transport;
          if (Wanted(o, name))
            systems.push_back(
                {name, [&, cell, t = transport] { return BlobtableRound(t, cell, o, value); }});
        }
        if (Wanted(o, "sdk-js"))
          systems.push_back({"sdk-js", [&, cell] { return SdkRound(cell, o); }});
        auto rows_of_cell = RunCell(workload, op, concurrency, systems, o.rounds);
        if (!rows_of_cell.ok()) return rows_of_cell.status();
        rows.insert(rows.end(), rows_of_cell->begin(), rows_of_cell->end());
      }
    }
  }
  return rows;
}

}  // namespace bench
