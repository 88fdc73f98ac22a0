// SPDX-License-Identifier: Apache-2.0
// Where the coordination primitives keep their blobs
// (docs/coordination.md#coordination): under c/, beside the tables' t/ and the transaction
// records, one prefix a primitive:
//   c/locks/-<key(name)>             a Lock
//   c/counters/-<key(name)>/<shard>  a Counter's shards (0, 1, ...)
//   c/leaders/-<key(name)>           a LeaderElection's lease (a Lock's blob)
//   c/queues/-<key(name)>/i/<id>     a WorkQueue's items; .../d/<id> its dead letters
// key() is the tables' order-preserving escape (model/blob_naming.h), so
// any UTF-8 name makes one path segment.
#ifndef BLOBTABLE_COORD_COORD_NAMES_H_
#define BLOBTABLE_COORD_COORD_NAMES_H_

#include <string>
#include <string_view>

#include "blobtable/status.h"

namespace blobtable::internal::coord {

// InvalidArgument unless `name` is 1..256 bytes of valid UTF-8; `what`
// ("lock", ...) names it in the message.
Status ValidateName(std::string_view name, std::string_view what);

std::string LockBlobName(std::string_view name);
std::string LeaderBlobName(std::string_view name);
std::string QueueItemPrefix(std::string_view queue);
std::string QueueItemName(std::string_view queue, std::string_view id);
std::string QueueDeadPrefix(std::string_view queue);
std::string QueueDeadName(std::string_view queue, std::string_view id);
// The prefix of a counter's shards, and one shard.
std::string CounterPrefix(std::string_view name);
std::string CounterShardName(std::string_view name, int shard);

}  // namespace blobtable::internal::coord

#endif  // BLOBTABLE_COORD_COORD_NAMES_H_
