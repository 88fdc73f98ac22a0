// SPDX-License-Identifier: Apache-2.0
// What a remote query's rows cost with and without their inline copies
// (issue 32, goal 6). The same rows (a 1,000-byte Binary and an Int64, as
// W4 writes them) in two containers of one Azurite: one written with the
// copies (the default), one with StoreOptions::inline_body_max_bytes = 0.
// Each round lists both (List Blobs with metadata, every page), in turns,
// and queries the one with copies (the whole client path: XML, base64, the
// MD5 that ties a copy to its body, the entity). Prints medians of the
// wall time and of this process's CPU a row.
//
//   cmake --build build --target listing_share
//   build/bench/listing_share AZURITE_PORT [rows, default 1000] [rounds, default 9]
#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "bench/harness.h"    // RowKey, RunThreads, Quantile
#include "bench/w2_remote.h"  // ConnectionTo, FreshName, QueryAll
#include "blobtable/store.h"

namespace {

using blobtable::Status;

double CpuSeconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

struct Measured {
  std::vector<double> wall_ms, cpu_us_a_row;
  void Add(double wall_s, double cpu_s, int64_t rows) {
    wall_ms.push_back(wall_s * 1e3);
    cpu_us_a_row.push_back(cpu_s * 1e6 / static_cast<double>(rows));
  }
  std::string Median() const {
    char out[96];
    snprintf(out, sizeof out, "%8.1f ms  %6.1f us CPU a row", bench::Quantile(wall_ms, 0.5),
             bench::Quantile(cpu_us_a_row, 0.5));
    return out;
  }
};

// Times `fn` (which handles `rows` rows) into `m`.
template <typename Fn>
Status Time(Measured& m, int64_t rows, Fn fn) {
  const auto t0 = std::chrono::steady_clock::now();
  const double c0 = CpuSeconds();
  Status s = fn();
  m.Add(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(),
        CpuSeconds() - c0, rows);
  return s;
}

Status ListAll(blobtable::Store& store, int64_t rows) {
  blobtable::ListOptions list;
  list.prefix = "t/bench/e/";
  int64_t seen = 0;
  do {
    auto page = store.blob_store().List(list);
    if (!page.ok()) return page.status();
    seen += static_cast<int64_t>(page->items.size());
    list.marker = page->next_marker;
  } while (!list.marker.empty());
  return seen == rows ? Status::OK() : Status::Internal("listed " + std::to_string(seen));
}

blobtable::Result<std::unique_ptr<blobtable::Store>> Load(int port, size_t inline_max,
                                                          int64_t rows) {
  blobtable::StoreOptions o;
  o.container = bench::FreshName("share");
  o.cache.enabled = false;
  o.inline_body_max_bytes = inline_max;
  auto store = blobtable::Store::Open(bench::ConnectionTo(port), o);
  if (!store.ok()) return store.status();
  auto table = (*store)->OpenTable("bench");
  if (!table.ok()) return table.status();
  std::string value(1000, '\0');
  for (size_t i = 0; i < value.size(); ++i) value[i] = static_cast<char>(i * 7919 % 251);
  const int workers = 16;
  auto loaded = bench::RunThreads(workers, (rows + workers - 1) / workers, [&](int w, int64_t i) {
    const int64_t n = w * ((rows + workers - 1) / workers) + i;
    if (n >= rows) return Status::OK();
    blobtable::Entity e("p", bench::RowKey(n));
    e.Set("v", blobtable::Binary{value});
    e.Set("version", int64_t{1});
    return table->Upsert(e).status();
  });
  if (!loaded.ok()) return loaded.status();
  return std::move(*store);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: %s AZURITE_PORT [rows] [rounds]\n", argv[0]);
    return 2;
  }
  const int port = atoi(argv[1]);
  const int64_t rows = argc > 2 ? atoll(argv[2]) : 1000;
  const int rounds = argc > 3 ? atoi(argv[3]) : 9;
  auto with = Load(port, 4096, rows);
  auto without = Load(port, 0, rows);
  if (!with.ok() || !without.ok()) {
    fprintf(stderr, "loading: %s\n",
            (!with.ok() ? with.status() : without.status()).ToString().c_str());
    return 1;
  }
  printf("containers: %s (copies), %s (none); bench/listing_bytes.mjs counts their XML\n",
         (*with)->options().container.c_str(), (*without)->options().container.c_str());
  auto table = (*with)->OpenTable("bench");
  Measured list_with, list_without, query_with;
  for (int r = 0; r < rounds; ++r) {
    Status s[3];
    // In turns, the order swapped each round: neither always goes first.
    if (r % 2 == 0) {
      s[0] = Time(list_with, rows, [&] { return ListAll(**with, rows); });
      s[1] = Time(list_without, rows, [&] { return ListAll(**without, rows); });
    } else {
      s[1] = Time(list_without, rows, [&] { return ListAll(**without, rows); });
      s[0] = Time(list_with, rows, [&] { return ListAll(**with, rows); });
    }
    s[2] = Time(query_with, rows, [&] { return bench::QueryAll(*table, rows); });
    for (const Status& st : s)
      if (!st.ok()) {
        fprintf(stderr, "round %d: %s\n", r, st.ToString().c_str());
        return 1;
      }
  }
  printf("%lld rows of a 1,000-byte Binary, medians of %d rounds:\n", static_cast<long long>(rows),
         rounds);
  printf("  list, inline copies:    %s\n", list_with.Median().c_str());
  printf("  list, no copies:        %s\n", list_without.Median().c_str());
  printf("  query, inline copies:   %s\n", query_with.Median().c_str());
  printf("  the copies' share of the listing's wall time: %.0f %%\n",
         100.0 * (1.0 - bench::Quantile(list_without.wall_ms, 0.5) /
                            bench::Quantile(list_with.wall_ms, 0.5)));
  return 0;
}
