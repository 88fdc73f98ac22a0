// SPDX-License-Identifier: Apache-2.0
// `blobtable index create|drop|list|check` (docs/indexes.md), and the index
// arguments of `query --index` (IndexReadOf).
#include <algorithm>
#include <ostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "blobtable/index.h"
#include "tools/bulk.h"
#include "tools/cli.h"
#include "tools/cli/registry.h"
#include "tools/entity_json.h"
#include "tools/open_store.h"
#include "util/ascii.h"
#include "util/macros.h"

namespace blobtable::cli {
namespace {

struct IndexCommandOptions {
  std::string action;  // create, drop, list, check
  std::string table;
  std::string name;
  std::vector<std::string> properties;
  std::vector<std::string> covered;
  bool unique = false;
};

void Define(CLI::App& index, IndexCommandOptions& o) {
  index.require_subcommand(1, 1);
  auto* create = index.add_subcommand(
      "create",
      "declares the index and builds it from what the table holds (online); on Azure it waits "
      "10 s first (writers elsewhere may hold the definitions that long), not on the embedded "
      "store");
  create->add_option("TABLE", o.table)->required();
  create->add_option("NAME", o.name)->required();
  create->add_option("PROPERTIES", o.properties, "A[,B[,C]]: the indexed properties, in order")
      ->required()
      ->delimiter(',');
  create->add_flag("--unique", o.unique, "no two entities may hold the same values");
  create
      ->add_option("--cover", o.covered,
                   "A,B: properties the index also holds (a query "
                   "selecting only these is answered from the index)")
      ->delimiter(',');
  create->callback([&o] { o.action = "create"; });
  auto* drop = index.add_subcommand(
      "drop",
      "removes the index and its entries; on Azure it waits 10 s first, not on the embedded store");
  drop->add_option("TABLE", o.table)->required();
  drop->add_option("NAME", o.name)->required();
  drop->callback([&o] { o.action = "drop"; });
  auto* list = index.add_subcommand("list", "prints the table's indexes, one JSON object a line");
  list->add_option("TABLE", o.table)->required();
  list->callback([&o] { o.action = "list"; });
  auto* check =
      index.add_subcommand("check", "verifies every entity has exactly its entries; exit 8 if not");
  check->add_option("TABLE", o.table)->required();
  check->add_option("NAME", o.name)->required();
  check->callback([&o] { o.action = "check"; });
}

const char* StateName(IndexState s) {
  switch (s) {
    case IndexState::kBuilding: return "building";
    case IndexState::kReady: return "ready";
    case IndexState::kDropping: return "dropping";
  }
  return "unknown";
}

int Create(const Store& store, const IndexCommandOptions& o, Context& c) {
  const IndexSpec spec{
      .name = o.name, .properties = o.properties, .unique = o.unique, .covered = o.covered};
  CreateIndexOptions options;
  IndexBuildProgress last;
  const bool show = ShowsProgress(c.err);
  options.progress = [&](const IndexBuildProgress& p) {
    last = p;
    if (show)
      c.err << "\rindex " << o.name << ": " << p.entities << " entities walked" << std::flush;
  };
  Status created = store.CreateIndex(o.table, spec, options);
  if (show) c.err << "\n";
  if (!created.ok()) return Fail(c.err, created);
  // A table with no entity yet, or a name mistyped: said, since the index
  // is made either way (an index declared before the rows come is a way
  // to work).
  if (last.entities == 0)
    c.err << "blobtable: note: table " << o.table << " holds no entities (a new table, or a "
          << "mistyped name?): index " << o.name << " will hold those written from now on\n";
  c.out << nlohmann::json{{"index", o.name},
                          {"table", o.table},
                          {"state", "ready"},
                          {"entities_walked", last.entities},
                          {"entries_written", last.entries}}
               .dump()
        << "\n";
  return kExitOk;
}

int List(const Store& store, const IndexCommandOptions& o, Context& c) {
  auto indexes = store.ListIndexes(o.table);
  if (!indexes.ok()) return Fail(c.err, indexes.status());
  for (const IndexInfo& info : *indexes)
    c.out << nlohmann::json{{"name", info.spec.name},
                            {"properties", info.spec.properties},
                            {"unique", info.spec.unique},
                            {"covered", info.spec.covered},
                            {"state", StateName(info.state)}}
                 .dump()
          << "\n";
  return kExitOk;
}

int Check(const Store& store, const IndexCommandOptions& o, Context& c) {
  auto report = store.CheckIndex(o.table, o.name);
  if (!report.ok()) return Fail(c.err, report.status());
  for (const std::string& problem : report->problems)
    c.out << nlohmann::json{{"problem", problem}}.dump() << "\n";
  c.out << nlohmann::json{{"entities", report->entities},
                          {"entries", report->entries},
                          {"missing", report->missing},
                          {"dangling", report->dangling},
                          {"duplicates", report->duplicates}}
               .dump()
        << "\n";
  return report->clean() ? kExitOk : kExitDamaged;
}

int Run(IndexCommandOptions& o, Context& c) {
  auto opened = OpenTable(c, o.table);  // the table's name checked before anything is made
  if (!opened.ok()) return Fail(c.err, opened.status());
  const Store& store = *opened->store;
  if (o.action == "create") return Create(store, o, c);
  if (o.action == "list") return List(store, o, c);
  if (o.action == "check") return Check(store, o, c);
  // A command returns once it is done: its errors are reported, not left to
  // the background threads of a process about to end.
  // The removal is safe to repeat (DropIndex again finishes a drop cut
  // short): a request whose answer was lost is sent again, never left to
  // the user as an outcome to settle.
  Status dropped;
  for (int attempt = 0; attempt < 3; ++attempt) {
    dropped = store.DropIndex(o.table, o.name, {.wait = true});
    if (!dropped.IsOutcomeUnknown() && !dropped.IsUnavailable()) break;
  }
  if (dropped.IsOutcomeUnknown())
    dropped = Status::Unavailable(dropped.message() +
                                  " (three times; `index drop` again finishes the drop)");
  if (!dropped.ok()) return Fail(c.err, dropped);
  c.out << nlohmann::json{{"index", o.name}, {"table", o.table}, {"dropped", true}}.dump() << "\n";
  return kExitOk;
}

// The value `arg` (NAME[:TYPE]=VALUE) gives, named `expected` by the index.
Result<PropertyValue> IndexValueOf(const std::string& arg, const std::string& expected,
                                   const std::string& option) {
  nlohmann::json j = {{"PartitionKey", ""}, {"RowKey", ""}};
  BT_RETURN_IF_ERROR(AddPropertyArg(j, arg, "query " + option));
  auto entity = EntityFromJson(j, nullptr);
  if (!entity.ok()) return entity.status();
  const auto& [name, value] = *entity->properties().begin();
  if (internal::AsciiLower(name) != internal::AsciiLower(expected))
    return Status::InvalidArgument("query " + option + " " + arg +
                                   ": the index's property here is " + expected + ", not " + name);
  return value;
}

}  // namespace

Result<IndexRead> IndexReadOf(const Store& store, const std::string& table, const IndexArgs& args) {
  auto indexes = store.ListIndexes(table);
  if (!indexes.ok()) return indexes.status();
  auto it = std::find_if(indexes->begin(), indexes->end(), [&](const IndexInfo& i) {
    return internal::AsciiLower(i.spec.name) == internal::AsciiLower(args.index);
  });
  if (it == indexes->end())
    return Status::InvalidArgument("table " + table + " has no index " + args.index +
                                   " (`blobtable index list " + table + "`)");
  const std::vector<std::string>& props = it->spec.properties;
  const size_t ranged = args.equal.size();
  if (ranged > props.size() || (ranged == props.size() && (args.from || args.to)))
    return Status::InvalidArgument("query --index " + args.index + ": it has " +
                                   std::to_string(props.size()) +
                                   " properties; --eq gives the first ones in order, then --from "
                                   "and --to the next");
  IndexRead read{it->spec.name, {}};
  for (size_t i = 0; i < args.equal.size(); ++i) {
    auto v = IndexValueOf(args.equal[i], props[i], "--eq");
    if (!v.ok()) return v.status();
    read.query.equal.push_back(*v);
  }
  if (args.from) {
    auto v = IndexValueOf(*args.from, props[ranged], "--from");
    if (!v.ok()) return v.status();
    read.query.from = *v;
  }
  if (args.to) {
    auto v = IndexValueOf(*args.to, props[ranged], "--to");
    if (!v.ok()) return v.status();
    read.query.to = *v;
  }
  return read;
}

std::unique_ptr<Command> IndexCommand() {
  return MakeCommand<IndexCommandOptions>({
      .name = "index",
      .help = "index create TABLE NAME A[,B[,C]] [--unique] [--cover X,Y] | index drop TABLE NAME "
              "| index list TABLE | index check TABLE NAME: secondary indexes kept in the same "
              "commit as their entities (docs/indexes.md). create builds it online and returns "
              "when it is ready. On Azure create and drop each wait 10 s first (writers in other "
              "processes may hold the index definitions that long); on the embedded store they "
              "do not wait (every commit checks the definitions in its own LMDB transaction). "
              "check prints each problem, then the counts, and exits 8 if the index is out of "
              "step. Query one with `query TABLE --index NAME --eq A=V`.",
      .example = "blobtable index create users byEmail email --unique\n  "
                 "blobtable query users --index byEmail --eq email=a@x.org",
      .writes_if = [](const IndexCommandOptions& o) { return o.action == "create"; },
      .define = Define,
      .run = Run,
  });
}

}  // namespace blobtable::cli
