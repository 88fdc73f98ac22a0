// SPDX-License-Identifier: Apache-2.0
// `blobtable txn`: a JSON array of operations from stdin, committed
// atomically.
#include <istream>
#include <iterator>
#include <ostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tools/cli.h"
#include "tools/cli/registry.h"
#include "tools/row_source.h"
#include "tools/entity_json.h"
#include "tools/open_store.h"

namespace blobtable::cli {
namespace {

struct TxnCommandOptions {};  // --lock-timeout is a global option

// Adds operation `n`, `op`, to `txn`: {"op", "table", "entity", "if_match"}.
Status AddOperation(const Store& store, Transaction& txn, size_t n, const nlohmann::json& op) {
  auto bad = [&](const std::string& why) {
    return Status::InvalidArgument("operation " + std::to_string(n) + ": " + why);
  };
  if (!op.is_object() || !op.contains("op") || !op["op"].is_string() || !op.contains("table") ||
      !op["table"].is_string() || !op.contains("entity"))
    return bad("needs \"op\", \"table\" and \"entity\"");
  std::string kind = op["op"], json_etag;
  auto table = store.OpenTable(op["table"].get<std::string>());
  if (!table.ok()) return table.status();
  auto entity = EntityFromJson(op["entity"], &json_etag);
  if (!entity.ok()) return entity.status().WithContext("operation " + std::to_string(n));
  std::string if_match = json_etag.empty() ? "*" : json_etag;
  if (op.contains("if_match")) {
    if (!op["if_match"].is_string()) return bad("\"if_match\" must be a string");
    if_match = op["if_match"];
  }
  Status s;
  const Entity& e = *entity;
  if (kind == "insert")
    s = txn.Insert(*table, e);
  else if (kind == "replace")
    s = txn.Replace(*table, e, if_match);
  else if (kind == "merge")
    s = txn.Merge(*table, e, if_match);
  else if (kind == "upsert")
    s = txn.Upsert(*table, e);
  else if (kind == "upsert-merge")
    s = txn.UpsertMerge(*table, e);
  else if (kind == "delete")
    s = txn.Delete(*table, e.partition_key(), e.row_key(), if_match);
  else if (kind == "check")
    s = txn.Check(*table, e.partition_key(), e.row_key(),
                  op.contains("if_match") ? if_match : json_etag);
  else
    return bad("unknown op '" + kind + "'");
  return s.WithContext("operation " + std::to_string(n));
}

// {"committed": [{"table", "PartitionKey", "RowKey", "odata.etag"}, ...]}
nlohmann::ordered_json CommittedToJson(const std::vector<CommittedWrite>& committed) {
  nlohmann::ordered_json result;
  result["committed"] = nlohmann::ordered_json::array();
  for (const CommittedWrite& w : committed) {
    nlohmann::ordered_json j;
    j["table"] = w.table;
    j["PartitionKey"] = w.partition_key;
    j["RowKey"] = w.row_key;
    j["odata.etag"] = w.etag;
    if (!w.applied) j["applied"] = false;  // committed; the next reader applies it
    result["committed"].push_back(j);
  }
  return result;
}

int Run(TxnCommandOptions&, Context& c) {
  auto store = OpenStore(c);
  if (!store.ok()) return Fail(c.err, store.status());
  auto input = ReadInput(c.in, kMaxTxnInputBytes, "stdin (a JSON array of operations)");
  if (!input.ok()) return Fail(c.err, input.status());
  auto parsed = ParseJson(*input, "stdin (a JSON array of operations)");
  if (!parsed.ok()) return Fail(c.err, parsed.status());
  const nlohmann::json& ops = *parsed;
  if (!ops.is_array())
    return Fail(c.err, Status::InvalidArgument("stdin must be a JSON array of operations"));
  auto txn = (*store)->Begin(c.global.txn);
  if (!txn.ok()) return Fail(c.err, txn.status());
  for (size_t n = 0; n < ops.size(); ++n) {
    Status s = AddOperation(**store, *txn, n, ops[n]);
    if (!s.ok()) return Fail(c.err, s);
  }
  auto committed = txn->Commit();
  if (!committed.ok()) return Fail(c.err, committed.status());
  c.out << CommittedToJson(*committed).dump() << "\n";
  return kExitOk;
}

}  // namespace

std::unique_ptr<Command> TxnCommand() {
  return MakeCommand<TxnCommandOptions>({
      .name = "txn",
      .help = "txn [--lock-timeout SECONDS]: reads a JSON array of operations on stdin and "
              "commits them atomically: {\"op\": "
              "\"insert|replace|merge|upsert|upsert-merge|delete|check\", \"table\": T, "
              "\"entity\": {...}, \"if_match\": ETAG} (delete and check take PartitionKey/RowKey "
              "from \"entity\"; check asserts the entity's ETag, \"\" meaning it must not "
              "exist). Prints {\"committed\": [{\"table\", \"PartitionKey\", \"RowKey\", "
              "\"odata.etag\"}, ...]}. Exit 4 on any ETag conflict, 5 on a lock timeout.",
      .example = "echo "
                 "'[{\"op\":\"upsert\",\"table\":\"orders\",\"entity\":{\"PartitionKey\":\"c42\","
                 "\"RowKey\":\"o1\"}}]' | blobtable txn",
      .writes = true,
      .run = Run,
  });
}

}  // namespace blobtable::cli
