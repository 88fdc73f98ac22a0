// SPDX-License-Identifier: Apache-2.0
#include "tools/cli/registry.h"

namespace blobtable::cli {

std::vector<std::unique_ptr<Command>> Commands() {
  std::vector<std::unique_ptr<Command>> all;
  for (auto make :
       {PutCommand,     GetCommand,     DeleteCommand, QueryCommand,   CountCommand,
        TablesCommand,  IndexCommand,   DropCommand,   StatsCommand,   HealthCommand,
        ExportCommand,  ImportCommand,  BackupCommand, RestoreCommand, CompactCommand,
        LocateCommand,  TxnCommand,     LockCommand,   LeaderCommand,  QueueCommand,
        CounterCommand, RecoverCommand, CacheCommand,  CheckCommand,   CompletionCommand})
    all.push_back(make());
  return all;
}

}  // namespace blobtable::cli
