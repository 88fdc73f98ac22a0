// SPDX-License-Identifier: Apache-2.0
// `blobtable cache stats|clear`: the local cache's directory, no store.
#include <ostream>
#include <string>

#include <nlohmann/json.hpp>

#include "blobtable/cache.h"
#include "tools/cli.h"
#include "tools/cli/registry.h"

namespace blobtable::cli {
namespace {

struct CacheCommandOptions {
  std::string action;  // "stats" or "clear"
};

void Define(CLI::App& cache, CacheCommandOptions& o) {
  cache.require_subcommand(1, 1);
  cache.add_subcommand("stats", "prints the cache's counts and size as JSON")->callback([&o] {
    o.action = "stats";
  });
  cache.add_subcommand("clear", "drops every cached entry and zeroes the counts")->callback([&o] {
    o.action = "clear";
  });
}

int Stats(const std::string& dir, std::ostream& out, std::ostream& err) {
  auto stats = ReadCacheStats(dir);
  if (!stats.ok()) return Fail(err, stats.status());
  nlohmann::ordered_json j;
  j["directory"] = stats->directory;
  j["entries"] = stats->entries;
  j["bytes"] = stats->bytes;
  j["hits"] = stats->hits;
  j["not_modified"] = stats->not_modified;
  j["changed"] = stats->changed;
  j["misses"] = stats->misses;
  j["bytes_saved"] = stats->bytes_saved;
  j["evictions"] = stats->evictions;
  j["stale"] = stats->stale;
  out << j.dump() << "\n";
  return kExitOk;
}

// On the directory --cache names, else the default one.
int Run(CacheCommandOptions& o, Context& c) {
  const std::string& configured = c.global.store.cache.directory;
  const std::string dir = configured.empty() ? DefaultCacheDirectory() : configured;
  if (dir.empty())
    return Fail(c.err, Status::InvalidArgument("no cache directory: set XDG_CACHE_HOME or HOME, "
                                               "or give --cache DIR"));
  if (o.action == "clear") {
    Status s = ClearCache(dir);
    if (!s.ok()) return Fail(c.err, s);
    c.out << nlohmann::json{{"directory", dir}, {"cleared", true}}.dump() << "\n";
    return kExitOk;
  }
  return Stats(dir, c.out, c.err);
}

}  // namespace

std::unique_ptr<Command> CacheCommand() {
  return MakeCommand<CacheCommandOptions>({
      .name = "cache",
      .help = "cache stats|clear: the local cache of Azure stores in --cache DIR (or the "
              "default directory). stats prints its counts as JSON (every process that used "
              "it adds its own when it closes), clear empties it.",
      .example = "blobtable --store \"$AZURE_STORAGE_CONNECTION_STRING\" cache stats",
      .define = Define,
      .run = Run,
  });
}

}  // namespace blobtable::cli
