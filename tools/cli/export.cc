// SPDX-License-Identifier: Apache-2.0
// `blobtable export TABLE [--pk PK [--rk-from RK] [--rk-to RK]] [--filter EXPR]
// [--quiet]`: every row as JSON lines (tools/bulk.h).
#include <string>

#include "tools/bulk.h"
#include "tools/cli.h"
#include "tools/cli/registry.h"
#include "tools/open_store.h"

namespace blobtable::cli {
namespace {

struct ExportCommandOptions {
  std::string table;
  QueryOptions query;
  BulkOptions bulk;
};

void Define(CLI::App& exp, ExportCommandOptions& o) {
  exp.add_option("TABLE", o.table)->required();
  DefineSelection(exp, o.query);
  exp.add_option("--select", o.query.select, "A,B: only these properties")->delimiter(',');
  exp.add_option("--limit", o.bulk.limit, "N: at most N entities")->check(AtLeast(1));
  exp.add_option("--format", o.bulk.format,
                 "jsonl (default: what import reads), json, table, csv or tsv")
      ->check(FormatNames());
  exp.add_flag("--quiet", o.bulk.quiet, "no progress, no summary");
}

int Run(ExportCommandOptions& o, Context& c) {
  auto opened = OpenTable(c, o.table);
  if (!opened.ok()) return Fail(c.err, opened.status());
  o.bulk.progress = ShowsProgress(c.err);
  o.bulk.if_none = [&] { return NothingFound(c, *opened, &o.query); };
  return CmdExport(opened->table, o.query, o.bulk, c.out, c.err);
}

}  // namespace

std::unique_ptr<Command> ExportCommand() {
  return MakeCommand<ExportCommandOptions>({
      .name = "export",
      .help = "export TABLE [SELECTION] [--select A,B] [--limit N] [--format "
              "jsonl|json|table|csv|tsv] [--quiet]: the rows on stdout, one JSON object a line "
              "by default (the form `get` prints, what `import` reads); progress on stderr "
              "when it is a terminal, and a summary line.",
      .example = "blobtable export orders --pk c42 > c42.jsonl",
      .define = Define,
      .run = Run,
  });
}

}  // namespace blobtable::cli
