// SPDX-License-Identifier: Apache-2.0
#include "kv/index_definitions.h"

#include <chrono>

#include "model/entity_codec.h"
#include "model/index_naming.h"
#include "testing/hooks.h"
#include "txn/entity_access.h"
#include "txn/index_upkeep.h"
#include "util/macros.h"

namespace blobtable::internal {

Status ChangeSchema(const StoreCore& core, const std::string& table,
                    const std::function<Status(TableSchema&)>& change, std::string* etag) {
  BT_ASSIGN_OR_RETURN(std::string blob, naming::SchemaBlobName(table));
  for (int attempt = 1;; ++attempt) {
    BT_ASSIGN_OR_RETURN(SchemaCopy copy, ReadSchema(core, table));
    TableSchema schema = *copy.schema;
    BT_RETURN_IF_ERROR(change(schema));
    Entity stored = SchemaEntity(schema);
    stored.set_timestamp(std::chrono::time_point_cast<Ticks>(core.clock->Now()));
    auto written =
        WriteEntity(core, blob, copy.etag.empty() ? WriteMode::kInsert : WriteMode::kReplace,
                    copy.etag, [&](const VisibleVersion*) { return EncodeEntity(stored); });
    core.schemas->Forget(table);
    if (written.ok()) {
      if (etag != nullptr) *etag = *written;
      return Status::OK();
    }
    const Status& why = written.status();
    if (!(why.IsConflict() || why.IsUnavailable() || why.IsOutcomeUnknown()) || attempt >= 16)
      return written.status().WithContext("table " + table + ": changing its index definitions");
  }
}

void WaitOutEarlierWriters(const StoreCore& core) {
  if (core.CommitsInBatches() && !HooksOf(core.options).coordinator_commits_beside) return;
  core.clock->SleepFor(core.schemas->times().grace);
}

}  // namespace blobtable::internal
