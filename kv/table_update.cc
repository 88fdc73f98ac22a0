// SPDX-License-Identifier: Apache-2.0
// Table::Update: optimistic read-modify-write of one entity, retried under
// a RetryPolicy when the write loses a race.
#include "blobtable/table.h"
#include "kv/retry_loop.h"
#include "kv/store_core.h"
#include "util/macros.h"

namespace blobtable {

Result<Entity> Table::Update(std::string_view pk, std::string_view rk, const UpdateFn& fn,
                             const RetryPolicy& policy, int* attempts) const {
  return internal::MeteredCall(
      core_.get(), internal::OpKind::kUpdate, name_, [&]() -> Result<Entity> {
        if (attempts != nullptr) *attempts = 0;
        BT_RETURN_IF_ERROR(Usable());
        BT_RETURN_IF_ERROR(ValidateRetryPolicy(policy));
        if (!fn) return Status::InvalidArgument("Table::Update needs a function");
        BT_RETURN_IF_ERROR(EntityBlobName(pk, rk).status());
        return internal::WithRetries(
            *core_->clock, policy, attempts, [&](bool* final) -> Result<Entity> {
              // Validated: an update must start from storage's version, never a stale copy.
              auto current = Get(pk, rk, ReadPolicy::Validate());
              const bool exists = current.ok();
              if (!exists && !current.status().IsNotFound()) return current.status();
              Entity entity =
                  exists ? std::move(*current) : Entity(std::string(pk), std::string(rk));
              const Entity before = entity;
              Status changed = [&] {
                internal::UserCode user;  // its calls are the user's own
                return fn(entity, exists);
              }();
              if (!changed.ok()) {
                *final = true;  // the function's own answer: not a race
                return changed;
              }
              if (entity.partition_key() != pk || entity.row_key() != rk) {
                *final = true;
                return Status::InvalidArgument(
                    "table " + name_ + ": Table::Update's function changed the entity's keys");
              }
              if (exists && entity.SameContent(before) && entity.set_error().empty()) return before;
              auto written = exists ? Replace(entity, before.etag()) : Insert(entity);
              // Deleted between the read and the write: a race like a changed ETag.
              if (written.status().IsNotFound())
                return Status::Conflict("table " + name_ +
                                        ": the entity was deleted while it was updated");
              return written;
            });
      });
}

}  // namespace blobtable
