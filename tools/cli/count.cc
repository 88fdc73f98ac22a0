// SPDX-License-Identifier: Apache-2.0
// `blobtable count TABLE [selection]`: how many entities match.
#include <ostream>
#include <string>

#include "tools/cli.h"
#include "tools/cli/registry.h"
#include "tools/open_store.h"

namespace blobtable::cli {
namespace {

struct CountCommandOptions {
  std::string table;
  QueryOptions query;
};

void Define(CLI::App& count, CountCommandOptions& o) {
  count.add_option("TABLE", o.table)->required();
  DefineSelection(count, o.query);
}

int Run(CountCommandOptions& o, Context& c) {
  auto opened = OpenTable(c, o.table);
  if (!opened.ok()) return Fail(c.err, opened.status());
  auto n = opened->table.Count(o.query);
  if (!n.ok()) return Fail(c.err, n.status());
  if (*n == 0)
    if (Status exists = NothingFound(c, *opened, &o.query); !exists.ok())
      return Fail(c.err, exists);
  c.out << *n << '\n';
  return kExitOk;
}

}  // namespace

std::unique_ptr<Command> CountCommand() {
  return MakeCommand<CountCommandOptions>({
      .name = "count",
      .help = "count TABLE [--pk PK] [--rk-from RK] [--rk-to RK] [--rk-prefix P] [--filter "
              "EXPR]: prints how many entities match (a table that holds none: exit 3, unless "
              "--missing-table-ok). The "
              "embedded store counts without a filter by its listing, without reading the rows.",
      .example = "blobtable count orders --filter \"Price ge 10.0\"",
      .define = Define,
      .run = Run,
  });
}

}  // namespace blobtable::cli
