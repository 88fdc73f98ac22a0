// SPDX-License-Identifier: Apache-2.0
// `blobtable queue put|take|done|abandon|list`: a WorkQueue from the shell.
#ifndef BLOBTABLE_TOOLS_QUEUE_COMMAND_H_
#define BLOBTABLE_TOOLS_QUEUE_COMMAND_H_

#include <iosfwd>
#include <string>

#include "blobtable/queue.h"
#include "blobtable/store.h"

namespace blobtable::cli {

struct QueueCommand {
  std::string action;  // put, take, done, abandon, list
  std::string name;
  std::string body;  // put: the body (else stdin)
  bool body_given = false;
  std::string id, lease;  // done, abandon
  bool dead = false;      // list: the dead letters
  QueueOptions options;
};

// put: prints the new item's id. take: prints {"id", "lease", "dequeue_count",
// "body"} (exit 3 if no item is visible). done/abandon: nothing (done:
// exit 1 LeaseLost if the lease ran out, 3 if the item is gone). list: one
// {"id", "dequeue_count", "taken"} a line. The exit code.
int CmdQueue(const Store& store, const QueueCommand& c, std::istream& in, std::ostream& out,
             std::ostream& err);

}  // namespace blobtable::cli

#endif  // BLOBTABLE_TOOLS_QUEUE_COMMAND_H_
