// SPDX-License-Identifier: Apache-2.0
// `blobtable tables [--counts]`: the tables that hold entities.
#include <ostream>
#include <string>

#include "tools/cli.h"
#include "tools/cli/registry.h"
#include "tools/open_store.h"

namespace blobtable::cli {
namespace {

struct TablesCommandOptions {
  bool counts = false;
};

void Define(CLI::App& tables, TablesCommandOptions& o) {
  tables.add_flag("--counts", o.counts,
                  "each name followed by a tab and its number of entities (counting reads "
                  "every table's listing)");
}

int Run(TablesCommandOptions& o, Context& c) {
  auto store = OpenStore(c);
  if (!store.ok()) return Fail(c.err, store.status());
  auto names = (*store)->ListTables();
  if (!names.ok()) return Fail(c.err, names.status());
  for (const std::string& name : *names) {
    c.out << name;
    if (o.counts) {
      auto table = (*store)->OpenTable(name);
      if (!table.ok()) return Fail(c.err, table.status());
      auto n = table->Count();
      if (!n.ok()) return Fail(c.err, n.status());
      c.out << '\t' << *n;
    }
    c.out << '\n';
  }
  return kExitOk;
}

}  // namespace

std::unique_ptr<Command> TablesCommand() {
  return MakeCommand<TablesCommandOptions>({
      .name = "tables",
      .help = "tables [--counts]: the tables that hold entities, one a line, sorted (lowercase: "
              "table names are case-insensitive). A table with no entity left is not listed.",
      .example = "blobtable tables --counts",
      .define = Define,
      .run = Run,
  });
}

}  // namespace blobtable::cli
