// SPDX-License-Identifier: Apache-2.0
// `blobtable counter add NAME [DELTA] [--shards N]` and `counter get NAME`.
#ifndef BLOBTABLE_TOOLS_COUNTER_COMMAND_H_
#define BLOBTABLE_TOOLS_COUNTER_COMMAND_H_

#include <cstdint>
#include <iosfwd>
#include <string>

#include "blobtable/store.h"

namespace blobtable::cli {

// "add": adds `delta` and prints the counter's total afterwards (with one
// shard what the add returned; with several, one more listing). "get":
// prints the total. The exit code.
int CmdCounter(const Store& store, const std::string& action, const std::string& name,
               int64_t delta, int shards, std::ostream& out, std::ostream& err);

}  // namespace blobtable::cli

#endif  // BLOBTABLE_TOOLS_COUNTER_COMMAND_H_
