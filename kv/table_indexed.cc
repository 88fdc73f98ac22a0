// SPDX-License-Identifier: Apache-2.0
// Plain writes to a table with indexes (docs/indexes.md#maintaining): each
// is one transaction that reads the entity, writes it, and writes the
// entries its change makes (txn/index_upkeep.h); on the embedded store that
// is one LMDB write, elsewhere the commit protocol. A race with another
// writer (what was read changed before the commit) runs it again, up to
// StoreOptions::max_merge_attempts; a failed condition is answered as a
// plain write answers it.
#include <algorithm>

#include "blobtable/table.h"
#include "blobtable/txn.h"
#include "kv/store_core.h"
#include "txn/entity_access.h"
#include "txn/txn_buffer.h"
#include "util/macros.h"
#include "util/random.h"

namespace blobtable {
namespace {

using internal::WriteMode;

// Whether a failed commit lost a race (what it read changed, or the index
// definitions it followed), as against a condition that does not hold.
bool Raced(const internal::TxnBuffer& buffer, const Status& failed) {
  if (!failed.IsConflict() && !failed.IsNotFound()) return false;
  if (buffer.schema_changed) return true;
  return std::any_of(buffer.intents.begin(), buffer.intents.end(),
                     [](const auto& kv) { return kv.second.changed_since_read; });
}

// A plain write's transaction waits as a plain write does (the Table
// contract, table.h): up to StoreOptions::busy_timeout, with the lease the
// store's own transaction machinery uses.
TransactionOptions PlainWriteOptions(const internal::StoreCore& core) {
  TransactionOptions o;
  o.lock_timeout = std::max(core.busy_timeout, std::chrono::milliseconds(0));
  // StoreOptions::txn_lease_seconds says 15..60 and is not checked at open.
  o.lease_seconds = std::clamp(core.txn_lease_seconds, 15, 60);
  return o;
}

// A lock or entity that stayed busy answers Busy, as a plain write's
// entity held by a transaction does; so does the write's own transaction
// losing its lease before its commit point (nothing was written). LockTimeout
// and LeaseLost are a transaction's codes, not a Table write's (table.h).
Status AsPlainWrite(Status failed) {
  if (failed.IsLockTimeout() || failed.IsLeaseLost()) return Status::Busy(failed.message());
  return failed;
}

// Before running a write again that lost a race: a random pause, growing
// with the attempts, so that writers racing for one entry (a unique
// value) fall out of step instead of aborting one another again.
void PauseAfterARace(const internal::StoreCore& core, int attempt) {
  const uint64_t most = 20 * static_cast<uint64_t>(std::min(attempt, 8));  // ms
  core.clock->SleepFor(std::chrono::milliseconds(internal::RandomU64() % (most + 1)));
}

}  // namespace

Result<Entity> Table::WriteIndexed(const Entity& entity, std::string_view if_match,
                                   WriteMode mode) const {
  const std::string_view pk = entity.partition_key(), rk = entity.row_key();
  const std::string ctx = internal::EntityContext(name_, pk, rk);
  const int attempts = std::max(1, core_->max_merge_attempts);
  for (int attempt = 1;; ++attempt) {
    Transaction txn(core_, PlainWriteOptions(*core_));
    // An insert needs no read: it expects nothing there, and the upkeep
    // plans on that (txn/index_upkeep.h), checked at commit.
    Result<Entity> read = Status::NotFound("not read");
    if (mode != WriteMode::kInsert) read = txn.Get(*this, pk, rk);
    if (!read.ok() && !read.status().IsNotFound()) return read.status();
    Status buffered;
    switch (mode) {
      case WriteMode::kInsert: buffered = txn.Insert(*this, entity); break;
      case WriteMode::kReplace: buffered = txn.Replace(*this, entity, if_match); break;
      case WriteMode::kMerge: buffered = txn.Merge(*this, entity, if_match); break;
      case WriteMode::kUpsert: buffered = txn.Upsert(*this, entity); break;
      case WriteMode::kUpsertMerge: buffered = txn.UpsertMerge(*this, entity); break;
    }
    if (!buffered.ok()) return buffered.WithContext(ctx);
    // The Timestamp the new version gets, known here to be returned.
    const DateTime stamp = std::chrono::time_point_cast<Ticks>(core_->clock->Now());
    internal::Intent& own = txn.buffer_->intents.begin()->second;
    own.stamp = stamp;
    auto committed = txn.Commit();
    if (committed.ok()) {
      const bool merged = mode == WriteMode::kMerge || mode == WriteMode::kUpsertMerge;
      Entity stored = merged && read.ok() ? *read : entity;
      if (merged && read.ok())
        for (const auto& [prop, value] : entity.properties()) stored.Set(prop, value);
      stored.set_etag(committed->empty() ? "" : committed->front().etag);
      stored.set_timestamp(stamp);
      stored.set_stale(false);
      return stored;
    }
    if (!Raced(*txn.buffer_, committed.status()) || attempt >= attempts)
      return AsPlainWrite(committed.status());
    PauseAfterARace(*core_, attempt);
  }
}

Status Table::DeleteIndexed(std::string_view pk, std::string_view rk,
                            std::string_view if_match) const {
  const int attempts = std::max(1, core_->max_merge_attempts);
  for (int attempt = 1;; ++attempt) {
    Transaction txn(core_, PlainWriteOptions(*core_));
    auto read = txn.Get(*this, pk, rk);
    if (!read.ok() && !read.status().IsNotFound()) return read.status();
    BT_RETURN_IF_ERROR(txn.Delete(*this, pk, rk, if_match));
    auto committed = txn.Commit();
    if (committed.ok()) return Status::OK();
    if (!Raced(*txn.buffer_, committed.status()) || attempt >= attempts)
      return AsPlainWrite(committed.status());
    PauseAfterARace(*core_, attempt);
  }
}

}  // namespace blobtable
