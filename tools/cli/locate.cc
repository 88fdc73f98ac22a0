// SPDX-License-Identifier: Apache-2.0
// `blobtable locate TABLE PK [RK]`: where an entity and its partition's lock
// blob live.
#include <optional>
#include <ostream>
#include <string>

#include <nlohmann/json.hpp>

#include "tools/cli.h"
#include "tools/cli/registry.h"
#include "tools/open_store.h"

namespace blobtable::cli {
namespace {

struct LocateCommandOptions {
  std::string table, pk;
  std::optional<std::string> rk;
};

void Define(CLI::App& locate, LocateCommandOptions& o) {
  locate.add_option("TABLE", o.table)->required();
  locate.add_option("PK", o.pk)->required();
  locate.add_option("RK", o.rk);
}

int Run(LocateCommandOptions& o, Context& c) {
  auto opened = OpenTable(c, o.table);
  if (!opened.ok()) return Fail(c.err, opened.status());
  const Store& store = *opened->store;
  const Table& table = opened->table;
  nlohmann::ordered_json j;
  j["store"] = store.blob_store().Location();
  j["container"] = store.blob_store().container();
  if (o.rk) {
    auto name = table.EntityBlobName(o.pk, *o.rk);
    if (!name.ok()) return Fail(c.err, name.status());
    j["entity_blob"] = *name;
  }
  auto lock = table.LockBlobName(o.pk);
  if (!lock.ok()) return Fail(c.err, lock.status());
  j["lock_blob"] = *lock;
  c.out << j.dump() << "\n";
  return kExitOk;
}

}  // namespace

std::unique_ptr<Command> LocateCommand() {
  return MakeCommand<LocateCommandOptions>({
      .name = "locate",
      .help = "locate TABLE PK [RK]: prints where the entity and its partition's lock blob "
              "live, as JSON: {\"container\": ..., \"entity_blob\": ..., \"lock_blob\": ...}; "
              "lock_blob is the first of the partition's 16 lock stripes (the others: lock_blob "
              "+ \"/1\" ... \"/15\"), of which a transaction leases one",
      .example = "blobtable locate orders c42 o1",
      .define = Define,
      .run = Run,
  });
}

}  // namespace blobtable::cli
