// SPDX-License-Identifier: Apache-2.0
// `blobtable lock NAME [--timeout S] [--lease S] -- COMMAND [ARGS...]`: runs
// the command while holding a Lock (tools/held_command.h).
#include "tools/cli.h"
#include "tools/cli/registry.h"
#include "tools/held_command.h"
#include "tools/open_store.h"

namespace blobtable::cli {
namespace {

struct LockCommandOptions {
  HeldCommandOptions held;
  LockOptions lock;
};

void Define(CLI::App& lock, LockCommandOptions& o) {
  DefineHeldCommand(lock, o.held, &o.lock.timeout, &o.lock.lease_seconds,
                    "SECONDS to wait while another client holds it (0: one try)");
}

int Run(LockCommandOptions& o, Context& c) {
  auto store = OpenStore(c);
  if (!store.ok()) return Fail(c.err, store.status());
  return CmdLock(**store, o.held.name, o.lock, o.held.command, o.held.conflict_exit_code, c.err);
}

}  // namespace

std::unique_ptr<Command> LockCommand() {
  return MakeCommand<LockCommandOptions>({
      .name = "lock",
      .help = "lock NAME [--timeout SECONDS] [--lease SECONDS] -- COMMAND [ARGS...]: runs the "
              "command while holding the lock NAME (shared by every client of the store), like "
              "flock(1). Waits up to --timeout (default 30) for it, else exit 5 (or "
              "--conflict-exit-code). The lease (default 30 s, 15..60) is renewed while the "
              "command runs; the command dies with this process, and if the lock is lost it "
              "gets SIGTERM, then SIGKILL before the lease can run out on storage. The command "
              "sees the fencing token in $BLOBTABLE_LOCK_TOKEN. Exit code: the command's.",
      .example = "blobtable lock nightly-report -- ./report.sh",
      .writes = true,
      .define = Define,
      .run = Run,
  });
}

}  // namespace blobtable::cli
