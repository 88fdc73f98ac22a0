// SPDX-License-Identifier: Apache-2.0
// The benchmark suite's peers written in JavaScript (the official SDKs from
// npm): each a script run by `node` in a process of its own, printing its
// measurement as one JSON line.
#ifndef BLOBTABLE_BENCH_NODE_PEER_H_
#define BLOBTABLE_BENCH_NODE_PEER_H_

#include <string>
#include <vector>

#include "bench/harness.h"

namespace bench {

// Runs `node SCRIPT ARGS...` and reads the line it prints: {"ops",
// "seconds", "cpu_seconds", "latencies_us": [...], and "requests" if it
// counted them} as a Sample, or "{}" (a script that only prepared
// something) as an empty one. Internal if it fails or prints anything else.
blobtable::Result<Sample> RunNodePeer(const std::string& script,
                                      const std::vector<std::string>& args);

}  // namespace bench

#endif  // BLOBTABLE_BENCH_NODE_PEER_H_
