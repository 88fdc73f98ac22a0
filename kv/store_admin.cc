// SPDX-License-Identifier: Apache-2.0
// Store::Stats, Store::Backup and Store::Compact: the store as a whole
// (tools/cli/stats.cc, backup.cc, compact.cc).
#include <string>

#include "blobtable/store.h"
#include "kv/store_core.h"
#include "model/blob_naming.h"
#include "storage/list_all.h"
#include "storage/local/local_files.h"
#include "util/macros.h"

namespace blobtable {

Result<StoreStats> Store::Stats() const {
  StoreStats out;
  BT_ASSIGN_OR_RETURN(std::vector<std::string> tables, ListTables());
  for (const std::string& name : tables) {
    TableFigures t;
    t.name = name;
    ListOptions list;
    list.prefix = internal::naming::EntityPrefix(name);
    BT_RETURN_IF_ERROR(internal::ForEachListed(*core_->blobs, list, [&](const BlobItem& item) {
                         ++t.entity_blobs;
                         t.bytes += static_cast<int64_t>(item.properties.content_length);
                         return Status::OK();
                       }).WithContext("figures of table " + name));
    out.tables.push_back(std::move(t));
  }
  if (auto* local = dynamic_cast<internal::LocalFiles*>(core_->blobs.get())) {
    BT_ASSIGN_OR_RETURN(internal::FileFigures f, internal::FiguresOf(local->lmdb()));
    out.file = LocalFileFigures{
        local->lmdb().directory(), f.file_bytes, f.page_size, f.pages_used, f.free_pages, f.readers,
        f.compacted_bytes};
  }
  if (auto cache = cache_stats(); cache.ok()) out.cache = *cache;
  return out;
}

Status Store::Backup(std::string_view directory) const {
  auto* local = dynamic_cast<internal::LocalFiles*>(core_->blobs.get());
  if (local == nullptr)
    return Status::InvalidArgument(
        "a copy of the files is for the embedded store; back up " + core_->blobs->Location() +
        " with an export of every table (blobtable backup --export DIR)");
  return internal::HotCopy(local->lmdb(), std::string(directory));
}

Result<CompactReport> Store::Compact(std::string_view directory) {
  BT_ASSIGN_OR_RETURN(internal::Compacted c, internal::CompactInPlace(std::string(directory)));
  return CompactReport{c.bytes_before, c.bytes_after};
}

}  // namespace blobtable
