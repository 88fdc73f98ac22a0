// SPDX-License-Identifier: Apache-2.0
// `blobtable put TABLE [--mode M] [--if-match ETAG]`: one entity from stdin.
#include <istream>
#include <iterator>
#include <optional>
#include <ostream>
#include <string>

#include <nlohmann/json.hpp>

#include "tools/cli.h"
#include "tools/cli/registry.h"
#include "tools/entity_json.h"
#include "tools/open_store.h"

namespace blobtable::cli {
namespace {

struct PutCommandOptions {
  std::string table;
  std::string mode = "insert";
  std::optional<std::string> if_match;
};

void Define(CLI::App& put, PutCommandOptions& o) {
  put.add_option("TABLE", o.table)->required();
  put.add_option("--mode", o.mode)
      ->check(CLI::IsMember({"insert", "replace", "merge", "upsert", "upsert-merge"}));
  put.add_option("--if-match", o.if_match, "ETAG");
}

// Writes `entity` as `mode` says.
Result<Entity> PutAs(const Table& table, const std::string& mode, const Entity& entity,
                     const std::string& if_match) {
  if (mode == "insert") return table.Insert(entity);
  if (mode == "replace") return table.Replace(entity, if_match);
  if (mode == "merge") return table.Merge(entity, if_match);
  if (mode == "upsert") return table.Upsert(entity);
  if (mode == "upsert-merge") return table.UpsertMerge(entity);
  return Status::InvalidArgument("unknown --mode '" + mode +
                                 "' (insert, replace, merge, upsert, upsert-merge)");
}

int Run(PutCommandOptions& o, Context& c) {
  auto opened = OpenTable(c, o.table);
  if (!opened.ok()) return Fail(c.err, opened.status());
  std::string input((std::istreambuf_iterator<char>(c.in)), std::istreambuf_iterator<char>());
  nlohmann::json j = nlohmann::json::parse(input, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded())
    return Fail(c.err,
                Status::InvalidArgument("stdin is not valid JSON (expected one entity object)"));
  std::string json_etag;
  auto entity = EntityFromJson(j, &json_etag);
  if (!entity.ok()) return Fail(c.err, entity.status());
  auto r = PutAs(opened->table, o.mode, *entity,
                 o.if_match.value_or(json_etag.empty() ? "*" : json_etag));
  if (!r.ok()) return Fail(c.err, r.status());
  c.out << EntityToJson(*r).dump() << "\n";
  return kExitOk;
}

}  // namespace

std::unique_ptr<Command> PutCommand() {
  return MakeCommand<PutCommandOptions>({
      .name = "put",
      .help = "put TABLE [--mode insert|replace|merge|upsert|upsert-merge] [--if-match ETAG]: "
              "reads one entity as JSON on stdin and writes it; prints the stored entity with "
              "its new odata.etag. Default mode: insert (fails if it exists). replace/merge are "
              "conditional on --if-match, else on the input's \"odata.etag\", else "
              "unconditional (\"*\").",
      .example = "echo '{\"PartitionKey\":\"c42\",\"RowKey\":\"o1\",\"Total\":9.5}' | blobtable "
                 "put orders",
      .writes = true,
      .define = Define,
      .run = Run,
  });
}

}  // namespace blobtable::cli
