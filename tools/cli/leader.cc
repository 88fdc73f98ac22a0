// SPDX-License-Identifier: Apache-2.0
// `blobtable leader NAME [--timeout S] [--lease S] -- COMMAND [ARGS...]`: runs
// the command only while leader (tools/held_command.h).
#include <chrono>

#include "tools/cli.h"
#include "tools/cli/registry.h"
#include "tools/held_command.h"
#include "tools/open_store.h"

namespace blobtable::cli {
namespace {

struct LeaderCommandOptions {
  HeldCommandOptions held;
  LeaderOptions leader;
  std::chrono::milliseconds timeout{-1};  // for ever
};

void Define(CLI::App& leader, LeaderCommandOptions& o) {
  DefineHeldCommand(leader, o.held, &o.timeout, &o.leader.lease_seconds,
                    "SECONDS to wait to become leader (default: for ever)");
}

int Run(LeaderCommandOptions& o, Context& c) {
  auto store = OpenStore(c);
  if (!store.ok()) return Fail(c.err, store.status());
  return CmdLeader(**store, o.held.name, o.leader, o.timeout, o.held.command,
                   o.held.conflict_exit_code, c.err);
}

}  // namespace

std::unique_ptr<Command> LeaderCommand() {
  return MakeCommand<LeaderCommandOptions>({
      .name = "leader",
      .help = "leader NAME [--timeout SECONDS] [--lease SECONDS] -- COMMAND [ARGS...]: "
              "campaigns to lead NAME and runs the command only while leader (its term in "
              "$BLOBTABLE_LEADER_TERM); stops it (SIGTERM, then SIGKILL before the lease can "
              "run out on storage) if leadership is lost; resigns when it ends. Waits for ever "
              "unless --timeout (then exit 5, or --conflict-exit-code). Exit code: the "
              "command's.",
      .example = "blobtable leader scheduler --lease 30 -- ./scheduler",
      .writes = true,
      .define = Define,
      .run = Run,
  });
}

}  // namespace blobtable::cli
