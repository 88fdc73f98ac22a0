// SPDX-License-Identifier: Apache-2.0
#include "tools/bulk.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <optional>
#include <csignal>
#include <cstdio>
#include <iostream>
#include <istream>
#include <ostream>
#include <vector>

#include <unistd.h>

#include "blobtable/store.h"
#include "tools/cli.h"
#include "tools/entity_json.h"
#include "tools/entity_output.h"
#include "tools/progress.h"

namespace blobtable::cli {
namespace {

// The first 8 bytes of `s` after `skip`, as a base-256 fraction.
double Fraction(std::string_view s, size_t skip) {
  double v = 0, scale = 1.0 / 256;
  for (size_t i = skip; i < s.size() && i < skip + 8; ++i, scale /= 256)
    v += static_cast<unsigned char>(s[i]) * scale;
  return v;
}

}  // namespace

bool ShowsProgress(const std::ostream& err) { return &err == &std::cerr && isatty(STDERR_FILENO); }

double RangeFraction(std::string_view from, std::string_view to, std::string_view key) {
  size_t common = 0;
  while (common < from.size() && common < to.size() && from[common] == to[common]) ++common;
  const double lo = Fraction(from, common), hi = Fraction(to, common);
  if (hi <= lo) return 0;
  if (key.substr(0, common) != from.substr(0, common)) return key < from ? 0 : 1;
  return std::clamp((Fraction(key, common) - lo) / (hi - lo), 0.0, 1.0);
}

int CmdExport(const Table& table, QueryOptions q, const BulkOptions& o, std::ostream& out,
              std::ostream& err, const IndexRead* index) {
  auto output = MakeEntityOutput(o.format, /*many=*/true, out, q.select);
  if (!output)
    return Fail(err, Status::InvalidArgument("unknown --format '" + o.format +
                                             "' (jsonl, json, table, csv, tsv)"));
  Progress progress("export", o, err);
  bool stale = false;
  int64_t printed = 0;
  const int page_size = q.top;
  do {
    if (o.limit >= 0) q.top = static_cast<int>(std::min<int64_t>(page_size, o.limit - printed));
    auto page = index != nullptr ? table.QueryIndex(index->index, index->query, q) : table.Query(q);
    if (!page.ok()) return Fail(err, page.status());
    int64_t bytes = 0;
    for (const Entity& e : page->entities) bytes += output->Add(e);
    if (!output->status().ok()) return Fail(err, output->status());
    if (!out) return Fail(err, Status::IOError(o.command + ": cannot write the output"));
    double fraction = -1;
    if (q.partition_key && q.row_key_from && q.row_key_to && !page->entities.empty())
      fraction = RangeFraction(*q.row_key_from, *q.row_key_to, page->entities.back().row_key());
    progress.Add(static_cast<int64_t>(page->entities.size()), bytes, fraction);
    printed += static_cast<int64_t>(page->entities.size());
    stale = stale || page->stale;
    q.continuation = page->continuation;
  } while (!q.continuation.empty() && (o.limit < 0 || printed < o.limit));
  if (printed == 0 && o.if_none)
    if (Status s = o.if_none(); !s.ok()) return Fail(err, s);
  output->Finish();
  if (!output->status().ok()) return Fail(err, output->status());
  out.flush();
  if (!out) return Fail(err, Status::IOError(o.command + ": cannot write the output"));
  progress.Finish("");
  WarnIfStale(stale, err);
  return kExitOk;
}

}  // namespace blobtable::cli
