// SPDX-License-Identifier: Apache-2.0
// `blobtable get TABLE PK RK [--format F]`: one entity.
#include <string>

#include "tools/cli.h"
#include "tools/cli/registry.h"
#include "tools/entity_output.h"
#include "tools/open_store.h"

namespace blobtable::cli {
namespace {

struct GetCommandOptions {
  std::string table, pk, rk;
  std::string format = "jsonl";
};

void Define(CLI::App& get, GetCommandOptions& o) {
  get.add_option("TABLE", o.table)->required();
  get.add_option("PK", o.pk)->required();
  get.add_option("RK", o.rk)->required();
  get.add_option("--format", o.format, "jsonl (default), json, table, csv or tsv")
      ->check(FormatNames());
}

int Run(GetCommandOptions& o, Context& c) {
  auto opened = OpenTable(c, o.table);
  if (!opened.ok()) return Fail(c.err, opened.status());
  auto output = MakeEntityOutput(o.format, /*many=*/false, c.out);
  if (!output)
    return Fail(c.err, Status::InvalidArgument("unknown --format '" + o.format +
                                               "' (jsonl, json, table, csv, tsv)"));
  auto e = opened->table.Get(o.pk, o.rk);
  if (e.status().IsNotFound())
    if (Status exists = NothingFound(c, *opened); !exists.ok()) return Fail(c.err, exists);
  if (!e.ok()) return Fail(c.err, e.status());
  output->Add(*e);
  output->Finish();
  WarnIfStale(e->stale(), c.err);
  return kExitOk;
}

}  // namespace

std::unique_ptr<Command> GetCommand() {
  return MakeCommand<GetCommandOptions>({
      .name = "get",
      .help = "get TABLE PK RK [--format jsonl|json|table|csv|tsv]: prints the entity (jsonl, the "
              "default: one line of JSON; json: indented; table: aligned columns).",
      .example = "blobtable get orders c42 o1 --format table",
      .define = Define,
      .run = Run,
  });
}

}  // namespace blobtable::cli
