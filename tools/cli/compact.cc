// SPDX-License-Identifier: Apache-2.0
// `blobtable compact`: the embedded store's file rewritten without its
// free pages.
#include <ostream>

#include "tools/cli.h"
#include "tools/cli/registry.h"

namespace blobtable::cli {
namespace {

struct CompactCommandOptions {
  bool quiet = false;
};

int Run(CompactCommandOptions& o, Context& c) {
  if (IsConnectionString(c.global.location))
    return Fail(c.err, Status::InvalidArgument(
                           "compact is for the embedded store: Azure Storage keeps no free "
                           "pages to give back"));
  auto done = Store::Compact(c.global.location);
  if (!done.ok()) return Fail(c.err, done.status());
  if (!o.quiet)
    c.err << "blobtable: compact: " << done->bytes_before << " bytes -> " << done->bytes_after
          << " bytes\n";
  return kExitOk;
}

}  // namespace

std::unique_ptr<Command> CompactCommand() {
  return MakeCommand<CompactCommandOptions>({
      .name = "compact",
      .help = "compact [--quiet]: rewrites the embedded store's file without its free pages "
              "(what deletes and rewrites left for reuse) and puts it in place, so the file "
              "shrinks. Only while no process has the store open: exit 5 naming the process "
              "that has; processes that open it meanwhile wait until it is done.",
      .example = "blobtable --store ./data compact",
      .define = [](CLI::App& cmd,
                   CompactCommandOptions& o) { cmd.add_flag("--quiet", o.quiet, "no summary"); },
      .run = Run,
  });
}

}  // namespace blobtable::cli
