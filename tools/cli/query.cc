// SPDX-License-Identifier: Apache-2.0
// `blobtable query TABLE [--pk PK] [--rk-from RK] ... [--format F]`: an export
// without its progress and summary.
#include <string>

#include "tools/bulk.h"
#include "tools/cli/registry.h"
#include "tools/open_store.h"
#include "tools/cli.h"

namespace blobtable::cli {
namespace {

struct QueryCommandOptions {
  std::string table;
  QueryOptions query;
  IndexArgs index;
  long limit = -1;  // all
  std::string format = "jsonl";
};

void Define(CLI::App& query, QueryCommandOptions& o) {
  query.add_option("TABLE", o.table)->required();
  DefineSelection(query, o.query);
  query.add_option("--select", o.query.select, "A,B: only these properties")->delimiter(',');
  query.add_option("--limit", o.limit, "N: at most N entities in all")->check(AtLeast(1));
  query.add_option("--top", o.query.top, "N: entities a page, 1..1000 (default 1000)")
      ->check(CLI::Range(1, 1000));
  query.add_option("--format", o.format, "jsonl (default), json (an array), table, csv or tsv")
      ->check(FormatNames());
  auto* index = query.add_option("--index", o.index.index,
                                 "NAME: read through this index (docs/indexes.md#querying)");
  query
      .add_option("--eq", o.index.equal,
                  "A[:TYPE]=V: with --index, the index's first property equals V (repeat for "
                  "the next ones, in order); V is a String unless TYPE says otherwise, as in put")
      ->needs(index);
  query.add_option("--from", o.index.from, "B[:TYPE]=V: with --index, the next property >= V")
      ->needs(index);
  query.add_option("--to", o.index.to, "B[:TYPE]=V: with --index, the next property <= V")
      ->needs(index);
}

int Run(QueryCommandOptions& o, Context& c) {
  auto opened = OpenTable(c, o.table);
  if (!opened.ok()) return Fail(c.err, opened.status());
  BulkOptions bulk;
  bulk.quiet = true;
  bulk.limit = o.limit;
  bulk.format = o.format;
  bulk.command = "query";
  bulk.if_none = [&] { return NothingFound(c, *opened, &o.query); };
  if (o.index.index.empty()) return CmdExport(opened->table, o.query, bulk, c.out, c.err);
  auto read = IndexReadOf(*opened->store, o.table, o.index);
  if (!read.ok()) return Fail(c.err, read.status());
  return CmdExport(opened->table, o.query, bulk, c.out, c.err, &*read);
}

}  // namespace

std::unique_ptr<Command> QueryCommand() {
  return MakeCommand<QueryCommandOptions>({
      .name = "query",
      .help =
          "query TABLE [--pk PK] [--rk-from RK] [--rk-to RK] [--rk-prefix P] [--filter "
          "EXPR] [--select A,B] [--limit N] [--top N] [--format jsonl|json|table|csv|tsv]: prints "
          "matching entities in (PartitionKey, RowKey) order, one JSON object a line by "
          "default; the RowKey range is inclusive. --filter: an Azure Tables $filter "
          "(docs/api.md#filters); --select: only these properties. --limit N stops after N "
          "entities; --top N is the page size (1..1000, as in the API). --index NAME reads "
          "through an index in its order: --eq A=V on its first properties, --from/--to on the "
          "next (docs/indexes.md#querying); --filter and --select apply on top.",
      .example = "blobtable query orders --pk c42 --filter \"Total ge 10.0\" --select Total",
      .define = Define,
      .run = Run,
  });
}

}  // namespace blobtable::cli
