// SPDX-License-Identifier: Apache-2.0
// `blobtable stats`: the store's figures as JSON.
#include <ostream>

#include <nlohmann/json.hpp>

#include "tools/cli.h"
#include "tools/cli/registry.h"
#include "tools/open_store.h"

namespace blobtable::cli {
namespace {

struct StatsCommandOptions {};

int Run(StatsCommandOptions&, Context& c) {
  auto store = OpenStore(c);
  if (!store.ok()) return Fail(c.err, store.status());
  auto stats = (*store)->Stats();
  if (!stats.ok()) return Fail(c.err, stats.status());
  nlohmann::ordered_json j;
  j["tables"] = nlohmann::json::array();
  for (const TableFigures& t : stats->tables)
    j["tables"].push_back(nlohmann::ordered_json{
        {"name", t.name}, {"entity_blobs", t.entity_blobs}, {"bytes", t.bytes}});
  if (stats->file) {
    const LocalFileFigures& f = *stats->file;
    j["file"] = nlohmann::ordered_json{
        {"directory", f.directory},
        {"file_bytes", f.file_bytes},
        {"page_size", f.page_size},
        {"pages_used", f.pages_used},
        {"free_pages", f.free_pages},
        {"readers", f.readers},
        {"compacted_bytes", f.compacted_bytes},
        {"compact_would_free_bytes",
         f.file_bytes > f.compacted_bytes ? f.file_bytes - f.compacted_bytes : 0}};
  }
  if (stats->cache) {
    const CacheStats& s = *stats->cache;
    j["cache"] = nlohmann::ordered_json{
        {"directory", s.directory}, {"entries", s.entries},           {"bytes", s.bytes},
        {"hits", s.hits},           {"not_modified", s.not_modified}, {"misses", s.misses}};
  }
  c.out << j.dump(2) << "\n";
  return kExitOk;
}

}  // namespace

std::unique_ptr<Command> StatsCommand() {
  return MakeCommand<StatsCommandOptions>({
      .name = "stats",
      .help = "stats: the store's figures as JSON: each table's entity blobs and their bytes "
              "(a listing of every table); for the embedded store its file (bytes, pages in "
              "use, free pages for reuse, reader slots, and about what `compact` would leave "
              "and give back); for an Azure store read through the "
              "cache, the cache's counts.",
      .example = "blobtable stats | jq '.file.free_pages'",
      .run = Run,
  });
}

}  // namespace blobtable::cli
