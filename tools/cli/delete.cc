// SPDX-License-Identifier: Apache-2.0
// `blobtable delete TABLE PK RK [--if-match ETAG] [--ignore-missing]`.
#include <optional>
#include <string>

#include "tools/cli.h"
#include "tools/cli/registry.h"
#include "tools/open_store.h"

namespace blobtable::cli {
namespace {

struct DeleteCommandOptions {
  std::string table, pk, rk;
  std::optional<std::string> if_match;
  bool ignore_missing = false;
};

void Define(CLI::App& del, DeleteCommandOptions& o) {
  del.add_option("TABLE", o.table)->required();
  del.add_option("PK", o.pk)->required();
  del.add_option("RK", o.rk)->required();
  del.add_option("--if-match", o.if_match, "ETAG");
  del.add_flag("--ignore-missing", o.ignore_missing,
               "an entity (or store) that does not exist is not an error (exit 0)");
}

int Run(DeleteCommandOptions& o, Context& c) {
  auto opened = OpenTable(c, o.table);
  if (!opened.ok()) {
    if (o.ignore_missing && opened.status().IsNotFound()) return kExitOk;  // no store
    return Fail(c.err, opened.status());
  }
  Status s = opened->table.Delete(o.pk, o.rk, o.if_match.value_or("*"));
  if (s.IsNotFound() && o.ignore_missing) return kExitOk;
  if (!s.ok()) return Fail(c.err, s);
  return kExitOk;
}

}  // namespace

// Not a write that makes a store: there is nothing to delete in a new one.
std::unique_ptr<Command> DeleteCommand() {
  return MakeCommand<DeleteCommandOptions>({
      .name = "delete",
      .help = "delete TABLE PK RK [--if-match ETAG] [--ignore-missing]: deletes the entity "
              "(unconditionally unless --if-match is given); exit 3 if it does not exist, "
              "unless --ignore-missing.",
      .define = Define,
      .run = Run,
  });
}

}  // namespace blobtable::cli
