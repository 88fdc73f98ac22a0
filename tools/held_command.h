// Commands run while a lease is held: `blobtable lock NAME -- COMMAND` (a
// Lock, like flock(1) across machines) and `blobtable leader NAME --
// COMMAND` (only while leader).
#ifndef BLOBTABLE_TOOLS_HELD_COMMAND_H_
#define BLOBTABLE_TOOLS_HELD_COMMAND_H_

#include <chrono>
#include <iosfwd>
#include <string>
#include <vector>

#include "blobtable/leader.h"
#include "blobtable/lock.h"
#include "blobtable/store.h"

namespace blobtable::cli {

// Acquires `name` (exit 5 if it stays held past options.timeout), runs
// `command` with BLOBTABLE_LOCK_TOKEN set to the fencing token, renewing
// the lease meanwhile, then releases it. If the lock is lost while the
// command runs, the command gets SIGTERM, and SIGKILL 10 s later. SIGINT,
// SIGTERM and SIGHUP to this process are passed on to the command. The
// exit code is the command's (128 + N if a signal N ended it; 127 if it
// could not be started).
int CmdLock(const Store& store, const std::string& name, const LockOptions& options,
            const std::vector<std::string>& command, std::ostream& err);

// Campaigns for `name` (waiting up to `timeout`, negative: for ever; exit 5
// if it does not become leader), then runs `command` as CmdLock does, with
// BLOBTABLE_LEADER_TERM set to its term, stopping it if leadership is
// lost; resigns when it ends.
int CmdLeader(const Store& store, const std::string& name, const LeaderOptions& options,
              std::chrono::milliseconds timeout, const std::vector<std::string>& command,
              std::ostream& err);

}  // namespace blobtable::cli

#endif  // BLOBTABLE_TOOLS_HELD_COMMAND_H_
