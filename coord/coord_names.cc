// SPDX-License-Identifier: Apache-2.0
#include "coord/coord_names.h"

#include "model/blob_naming.h"
#include "util/utf8.h"

namespace blobtable::internal::coord {

Status ValidateName(std::string_view name, std::string_view what) {
  if (name.empty() || name.size() > 256)
    return Status::InvalidArgument(std::string(what) + " name must be 1..256 bytes, got " +
                                   std::to_string(name.size()));
  if (!IsValidUtf8(name))
    return Status::InvalidArgument(std::string(what) + " name is not valid UTF-8");
  return Status::OK();
}

std::string LockBlobName(std::string_view name) { return "c/locks/-" + naming::EncodeKey(name); }

std::string LeaderBlobName(std::string_view name) {
  return "c/leaders/-" + naming::EncodeKey(name);
}

std::string QueueItemPrefix(std::string_view queue) {
  return "c/queues/-" + naming::EncodeKey(queue) + "/i/";
}
std::string QueueItemName(std::string_view queue, std::string_view id) {
  return QueueItemPrefix(queue) + std::string(id);
}
std::string QueueDeadPrefix(std::string_view queue) {
  return "c/queues/-" + naming::EncodeKey(queue) + "/d/";
}
std::string QueueDeadName(std::string_view queue, std::string_view id) {
  return QueueDeadPrefix(queue) + std::string(id);
}

std::string CounterPrefix(std::string_view name) {
  return "c/counters/-" + naming::EncodeKey(name) + "/";
}

std::string CounterShardName(std::string_view name, int shard) {
  return CounterPrefix(name) + std::to_string(shard);
}

}  // namespace blobtable::internal::coord
