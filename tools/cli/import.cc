// SPDX-License-Identifier: Apache-2.0
// `blobtable import TABLE [--mode M] [--parallel N] [--stop-on-error]
// [--quiet]`: JSON lines in (tools/bulk.h).
#include <sys/stat.h>
#include <unistd.h>

#include <iostream>
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
  imp.add_option("--parallel", o.bulk.parallel,
                 "writes in flight at once on a remote store (default 16); the embedded store "
                 "writes a thousand lines at a time in one write")
      ->check(CLI::Range(1, 256));
  imp.add_option("--format", o.bulk.format,
                 "jsonl (default: one entity a line, as `get` prints it), csv or tsv (a header "
                 "row names the columns, as `export --format csv|tsv` prints them)")
      ->check(CLI::IsMember({"jsonl", "csv", "tsv"}));
  imp.add_option("--types", o.bulk.types,
                 "csv/tsv: NAME:TYPE,... the type of a column's values where the row has no "
                 "NAME@odata.type cell (else true/false, JSON numbers and strings are read as "
                 "JSON input reads them)");
  imp.add_flag("--stop-on-error", o.bulk.stop_on_error, "stop at the first failed row");
  imp.add_flag("--quiet", o.bulk.quiet, "no progress, no summary");
}

int Run(ImportCommandOptions& o, Context& c) {
  auto opened = OpenTable(c, o.table);
  if (!opened.ok()) return Fail(c.err, opened.status());
  o.bulk.progress = ShowsProgress(c.err);
  struct stat st;
  if (&c.in == &std::cin && fstat(STDIN_FILENO, &st) == 0 && S_ISREG(st.st_mode))
    o.bulk.input_bytes = static_cast<int64_t>(st.st_size);
  return CmdImport(opened->store.get(), opened->table, o.bulk, c.in, c.err);
}

}  // namespace

std::unique_ptr<Command> ImportCommand() {
  return MakeCommand<ImportCommandOptions>({
      .name = "import",
      .help = "import TABLE [--format jsonl|csv|tsv] [--types NAME:TYPE,...] [--mode "
              "insert|upsert|replace|merge] [--parallel N] [--stop-on-error] [--quiet]: one "
              "entity a line on stdin (the form `get` prints), or CSV/TSV with a header row. "
              "Every row is checked before it is written; every bad line or failed row is "
              "reported with its line number, and the others go in. insert skips existing "
              "rows; upsert (the default) is safe to rerun. Exit 0 only if no row failed. "
              "--stop-on-error writes nothing after the first failed line. Ten rows in a row "
              "failing on storage (unreachable, credentials refused) stop it, naming the line "
              "to run again from. Progress (with % and time left when stdin is a file) on a "
              "terminal; Ctrl-C stops after the batch in hand and prints the summary (exit 130).",
      .example = "blobtable import orders < orders.jsonl\n  "
                 "blobtable import orders --format csv --types Placed:datetime < orders.csv",
      .writes = true,
      .define = Define,
      .run = Run,
  });
}

}  // namespace blobtable::cli
