// SPDX-License-Identifier: Apache-2.0
// `blobtable import TABLE [--mode M] [--parallel N] [--stop-on-error]
// [--quiet]`: JSON lines in (tools/bulk.h).
#include <string>

#include "tools/bulk.h"
#include "tools/cli.h"
#include "tools/cli/registry.h"
#include "tools/open_store.h"

namespace blobtable::cli {
namespace {

struct ImportCommandOptions {
  std::string table;
  BulkOptions bulk;
};

void Define(CLI::App& imp, ImportCommandOptions& o) {
  imp.add_option("TABLE", o.table)->required();
  imp.add_option("--mode", o.bulk.mode, "insert, upsert (default), replace or merge");
  imp.add_option("--parallel", o.bulk.parallel, "writes in flight at once (default 16)")
      ->check(CLI::Range(1, 256));
  imp.add_flag("--stop-on-error", o.bulk.stop_on_error, "stop at the first failed row");
  imp.add_flag("--quiet", o.bulk.quiet, "no progress, no summary");
}

int Run(ImportCommandOptions& o, Context& c) {
  auto opened = OpenTable(c, o.table);
  if (!opened.ok()) return Fail(c.err, opened.status());
  o.bulk.progress = ShowsProgress(c.err);
  return CmdImport(opened->table, o.bulk, c.in, c.err);
}

}  // namespace

std::unique_ptr<Command> ImportCommand() {
  return MakeCommand<ImportCommandOptions>({
      .name = "import",
      .help = "import TABLE [--mode insert|upsert|replace|merge] [--parallel N] "
              "[--stop-on-error] [--quiet]: one entity a line on stdin (the form `get` "
              "prints). Every bad line or failed row is reported with its line number; the "
              "others go on. insert skips existing rows; upsert (the default) is safe to rerun. "
              "Exit 0 only if no row failed.",
      .writes = true,
      .define = Define,
      .run = Run,
  });
}

}  // namespace blobtable::cli
