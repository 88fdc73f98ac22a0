// SPDX-License-Identifier: Apache-2.0
// What every commit path asks of a buffered intent (txn_buffer.h).
#include "txn/txn_buffer.h"

#include "model/entity_codec.h"
#include "txn/entity_access.h"
#include "txn/intent_resolver.h"
#include "util/macros.h"

namespace blobtable::internal {

using Expect = Intent::Expect;
using Kind = Intent::Kind;
using std::chrono::milliseconds;

Status ValidateOptions(const TransactionOptions& o) {
  if (o.lease_seconds < 15 || o.lease_seconds > 60)
    return Status::InvalidArgument("TransactionOptions::lease_seconds must be 15..60, got " +
                                   std::to_string(o.lease_seconds));
  const milliseconds lease = std::chrono::seconds(o.lease_seconds);
  const milliseconds margin = RenewalMargin(o);
  if (margin < milliseconds(0) || margin >= lease)
    return Status::InvalidArgument(
        "TransactionOptions::renewal_margin must be 0 (automatic) or shorter than the lease (" +
        std::to_string(lease.count()) + " ms), got " + std::to_string(o.renewal_margin.count()) +
        " ms");
  if (o.lock_timeout < milliseconds(0))
    return Status::InvalidArgument("TransactionOptions::lock_timeout must not be negative");
  return Status::OK();
}

milliseconds RenewalMargin(const TransactionOptions& o) {
  const milliseconds lease = std::chrono::seconds(o.lease_seconds);
  return o.renewal_margin.count() == 0 ? lease * 2 / 3 : o.renewal_margin;
}

Status Expectation(const Intent& i, bool exists, const std::string& etag,
                   std::string_view same_as) {
  auto is = [&](const std::string& wanted) {
    return etag == wanted || NamesVersion(same_as, wanted);
  };
  if (i.reads_disagree)
    return Status::Conflict(i.Describe() + ": read twice in the transaction, two versions seen");
  if (i.read && (i.read_found != exists || (exists && !is(i.read_etag)))) {
    i.changed_since_read = true;
    return Status::Conflict(i.Describe() + ": changed since the transaction read it");
  }
  switch (i.expect) {
    case Expect::kAny: return Status::OK();
    case Expect::kAbsent:
      // Not a lost race (a read of it as absent would have been "changed
      // since read"): running the transaction again meets it again.
      if (exists)
        return Status::FromStorage(Code::kConflict, 409, kEntityAlreadyExists,
                                   i.Describe() + ": already exists");
      return Status::OK();
    case Expect::kExists:
      if (!exists) return Status::NotFound(i.Describe() + ": not found");
      return Status::OK();
    case Expect::kETag:
      if (!exists) return Status::NotFound(i.Describe() + ": not found");
      if (!is(i.etag))
        return Status::Conflict(i.Describe() + ": ETag " + i.etag + " no longer matches (now " +
                                etag + ")");
      return Status::OK();
  }
  return Status::Internal("unknown expectation");
}

Result<std::string> NewBody(const Intent& i, const std::string* current, TimePoint now) {
  Entity stored = i.entity;
  if (i.kind == Kind::kMerge && current != nullptr) {
    BT_ASSIGN_OR_RETURN(stored, DecodeEntity(*current, i.blob));
    for (const auto& [name, value] : i.entity.properties()) stored.Set(name, value);
    Status valid = ValidateEntity(stored);
    if (!valid.ok()) return valid.WithContext(i.Describe() + ": after merging");
  }
  stored.set_timestamp(i.stamp ? *i.stamp : std::chrono::time_point_cast<Ticks>(now));
  return EncodeEntity(stored);
}

Result<Entity> ReadIntoIntent(const TxnContext& core, Intent& i) {
  std::string handles;  // kept by an intent on it (docs/protocol.md, H1)
  Result<Entity> e = Status::Internal("not read");
  auto visible = ReadVisible(core, i.blob, ReadPolicy::Validate());  // never stale here
  if (visible.ok())
    e = DecodeVisible(*std::move(visible), i.blob, i.pk, i.rk, &handles);
  else
    e = visible.status().WithContext(i.about.empty() ? EntityContext(i.table, i.pk, i.rk)
                                                     : i.about);
  if (!e.ok() && !e.status().IsNotFound()) return e.status();
  // Every read must still hold at commit: a second read that sees another
  // version than the first dooms the transaction (its first decision was
  // based on a version that is gone).
  std::string etag = e.ok() ? e->etag() : "";
  if (i.read && (i.read_found != e.ok() || i.read_etag != etag)) i.reads_disagree = true;
  if (!i.read) {
    i.read = true;
    i.read_found = e.ok();
    i.read_etag = etag;
    i.read_handles = e.ok() ? handles : "";
    if (e.ok()) i.read_entity = *e;
  }
  return e;
}

}  // namespace blobtable::internal
