// SPDX-License-Identifier: Apache-2.0
// Every command of the blobtable CLI, one file each in tools/cli/.
#ifndef BLOBTABLE_TOOLS_CLI_REGISTRY_H_
#define BLOBTABLE_TOOLS_CLI_REGISTRY_H_

#include <memory>
#include <vector>

#include "tools/cli/command.h"

namespace blobtable::cli {

// Each command's file makes it.
std::unique_ptr<Command> PutCommand();         // put.cc
std::unique_ptr<Command> GetCommand();         // get.cc
std::unique_ptr<Command> DeleteCommand();      // delete.cc
std::unique_ptr<Command> QueryCommand();       // query.cc
std::unique_ptr<Command> ExportCommand();      // export.cc
std::unique_ptr<Command> ImportCommand();      // import.cc
std::unique_ptr<Command> LocateCommand();      // locate.cc
std::unique_ptr<Command> TxnCommand();         // txn.cc
std::unique_ptr<Command> LockCommand();        // lock.cc
std::unique_ptr<Command> LeaderCommand();      // leader.cc
std::unique_ptr<Command> QueueCommand();       // queue.cc
std::unique_ptr<Command> CounterCommand();     // counter.cc
std::unique_ptr<Command> RecoverCommand();     // recover.cc
std::unique_ptr<Command> CacheCommand();       // cache.cc
std::unique_ptr<Command> CheckCommand();       // check.cc
std::unique_ptr<Command> TablesCommand();      // tables.cc
std::unique_ptr<Command> IndexCommand();       // index.cc
std::unique_ptr<Command> CountCommand();       // count.cc
std::unique_ptr<Command> DropCommand();        // drop.cc
std::unique_ptr<Command> StatsCommand();       // stats.cc
std::unique_ptr<Command> HealthCommand();      // health.cc
std::unique_ptr<Command> BackupCommand();      // backup.cc
std::unique_ptr<Command> RestoreCommand();     // backup.cc
std::unique_ptr<Command> CompactCommand();     // compact.cc
std::unique_ptr<Command> CompletionCommand();  // completion.cc

// Every command, newly made, in the order `blobtable --help` lists them.
std::vector<std::unique_ptr<Command>> Commands();

}  // namespace blobtable::cli

#endif  // BLOBTABLE_TOOLS_CLI_REGISTRY_H_
