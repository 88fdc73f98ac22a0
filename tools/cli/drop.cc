// SPDX-License-Identifier: Apache-2.0
// `blobtable drop TABLE [--force]`: every entity and lock blob of a table.
#include <ostream>
#include <string>

#include "tools/bulk.h"
#include "tools/cli.h"
#include "tools/cli/registry.h"
#include "tools/open_store.h"

namespace blobtable::cli {
namespace {

struct DropCommandOptions {
  std::string table;
  bool force = false;
  bool quiet = false;
};

void Define(CLI::App& drop, DropCommandOptions& o) {
  drop.add_option("TABLE", o.table)->required();
  drop.add_flag("--force", o.force,
                "drop it even while a transaction holds some of it (that transaction's writes "
                "to the table are lost)");
  drop.add_flag("--quiet", o.quiet, "no progress, no summary");
}

int Run(DropCommandOptions& o, Context& c) {
  auto opened = OpenTable(c, o.table);
  if (!opened.ok()) return Fail(c.err, opened.status());
  DropTableOptions how;
  how.force = o.force;
  const bool progress = !o.quiet && ShowsProgress(c.err);
  if (progress)
    how.progress = [&](const DropTableReport& r) {
      c.err << "\rblobtable: drop: " << r.entities << " entities deleted" << std::flush;
    };
  auto dropped = opened->store->DropTable(opened->table.name(), how);
  if (progress) c.err << "\n";
  if (!dropped.ok()) return Fail(c.err, dropped.status());
  if (dropped->entities == 0 && dropped->locks == 0)
    if (Status exists = NothingFound(c, *opened); !exists.ok()) return Fail(c.err, exists);
  if (!o.quiet)
    c.err << "blobtable: dropped table " << opened->table.name() << ": " << dropped->entities
          << " entities, " << dropped->locks << " lock blobs"
          << (dropped->changed > 0 ? ", " + std::to_string(dropped->changed) +
                                         " changed by another writer during the drop and left: "
                                         "run it again"
                                   : std::string())
          << "\n";
  return dropped->changed > 0 ? kExitConflict : kExitOk;
}

}  // namespace

// Not a write that makes a store: there is nothing to drop in a new one.
std::unique_ptr<Command> DropCommand() {
  return MakeCommand<DropCommandOptions>({
      .name = "drop",
      .help = "drop TABLE [--force] [--quiet]: deletes every entity of the table and its "
              "partition locks (their pages are reused; the file does not shrink). Refused (exit "
              "5) while "
              "a transaction holds one of its entities or locks, unless --force. Not atomic: "
              "run it again to resume one that stopped; exit 4 if writers changed rows under it.",
      .example = "blobtable drop scratch",
      .define = Define,
      .run = Run,
  });
}

}  // namespace blobtable::cli
