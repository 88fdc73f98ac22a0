// SPDX-License-Identifier: Apache-2.0
// `blobtable backup DEST [--export]` and `blobtable restore SRC`.
#include <filesystem>
#include <fstream>
#include <ostream>
#include <sstream>
#include <string>

#include "tools/bulk.h"
#include "tools/cli.h"
#include "tools/cli/registry.h"
#include "tools/open_store.h"

namespace blobtable::cli {
namespace {

namespace fs = std::filesystem;

constexpr char kExportSuffix[] = ".jsonl";

struct BackupCommandOptions {
  std::string dest;
  bool as_export = false;
  bool quiet = false;
};

// Every table into DEST/<table>.jsonl, as `export` writes it.
int ExportEveryTable(Store& store, const BackupCommandOptions& o, Context& c) {
  auto tables = store.ListTables();
  if (!tables.ok()) return Fail(c.err, tables.status());
  for (const std::string& name : *tables) {
    std::ofstream file(o.dest + "/" + name + kExportSuffix);
    auto table = store.OpenTable(name);
    if (!table.ok()) return Fail(c.err, table.status());
    BulkOptions bulk;
    bulk.quiet = o.quiet;
    if (int rc = CmdExport(*table, {}, bulk, file, c.err); rc != kExitOk) return rc;
    file.close();
    if (!file)
      return Fail(c.err, Status::IOError("writing " + o.dest + "/" + name + kExportSuffix));
  }
  if (!o.quiet)
    c.err << "blobtable: backup: " << tables->size() << " tables exported to " << o.dest
          << " (restore them with: blobtable restore " << o.dest << ")\n";
  return kExitOk;
}

int RunBackup(BackupCommandOptions& o, Context& c) {
  auto store = OpenStore(c);
  if (!store.ok()) return Fail(c.err, store.status());
  std::error_code ec;
  if (fs::exists(o.dest, ec) && !fs::is_empty(o.dest, ec))
    return Fail(c.err, Status::InvalidArgument("backup destination " + o.dest +
                                               " is not empty: give a new directory or an "
                                               "empty one"));
  const bool copy_files = !o.as_export && !IsConnectionString(c.global.location);
  if (copy_files) {
    Status s = (*store)->Backup(o.dest);
    if (!s.ok()) return Fail(c.err, s);
    if (!o.quiet)
      c.err << "blobtable: backup: a consistent copy of " << c.global.location << " is in "
            << o.dest << " (use it with --store " << o.dest << ")\n";
    return kExitOk;
  }
  fs::create_directories(o.dest, ec);
  if (ec) return Fail(c.err, Status::IOError("cannot create " + o.dest + ": " + ec.message()));
  return ExportEveryTable(**store, o, c);
}

struct RestoreCommandOptions {
  std::string source;
  BulkOptions bulk;
};

int RunRestore(RestoreCommandOptions& o, Context& c) {
  std::error_code ec;
  if (fs::exists(o.source + "/data.mdb", ec))
    return Fail(c.err,
                Status::InvalidArgument(o.source +
                                        " is a copy of an embedded store: use it as the store "
                                        "(--store " +
                                        o.source +
                                        "), or copy the directory into place; "
                                        "restore loads an export (backup --export)"));
  if (!fs::is_directory(o.source, ec))
    return Fail(c.err, Status::NotFound("no export directory at " + o.source));
  auto store = OpenStore(c);
  if (!store.ok()) return Fail(c.err, store.status());
  // Every table is loaded, whatever another's rows did; the first failure
  // is the exit code.
  int tables = 0, first_failure = kExitOk;
  for (const auto& entry : fs::directory_iterator(o.source, ec)) {
    const fs::path path = entry.path();
    if (path.extension() != kExportSuffix) continue;
    // A file it cannot load is reported and the others still loaded.
    std::error_code file_ec;
    Status loadable = fs::is_regular_file(path, file_ec)
                          ? Status::OK()
                          : Status::InvalidArgument(path.string() + " is not a file");
    auto table = (*store)->OpenTable(path.stem().string());
    if (loadable.ok() && !table.ok()) loadable = table.status().WithContext(path.string());
    std::ifstream in;
    if (loadable.ok()) in.open(path);
    if (loadable.ok() && !in) loadable = Status::IOError("cannot read " + path.string());
    if (!loadable.ok()) {
      const int rc = Fail(c.err, loadable);
      if (first_failure == kExitOk) first_failure = rc;
      continue;
    }
    BulkOptions bulk = o.bulk;
    bulk.input_name = path.filename().string();
    const int rc = CmdImport(store->get(), *table, bulk, in, c.err);
    if (rc == 130) return rc;  // interrupted
    if (first_failure == kExitOk) first_failure = rc;
    ++tables;
  }
  if (ec) return Fail(c.err, Status::IOError("reading " + o.source + ": " + ec.message()));
  if (!o.bulk.quiet)
    c.err << "blobtable: restore: " << tables << " tables loaded"
          << (first_failure != kExitOk ? " (some failed: see above)" : "") << "\n";
  return first_failure;
}

}  // namespace

std::unique_ptr<Command> BackupCommand() {
  return MakeCommand<BackupCommandOptions>({
      .name = "backup",
      .help = "backup DEST [--export] [--quiet]: the embedded store: a consistent copy of its "
              "files into DEST (a new or empty directory) made while writers go on, as "
              "mdb_copy makes it; open it with --store DEST. --export (and any Azure store): "
              "every table as DEST/<table>.jsonl, which `restore` loads into any store.",
      .example = "blobtable backup /backups/orders-$(date +%F)",
      .define =
          [](CLI::App& cmd, BackupCommandOptions& o) {
            cmd.add_option("DEST", o.dest)->required();
            cmd.add_flag("--export", o.as_export, "every table as JSON lines, for any store");
            cmd.add_flag("--quiet", o.quiet, "no progress, no summary");
          },
      .run = RunBackup,
  });
}

std::unique_ptr<Command> RestoreCommand() {
  return MakeCommand<RestoreCommandOptions>({
      .name = "restore",
      .help = "restore SRC [--mode upsert|insert] [--quiet]: loads every SRC/<table>.jsonl "
              "that `backup --export` wrote into the store, as `import` loads a file (upsert by "
              "default: a restore that stopped is run again).",
      .example = "blobtable --store ./new restore /backups/dump",
      .writes = true,
      .define =
          [](CLI::App& cmd, RestoreCommandOptions& o) {
            cmd.add_option("SRC", o.source)->required();
            cmd.add_option("--mode", o.bulk.mode, "upsert (default) or insert")
                ->check(CLI::IsMember({"upsert", "insert"}));
            cmd.add_flag("--quiet", o.bulk.quiet, "no progress, no summary");
          },
      .run = RunRestore,
  });
}

}  // namespace blobtable::cli
