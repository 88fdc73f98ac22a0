// SPDX-License-Identifier: Apache-2.0
// The checkers of the coordination workloads (queue, lock), apart from the
// workloads so that tests can feed them histories of their own.
//
// queue: operations "enqueue" [["e", body, id]] (id: what Enqueue returned,
// null unless ok), "dequeue" [["d", body, {"id", "count"}]] (body "" and
// value null when nothing was visible), and "complete", "abandon",
// "extend" [["c"|"g"|"x", body, id]] (g: given back). A body is the unique name of its
// enqueue ("w0g1n17"), so a delivery names the enqueue it came from.
//
// lock: "acquire" [["l", lock, token]] (token null unless ok), "incr"
// [["i", counter, {"token", "read", "read_token", "stale"}]] (a fenced
// read-modify-write adding one: what it read, null when not known; stale:
// made with the token of a hold already released, as a paused holder
// would), and "release" [["u", lock, {"token", "acquired", "released"}]]
// (the hold's interval, CLOCK_MONOTONIC).
#ifndef BLOBTABLE_DEVTOOLS_STRESS_COORD_CHECK_H_
#define BLOBTABLE_DEVTOOLS_STRESS_COORD_CHECK_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "devtools/stress/history.h"

namespace blobtable::stress {

// What a queue holds at the end: its items and its dead letters, by id.
struct QueueEnd {
  struct Item {
    std::string body;
    int dequeue_count = 0;
  };
  std::map<std::string, Item> queued, dead;
};

// Judges a queue history against what the queue holds at the end. It
// holds when:
//   - no item is completed OK twice (exactly one Complete says OK);
//   - every item whose enqueue was OK is completed OK, still queued, a dead
//     letter, or named by a Complete of unknown outcome: none lost;
//   - nothing is delivered, completed, queued or dead-lettered that was not
//     enqueued by an enqueue that was OK or of unknown outcome (a failed
//     one did nothing), nor delivered before its enqueue began;
//   - one enqueue makes one item (one id);
//   - an item completed OK is neither delivered after that nor left in the
//     queue or the dead letters;
//   - each delivery of an item has its own dequeue count, 1..max_dequeues;
//     an item at the end counts no fewer than its deliveries say, and a
//     dead letter at least max_dequeues.
// Empty if it holds; else the first violation, with the operations that
// show it.
std::string CheckQueue(const std::vector<Op>& history, const QueueEnd& end, int max_dequeues);

// The counter entity at the end: its value and the token recorded with it
// (0: none).
struct CounterEnd {
  int64_t value = 0;
  int64_t token = 0;
};

// Judges a lock history against the counter at the end. It holds when:
//   - every acquisition that was OK got its own token, larger than that of
//     every acquisition that ended before it began;
//   - no increment that was OK read a token newer than its own (a fenced
//     write accepted after a newer holder wrote);
//   - the increments that were OK wrote distinct values (none lost to
//     another that read the same value), with tokens that never go back
//     in the order of the values they wrote, and the end's token is the
//     newest of them;
//   - the counter is at least the number of increments that were OK and at
//     most that plus the number of unknown outcome.
std::string CheckLock(const std::vector<Op>& history, const CounterEnd& end);

}  // namespace blobtable::stress

#endif  // BLOBTABLE_DEVTOOLS_STRESS_COORD_CHECK_H_
