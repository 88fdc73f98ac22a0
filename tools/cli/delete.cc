// SPDX-License-Identifier: Apache-2.0
// `blobtable delete TABLE PK RK [--if-match ETAG] [--ignore-missing]`, and
// `blobtable delete TABLE [selection | --all] [--dry-run]`: many at once.
#include <optional>
#include <ostream>
#include <string>

#include "tools/bulk.h"
#include "tools/cli.h"
#include "tools/cli/registry.h"
#include "tools/open_store.h"

namespace blobtable::cli {
namespace {

struct DeleteCommandOptions {
  std::string table;
  std::optional<std::string> pk, rk;
  std::optional<std::string> if_match;
  bool ignore_missing = false;
  QueryOptions selection;  // bulk
  bool all = false, dry_run = false, quiet = false;
};

void Define(CLI::App& del, DeleteCommandOptions& o) {
  del.add_option("TABLE", o.table)->required();
  del.add_option("PK", o.pk, "the one entity's PartitionKey");
  del.add_option("RK", o.rk, "and RowKey");
  del.add_option("--if-match", o.if_match, "ETAG");
  del.add_flag("--ignore-missing", o.ignore_missing,
               "an entity (or store) that does not exist is not an error (exit 0)");
  DefineSelection(del, o.selection);
  del.add_flag("--all", o.all, "every entity of the table (`drop` also removes its locks)");
  del.add_flag("--dry-run", o.dry_run, "many at once: count what would go, delete nothing");
  del.add_flag("--quiet", o.quiet, "many at once: no progress, no summary");
}

int DeleteOne(DeleteCommandOptions& o, Context& c) {
  auto opened = OpenTable(c, o.table);
  if (!opened.ok()) {
    if (o.ignore_missing && opened.status().IsNotFound()) return kExitOk;  // no store
    return Fail(c.err, opened.status());
  }
  Status s = opened->table.Delete(*o.pk, *o.rk, o.if_match.value_or("*"));
  if (s.IsNotFound() && o.ignore_missing) return kExitOk;
  if (!s.ok()) return Fail(c.err, s);
  return kExitOk;
}

int DeleteMany(DeleteCommandOptions& o, Context& c) {
  auto opened = OpenTable(c, o.table);
  if (!opened.ok()) return Fail(c.err, opened.status());
  DeleteWhereOptions how;
  how.dry_run = o.dry_run;
  const bool progress = !o.quiet && ShowsProgress(c.err);
  if (progress)
    how.progress = [&](const DeleteWhereReport& r) {
      c.err << "\rblobtable: delete: " << r.matched << " matched, " << r.deleted << " deleted"
            << std::flush;
    };
  auto done = opened->table.DeleteWhere(o.selection, how);
  if (progress) c.err << "\n";
  if (!done.ok()) return Fail(c.err, done.status());
  if (done->matched == 0)
    if (Status exists = NothingFound(c, *opened, &o.selection); !exists.ok())
      return Fail(c.err, exists);
  if (!o.quiet) {
    c.err << "blobtable: delete: " << done->matched << " matched, "
          << (o.dry_run ? "none deleted (dry run)" : std::to_string(done->deleted) + " deleted");
    if (done->changed > 0)
      c.err << ", " << done->changed << " changed by another writer since read and left";
    c.err << "\n";
  }
  return done->changed > 0 ? kExitConflict : kExitOk;
}

int Run(DeleteCommandOptions& o, Context& c) {
  const bool many = o.all || SelectsRows(o.selection);
  if (o.pk.has_value() != o.rk.has_value() || (o.pk && many))
    throw UsageError{
        "delete takes TABLE PK RK (one entity), or TABLE with --pk, --rk-from, "
        "--rk-to, --rk-prefix, --filter or --all (many)"};
  if (o.pk) {
    if (o.dry_run) throw UsageError{"--dry-run is for deleting many (--pk, --filter, --all)"};
    return DeleteOne(o, c);
  }
  if (!many)
    throw UsageError{
        "delete TABLE needs PK RK, or a selection (--pk, --filter, ...), or --all "
        "for every entity"};
  if (o.if_match || o.ignore_missing)
    throw UsageError{
        "--if-match and --ignore-missing are for one entity (TABLE PK RK); many "
        "are each deleted at the ETag they were read with"};
  return DeleteMany(o, c);
}

}  // namespace

// Not a write that makes a store: there is nothing to delete in a new one.
std::unique_ptr<Command> DeleteCommand() {
  return MakeCommand<DeleteCommandOptions>({
      .name = "delete",
      .help = "delete TABLE PK RK [--if-match ETAG] [--ignore-missing]: deletes the entity "
              "(unconditionally unless --if-match is given); exit 3 if it does not exist, "
              "unless --ignore-missing.\n"
              "delete TABLE (--pk PK | --rk-from RK | --rk-to RK | --rk-prefix P | --filter EXPR "
              "| --all) [--dry-run] [--quiet]: deletes every matching entity, in batches (one "
              "write each on the embedded store), each at the ETag it was read with: one a "
              "writer changed meanwhile is left (exit 4). Progress on a terminal, then a "
              "summary.",
      .example = "blobtable delete orders --filter \"Done eq true\" --dry-run",
      .define = Define,
      .run = Run,
  });
}

}  // namespace blobtable::cli
