// SPDX-License-Identifier: Apache-2.0
// Transactions: atomic, serializable updates across entities, partitions and
// tables, coordinated with blob leases (see docs/transactions.md#transactions).
//
//   auto txn = store->Begin();                                // Result<Transaction>
//   auto from = txn->Get(accounts, "eu", "alice");          // read: validated at commit
//   txn->Replace(accounts, debited, from->etag());
//   txn->Replace(ledger, credited, "*");
//   auto committed = txn->Commit();                          // all or nothing
//
// Store::RunTransaction runs such a function and reruns it when the commit
// lost a race (docs/api.md#retrying-tableupdate-and-storeruntransaction).
//
// Operations are buffered; nothing is locked or written until Commit(). A
// Transaction is used from one thread at a time (it may be moved to
// another); many transactions (threads, processes) may commit at once.
// Destroying an uncommitted Transaction aborts it (which only drops the
// buffer: nothing was locked yet).
//
// On the local store, Commit() applies every write and check as one LMDB
// write transaction (TestingHooks::atomic_commits); elsewhere it runs the
// protocol of docs/transactions.md#the-protocol (four rounds: the lock
// stripes and the record created pending; the intents; the intents leased;
// the record made committed), and rewriting the intents as plain entities
// happens after it returns, in the store's background thread
// (StoreOptions::finish_in_background). A transaction that writes nothing
// and found every entity it read only reads them again (one that read an
// entity absent commits as a writing one). Either way: Commit() returns OK
// once the transaction is committed; every reader sees its writes from
// then on. Every failure below means nothing was committed:
//   Conflict     an ETag read or named (if_match, Check) no longer matches, an
//                Insert target exists, or a Replace/Merge/Delete target is gone
//                (also when a write's answer was lost and another client's
//                write is on that entity now: it was written since read)
//   NotFound     a Replace/Merge/Delete target does not exist
//   LockTimeout  a partition lock, or an entity held by another transaction,
//                stayed busy past TransactionOptions::lock_timeout
//   LeaseLost    this transaction lost a lease before the commit point (it
//                stalled past its lease and another client decided it aborted)
//   InvalidArgument, Unavailable, IOError as elsewhere
// except
//   OutcomeUnknown  the commit point was sent but its answer was lost, and
//                   reading back could not tell whether it took effect. Do not
//                   retry blindly: read the entities it wrote (a read settles
//                   the transaction first), or run Store::Recover, then decide.
#ifndef BLOBTABLE_TXN_H_
#define BLOBTABLE_TXN_H_

#include <chrono>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "blobtable/export.h"
#include "blobtable/entity.h"
#include "blobtable/status.h"
#include "blobtable/table.h"

namespace blobtable {

namespace internal {
struct TxnContext;
struct TxnBuffer;
}  // namespace internal

// Store::Begin checks every field, and the fields against each other:
// InvalidArgument naming the field.
struct TransactionOptions {
  // Lease on partition locks and entities only read: 15..60 seconds. A
  // coordinator that stalls longer than this is fenced, and its commit
  // finished or undone by whoever comes next.
  int lease_seconds = 30;
  // How long to wait for busy partition locks before LockTimeout (>= 0).
  std::chrono::milliseconds lock_timeout{30'000};
  // Renew held leases when less than this remains of them (checked between
  // every step of the commit and while waiting for locks). 0: two thirds of
  // the lease. Otherwise positive and shorter than the lease.
  std::chrono::milliseconds renewal_margin{0};
};

struct CommittedWrite {
  std::string table;  // as given to OpenTable
  std::string partition_key;
  std::string row_key;
  // A handle on the new version, for a condition (If-Match) on it: the
  // ETag of the write, or through the protocol the ETag of its intent, which
  // keeps matching once the intent is rewritten plain (the new version
  // names it). Empty for a delete, and when it is not known (an unclear
  // answer found committed by reading back).
  std::string etag;
  // False when the write was committed but not yet rewritten as a plain
  // entity by Commit() itself (always so through the protocol: finishing
  // comes after; readers already see the new version).
  bool applied = true;
};

class BLOBTABLE_EXPORT Transaction {
 public:
  ~Transaction();
  Transaction(const Transaction&) = delete;
  Transaction& operator=(const Transaction&) = delete;
  // A moved-from Transaction fails every call InvalidArgument. Assigning
  // over an uncommitted one aborts it.
  Transaction(Transaction&&) noexcept;
  Transaction& operator=(Transaction&&) noexcept;

  // Reads an entity now and records what was seen (its ETag, or that it was
  // absent): Commit() fails with Conflict if that changed. NotFound if absent.
  Result<Entity> Get(const Table& table, std::string_view partition_key, std::string_view row_key);

  // Buffered writes, with the same meaning and conditions as Table's. At most
  // one write per entity. InvalidArgument at once for invalid entities.
  Status Insert(const Table& table, const Entity& entity);
  Status Replace(const Table& table, const Entity& entity, std::string_view if_match);
  Status Merge(const Table& table, const Entity& entity, std::string_view if_match);
  // The same at the entity's own ETag (entity.etag()): InvalidArgument at
  // once if it has none.
  Status Replace(const Table& table, const Entity& entity);
  Status Merge(const Table& table, const Entity& entity);
  Status Upsert(const Table& table, const Entity& entity);
  Status UpsertMerge(const Table& table, const Entity& entity);
  Status Delete(const Table& table, std::string_view partition_key, std::string_view row_key,
                std::string_view if_match);
  // Asserts an entity's ETag at commit without writing it ("" : must not exist).
  Status Check(const Table& table, std::string_view partition_key, std::string_view row_key,
               std::string_view etag);

  // Commits every buffered operation atomically; the new ETags, in the
  // order the writes were buffered. A Transaction commits at most once.
  Result<std::vector<CommittedWrite>> Commit();
  // Drops the buffered operations.
  void Abort();

  // How the last Commit() went (zero before it): for benchmarks and
  // monitoring. Not thread-safe with a Commit() in progress.
  struct CommitStats {
    // Waits for something busy (a partition lock or an entity held by
    // another transaction or client): each is one backoff of 2..200 ms.
    int lock_waits = 0;
  };
  CommitStats commit_stats() const;

 private:
  friend class Store;
  friend class Table;  // Table::DeleteWhere's batches
  BLOBTABLE_HIDDEN Transaction(std::shared_ptr<const internal::TxnContext> context,
                               TransactionOptions options);
  // The store `table` is of (kv/table.cc): a transaction takes only the
  // tables of the store that began it.
  BLOBTABLE_HIDDEN static const internal::TxnContext* StoreOf(const Table& table);
  std::unique_ptr<internal::TxnBuffer> buffer_;
};

}  // namespace blobtable

#endif  // BLOBTABLE_TXN_H_
