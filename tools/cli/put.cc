// SPDX-License-Identifier: Apache-2.0
// `blobtable put TABLE [--mode M] [--if-match ETAG] [PK RK [NAME[:TYPE]=VALUE]...]`:
// one entity from stdin, or from the command line.
#include <istream>
#include <iterator>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tools/cli.h"
#include "tools/cli/registry.h"
#include "tools/row_source.h"
#include "tools/entity_json.h"
#include "tools/open_store.h"
#include "util/macros.h"

namespace blobtable::cli {
namespace {

struct PutCommandOptions {
  std::string table;
  std::string mode = "insert";
  std::optional<std::string> if_match;
  std::vector<std::string> entity;  // PK RK NAME[:TYPE]=VALUE...; empty: stdin
};

void Define(CLI::App& put, PutCommandOptions& o) {
  put.add_option("TABLE", o.table)->required();
  put.add_option(
      "ENTITY", o.entity,
      "PK RK [NAME=VALUE | NAME:TYPE=VALUE]...: the entity on the command line "
      "instead of JSON on stdin. A VALUE is a String unless TYPE says otherwise: "
      "Edm.Int32, Edm.Int64, Edm.Double, Edm.Boolean, Edm.DateTime, Edm.Guid, "
      "Edm.Binary (base64), Edm.String, or the same without \"Edm.\" (and bool), any case");
  put.add_option("--mode", o.mode)
      ->check(CLI::IsMember({"insert", "replace", "merge", "upsert", "upsert-merge"}));
  put.add_option("--if-match", o.if_match, "ETAG");
}

// The entity JSON that `PK RK NAME[:TYPE]=VALUE...` stands for (checked as
// JSON input is, by EntityFromJson).
Result<nlohmann::json> EntityJsonFromArgs(const std::vector<std::string>& args) {
  if (args.size() < 2)
    return Status::InvalidArgument(
        "put: give PK and RK (then NAME=VALUE...) after the table, or the entity as JSON on "
        "stdin");
  nlohmann::json j = {{"PartitionKey", args[0]}, {"RowKey", args[1]}};
  for (size_t i = 2; i < args.size(); ++i) BT_RETURN_IF_ERROR(AddPropertyArg(j, args[i], "put"));
  return j;
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
  Result<nlohmann::json> j = Status::Internal("unset");
  if (!o.entity.empty()) {
    j = EntityJsonFromArgs(o.entity);
  } else {
    auto input = ReadInput(c.in, kMaxRowInputBytes, "stdin (one entity object)");
    j = input.ok() ? ParseJson(*input, "stdin (one entity object)")
                   : Result<nlohmann::json>(input.status());
  }
  if (!j.ok()) return Fail(c.err, j.status());
  std::string json_etag;
  auto entity = EntityFromJson(*j, &json_etag);
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
      .help = "put TABLE [--mode insert|replace|merge|upsert|upsert-merge] [--if-match ETAG] "
              "[PK RK NAME[:TYPE]=VALUE...]: reads one entity as JSON on stdin (or takes it from "
              "the command line) and writes it; prints the stored entity with "
              "its new odata.etag. Default mode: insert (fails if it exists). replace/merge are "
              "conditional on --if-match, else on the input's \"odata.etag\", else "
              "unconditional (\"*\").",
      .example = "blobtable put orders c42 o1 status=open Total:double=9.5 Items:int32=3\n  "
                 "echo '{\"PartitionKey\":\"c42\",\"RowKey\":\"o1\",\"Total\":9.5}' | blobtable "
                 "put orders",
      .writes = true,
      .define = Define,
      .run = Run,
  });
}

}  // namespace blobtable::cli
