// SPDX-License-Identifier: Apache-2.0
// The list-append workload's checker (after Jepsen's Elle), apart from the
// workload so that tests can feed it histories of their own.
#ifndef BLOBTABLE_DEVTOOLS_STRESS_LIST_APPEND_H_
#define BLOBTABLE_DEVTOOLS_STRESS_LIST_APPEND_H_

#include <map>
#include <string>
#include <vector>

#include "devtools/stress/history.h"
#include "devtools/stress/workload.h"

namespace blobtable::stress {

// Judges a list-append history against the final lists (read after every
// abandoned transaction was recovered). Reads count when their operation
// was acknowledged; a transaction whose outcome is unknown counts as
// committed if its appends are in the final state. It holds when:
//   - no list (read, or final) holds an element twice;
//   - every element of a list was appended to that key by an operation that
//     was invoked, and whose append did not fail (no aborted read);
//   - every acknowledged append is in the final list;
//   - a transaction whose outcome is unknown is in the final state wholly
//     or not at all;
//   - every list read is a prefix of the final list (no read goes back);
//   - an acknowledged read holds every acknowledged append to its key that
//     ended before the read began (real time);
//   - the committed transactions and plain operations, ordered by the lists
//     (ww), by what they read (wr) and by what they had not yet seen (rw),
//     form no cycle (serializable). A query's rows count as separate reads.
// Empty if it holds; else the first violation, with the operations that
// show it.
std::string CheckListAppend(const std::vector<Op>& history,
                            const std::map<std::string, std::vector<std::string>>& final_state);

}  // namespace blobtable::stress

#endif  // BLOBTABLE_DEVTOOLS_STRESS_LIST_APPEND_H_
