// SPDX-License-Identifier: Apache-2.0
// Commands run while a lease is held: `blobtable lock NAME -- COMMAND` (a
// Lock, like flock(1) across machines), `blobtable leader NAME -- COMMAND`
// (only while leader) and `blobtable queue run NAME -- COMMAND` (on a work
// item, under its lease).
#ifndef BLOBTABLE_TOOLS_HELD_COMMAND_H_
#define BLOBTABLE_TOOLS_HELD_COMMAND_H_

#include <chrono>
#include <iosfwd>
#include <string>
#include <vector>

#include "blobtable/leader.h"
#include "blobtable/lock.h"
#include "blobtable/queue.h"
#include "blobtable/store.h"
#include "tools/cli.h"

namespace CLI {
class App;
}  // namespace CLI

namespace blobtable::cli {

// What `lock` and `leader` share on their command lines:
// NAME [--timeout SECONDS] [--lease SECONDS] [--conflict-exit-code N] -- COMMAND [ARGS...]
struct HeldCommandOptions {
  std::string name;
  std::vector<std::string> command;
  int conflict_exit_code = kExitLockTimeout;  // could not be had in time
};

// Declares them on `command` (lock's or leader's): --timeout into `*timeout`
// (described by `timeout_help`), --lease into `*lease_seconds`.
void DefineHeldCommand(CLI::App& command, HeldCommandOptions& options,
                       std::chrono::milliseconds* timeout, int* lease_seconds,
                       const char* timeout_help);

// Acquires `name` (if it stays held past options.timeout: exit
// `conflict_exit_code`, 5 by default), runs `command` with
// BLOBTABLE_LOCK_TOKEN set to the fencing token, renewing the lease
// meanwhile, then releases it. The command runs in a process group of its
// own and dies with this process (PR_SET_PDEATHSIG: SIGKILL, even if this
// process is SIGKILLed). If the lock is lost while it runs, its group gets
// SIGTERM when held() turns false and SIGKILL half a second before the
// lease could run out on storage (by this process's monotonic clock).
// When the command ends, what it left in its group is killed before the
// lease is released. SIGINT, SIGTERM and SIGHUP to this process are passed
// on to the command's group. The exit code is the command's (128 + N if a
// signal N ended it; 127 if it was not found, 126 if it could not be run,
// with a message).
int CmdLock(const Store& store, const std::string& name, const LockOptions& options,
            const std::vector<std::string>& command, int conflict_exit_code, std::ostream& err);

// Campaigns for `name` (waiting up to `timeout`, negative: for ever; exit
// `conflict_exit_code` if it does not become leader), then runs `command`
// as CmdLock does, with BLOBTABLE_LEADER_TERM set to its term, stopping it
// if leadership is lost (before the next leader can come in: a leader that
// steps down does not release its lease); resigns when it ends.
int CmdLeader(const Store& store, const std::string& name, const LeaderOptions& options,
              std::chrono::milliseconds timeout, const std::vector<std::string>& command,
              int conflict_exit_code, std::ostream& err);

// Runs `command` on a taken `item` of `queue` as CmdLock runs it, with the
// item's body (byte for byte) on its stdin and BLOBTABLE_QUEUE_ITEM (its
// id) and BLOBTABLE_QUEUE_DEQUEUE_COUNT in its environment, extending the
// item's lease (`visibility_seconds`, the queue's) every third of it while
// the command runs, from a thread of its own: an extension that gets no
// answer never holds up the stopping of the command, and gives up by the
// time the lease may be counted on. Exit 0: the item is completed (exit 1
// LeaseLost if it could not be, exit 7 if whether it was is not known). Any other exit:
// the item is given back at once (Abandon), and the exit code is the
// command's. If the lease is lost while the command runs, it is stopped as
// CmdLock stops it, and the item will be delivered again.
int CmdQueueRun(const Store& store, const WorkQueue& queue, QueueItem item, int visibility_seconds,
                const std::vector<std::string>& command, std::ostream& err);

}  // namespace blobtable::cli

#endif  // BLOBTABLE_TOOLS_HELD_COMMAND_H_
