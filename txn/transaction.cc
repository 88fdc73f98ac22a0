// SPDX-License-Identifier: Apache-2.0
// Transaction: the buffered API. Nothing is locked or written until
// Commit(), which applies one atomic batch where the backend offers it
// (txn/atomic_commit.cc) and the prewrite protocol elsewhere
// (txn/prewrite_commit.cc); one that writes nothing only validates its
// reads (txn/read_only_commit.cc).
#include "blobtable/txn.h"

#include "model/blob_naming.h"
#include "model/index_naming.h"
#include "model/key_rules.h"
#include "util/macros.h"
#include "txn/atomic_commit.h"
#include "txn/prewrite_commit.h"
#include "txn/read_only_commit.h"
#include "txn/entity_access.h"
#include "txn/index_upkeep.h"
#include "txn/txn_buffer.h"

namespace blobtable {

namespace {

using internal::Intent;
using Kind = Intent::Kind;
using Expect = Intent::Expect;

}  // namespace

Transaction::Transaction(std::shared_ptr<const internal::TxnContext> core,
                         TransactionOptions options)
    : buffer_(std::make_unique<internal::TxnBuffer>()) {
  buffer_->core = std::move(core);
  buffer_->options = options;
}

Transaction::~Transaction() { Abort(); }  // counted as given up, as Abort() is
Transaction::Transaction(Transaction&&) noexcept = default;
Transaction& Transaction::operator=(Transaction&&) noexcept = default;

namespace {

Status MovedFrom() {
  return Status::InvalidArgument("a moved-from Transaction (use the one it was moved to)");
}

// `store`: the store `table` is of (Transaction::StoreOf).
Result<Intent*> IntentFor(internal::TxnBuffer& b, const Table& table,
                          const internal::TxnContext* store, std::string_view pk,
                          std::string_view rk) {
  if (b.finished)
    return Status::InvalidArgument("the transaction has already committed or aborted");
  // Named here, by the model's rules (Table names its entities the same way).
  if (table.name().empty())
    return Status::InvalidArgument(
        "an empty Table handle (default-constructed or moved from); "
        "assign one from Store::OpenTable");
  // Its entities would be named and written in this transaction's store.
  if (store != b.core.get())
    return Status::InvalidArgument("table " + table.name() +
                                   ": a handle of another store than the transaction's");
  BT_RETURN_IF_ERROR(ValidateKey(pk, "PartitionKey"));
  BT_RETURN_IF_ERROR(ValidateKey(rk, "RowKey"));
  BT_ASSIGN_OR_RETURN(std::string blob, internal::naming::EntityBlobName(table.name(), pk, rk));
  BT_ASSIGN_OR_RETURN(std::string lock, internal::naming::LockBlobName(table.name(), pk));
  Intent& i = b.intents[blob];
  if (i.blob.empty()) {
    i.table = table.name();
    i.pk = std::string(pk);
    i.rk = std::string(rk);
    i.blob = blob;
    i.lock = lock;
  }
  return &i;
}

Status AddWrite(internal::TxnBuffer* buffer, const Table& table, const internal::TxnContext* store,
                std::string_view pk, std::string_view rk, Kind kind, Expect expect,
                std::string etag, const Entity* entity) {
  if (buffer == nullptr) return MovedFrom();
  internal::TxnBuffer& b = *buffer;
  if (entity != nullptr) {
    Status valid = ValidateEntity(*entity);
    if (!valid.ok()) return valid;
  }
  BT_ASSIGN_OR_RETURN(Intent * i, IntentFor(b, table, store, pk, rk));
  if (i->kind != Kind::kNone)
    return Status::InvalidArgument(i->Describe() + ": written twice in one transaction");
  i->kind = kind;
  i->expect = expect;
  i->etag = std::move(etag);
  if (entity != nullptr) i->entity = *entity;
  i->order = b.next_order++;
  return Status::OK();
}

Expect ExpectFor(std::string_view if_match) {
  return if_match == kAnyETag ? Expect::kExists : Expect::kETag;
}

}  // namespace

Result<Entity> Transaction::Get(const Table& table, std::string_view pk, std::string_view rk) {
  if (!buffer_) return MovedFrom();
  BT_ASSIGN_OR_RETURN(Intent * i, IntentFor(*buffer_, table, StoreOf(table), pk, rk));
  return internal::ReadIntoIntent(*buffer_->core, *i);
}

Status Transaction::Insert(const Table& t, const Entity& e) {
  return AddWrite(buffer_.get(), t, StoreOf(t), e.partition_key(), e.row_key(), Kind::kPut,
                  Expect::kAbsent, "", &e);
}
Status Transaction::Replace(const Table& t, const Entity& e, std::string_view if_match) {
  if (if_match.empty()) return Status::InvalidArgument("Replace needs an ETag or \"*\"");
  return AddWrite(buffer_.get(), t, StoreOf(t), e.partition_key(), e.row_key(), Kind::kPut,
                  ExpectFor(if_match), std::string(if_match), &e);
}
Status Transaction::Merge(const Table& t, const Entity& e, std::string_view if_match) {
  if (if_match.empty()) return Status::InvalidArgument("Merge needs an ETag or \"*\"");
  return AddWrite(buffer_.get(), t, StoreOf(t), e.partition_key(), e.row_key(), Kind::kMerge,
                  ExpectFor(if_match), std::string(if_match), &e);
}
Status Transaction::Upsert(const Table& t, const Entity& e) {
  return AddWrite(buffer_.get(), t, StoreOf(t), e.partition_key(), e.row_key(), Kind::kPut,
                  Expect::kAny, "", &e);
}
Status Transaction::UpsertMerge(const Table& t, const Entity& e) {
  return AddWrite(buffer_.get(), t, StoreOf(t), e.partition_key(), e.row_key(), Kind::kMerge,
                  Expect::kAny, "", &e);
}
Status Transaction::Delete(const Table& t, std::string_view pk, std::string_view rk,
                           std::string_view if_match) {
  if (if_match.empty()) return Status::InvalidArgument("Delete needs an ETag or \"*\"");
  return AddWrite(buffer_.get(), t, StoreOf(t), pk, rk, Kind::kDelete, ExpectFor(if_match),
                  std::string(if_match), nullptr);
}
Status Transaction::Check(const Table& t, std::string_view pk, std::string_view rk,
                          std::string_view etag) {
  return AddWrite(buffer_.get(), t, StoreOf(t), pk, rk, Kind::kCheck,
                  etag.empty() ? Expect::kAbsent : Expect::kETag, std::string(etag), nullptr);
}

Status Transaction::Replace(const Table& t, const Entity& e) {
  BT_ASSIGN_OR_RETURN(std::string etag, internal::OwnETag(e, "Replace(table, entity)"));
  return Replace(t, e, etag);
}
Status Transaction::Merge(const Table& t, const Entity& e) {
  BT_ASSIGN_OR_RETURN(std::string etag, internal::OwnETag(e, "Merge(table, entity)"));
  return Merge(t, e, etag);
}

Result<std::vector<CommittedWrite>> Transaction::Commit() {
  if (!buffer_) return MovedFrom();
  if (buffer_->finished)
    return Status::InvalidArgument("the transaction has already committed or aborted");
  buffer_->finished = true;
  return internal::CommitBuffer(*buffer_);
}

namespace internal {

namespace {

// CommitBuffer's work; `path` says which way it went.
Result<std::vector<CommittedWrite>> CommitBy(TxnBuffer& buffer, CommitPath& path) {
  if (buffer.intents.empty()) return std::vector<CommittedWrite>{};
  path = CommitPath::kReadOnly;
  if (ProvedByReadingAgain(buffer)) return CommitReadOnly(buffer);
  path = CommitPath::kCoordinator;
  BT_RETURN_IF_ERROR(AddIndexUpkeep(buffer));
  if (CommitsAtomically(buffer)) path = CommitPath::kAtomic;
  auto committed =
      path == CommitPath::kAtomic ? CommitAtomically(buffer) : CommitPrewritten(buffer);
  if (!committed.ok()) return committed;
  // The index entries' writes are the commit's own business.
  std::erase_if(*committed, [](const CommittedWrite& w) { return naming::IsHiddenTable(w.table); });
  return committed;
}

// CommitBy, counted.
Result<std::vector<CommittedWrite>> CommitCounted(TxnBuffer& buffer) {
  const TxnContext& core = *buffer.core;
  CommitPath path = CommitPath::kNone;
  if constexpr (!kCounting) return CommitBy(buffer, path);
  const SteadyTime t0 = core.clock->Steady();
  TallyScope requests;
  auto committed = CommitBy(buffer, path);
  if (core.txn_metrics)
    core.txn_metrics->Committed(path, StatusOf(committed).code(), core.clock->Steady() - t0,
                                buffer.lock_waits, buffer.rounds, requests.tally().requests.load());
  return committed;
}

}  // namespace

Result<std::vector<CommittedWrite>> CommitBuffer(TxnBuffer& buffer) {
  const TxnContext& core = *buffer.core;
  std::optional<CommitsInFlight::Entry> running;  // Store::Health
  if (core.commits_in_flight) running.emplace(*core.commits_in_flight, core.clock->Steady());
  if (CurrentCall().depth > 0) {  // a write's to an indexed table, an index build's: under it
    Span span(core.tracer(), "blobtable.commit");
    auto committed = CommitCounted(buffer);
    span.End(StatusOf(committed));
    return committed;
  }
  return Observed(core.observing.get(), *core.clock, "commit", "",
                  [&] { return CommitCounted(buffer); });
}

}  // namespace internal

Transaction::CommitStats Transaction::commit_stats() const {
  if (!buffer_) return CommitStats{};
  return CommitStats{buffer_->lock_waits};
}

void Transaction::Abort() {
  if (!buffer_) return;
  if (!buffer_->finished && buffer_->core->txn_metrics) buffer_->core->txn_metrics->Aborted();
  buffer_->finished = true;
  buffer_->intents.clear();
}

}  // namespace blobtable
