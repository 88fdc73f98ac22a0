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
  nlohmann::ordered_json stripes = nlohmann::ordered_json::array({*lock});
  // A name too long for "/15" has its first stripe only (txn/lock_stripes.cc).
  const int count = lock->size() + 3 > kMaxBlobNameChars ? 1 : 16;
  for (int stripe = 1; stripe < count; ++stripe)
    stripes.push_back(*lock + "/" + std::to_string(stripe));
  j["lock_blobs"] = std::move(stripes);
  c.out << j.dump() << "\n";
  return kExitOk;
}

}  // namespace

std::unique_ptr<Command> LocateCommand() {
  return MakeCommand<LocateCommandOptions>({
      .name = "locate",
      .help = "locate TABLE PK [RK]: prints where the entity and its partition's lock blob "
              "live, as JSON: {\"container\": ..., \"entity_blob\": ..., \"lock_blob\": ..., "
              "\"lock_blobs\": [...]}; lock_blobs are the partition's 16 lock stripes (lock_blob "
              "the first, the others lock_blob + \"/1\" ... \"/15\"), of which a transaction "
              "leases one",
      .example = "blobtable locate orders c42 o1",
      .define = Define,
      .run = Run,
  });
}

}  // namespace blobtable::cli
