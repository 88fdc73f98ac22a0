// SPDX-License-Identifier: Apache-2.0
// An actor of the simulation: plain operations and transactions on the
// keys of sim_world.h, each recorded in the history (as unknown until it
// returns: a kill leaves it so). Random runs draw its operations from a
// seed (Run); exhaustive scenarios script them (the public operations).
#ifndef BLOBTABLE_DEVTOOLS_STRESS_SIM_SIM_ACTOR_H_
#define BLOBTABLE_DEVTOOLS_STRESS_SIM_SIM_ACTOR_H_

#include <mutex>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "blobtable/store.h"
#include "devtools/stress/sim/history_checker.h"
#include "devtools/stress/sim/sim_scheduler.h"
#include "devtools/stress/sim/sim_world.h"

namespace blobtable::sim {

struct ActorStats {
  int ops = 0, txns = 0;
};

class Actor {
 public:
  // `atomic`: a store committing as one batch, used for some transactions
  // (null: none).
  Actor(int id, uint64_t seed, World& world, SimScheduler& sched, Store* atomic);
  // Random operations pick their keys from these (default: every key).
  void set_keys(std::vector<int> keys) { keys_ = std::move(keys); }
  // What its random operations are: anything; only reads (plain gets and
  // read-only transactions: a witness that writes nothing, so settles
  // nothing); or only plain operations.
  enum class Role { kMixed, kReader, kPlain };
  void set_role(Role r) { role_ = r; }
  // Before each random operation, half the time, a pause up to this long.
  void set_think(std::chrono::milliseconds max) { max_think_ = max; }

  // `ops` random operations: plain ones, read-write transactions (entities
  // read, written, or only read), read-only transactions.
  void Run(int ops, ActorStats& stats);

  // ---- Scripted (exhaustive scenarios) ----
  // kBlindMerge: a merge into the entity, not read first (its new version
  // depends on the version its intent is placed on).
  enum class Plan { kReadWrite, kBlindWrite, kReadOnly, kBlindMerge };
  struct Step {
    int key;
    Plan plan;
  };
  // A transaction: each step in order; writes replace (or insert) a new
  // value. Through the protocol, or as one batch on the atomic store.
  void Txn(int op, const std::vector<Step>& steps, bool atomic);
  void Get(int op, int key);
  // A replace conditional on the ETag this actor last read of `key` ("*"
  // if it has not read it).
  void Replace(int op, int key);
  // Store::Recover, in the store of `World::recoverer()` if one is open
  // (else the actors' own); its errors other than Busy are violations.
  void Recover();
  const std::string& recover_errors() const { return recover_errors_; }

  const std::string& buffer_errors() const { return buffer_errors_; }
  // Its transactions fenced (LeaseLost) although their coordinator neither
  // stalled nor lost an answer (invariant L2: a coordinator at work is
  // judged by the lock stripe it holds, so nobody decides it aborted).
  const std::string& fenced_at_work() const { return fenced_at_work_; }

 private:
  std::string NewValue(int op, int key) const;
  Entity Make(int key, const std::string& v) const;
  size_t Begin(HistEntry e);
  void End(size_t i, HistEntry::Outcome o, const Status& s, std::optional<Version> observed = {});
  void SetOps(size_t i, std::vector<HistOp> ops);
  static HistEntry::Outcome Failed(const Status& s);
  std::string Who(int op) const {
    return "actor" + std::to_string(id_) + " op" + std::to_string(op);
  }

  void Plain(int op);
  void PlainWrite(int op, int k, int kind);
  void PlainMerge(int op, int k);
  void RandomTxn(int op, bool read_only);
  int RandomKey() { return keys_[rng_() % keys_.size()]; }
  void RunTxn(int op, const std::vector<Step>& steps, bool atomic, bool scripted,
              std::chrono::milliseconds lock_timeout);
  // Buffers the write of step `k` (a kind drawn, or for scripts replace if
  // present, upsert if not); false if refused.
  HistOp BufferWrite(Transaction& txn, int op, int k, std::optional<bool> present, bool scripted,
                     bool merge = false);

  struct LastRead {
    Version version;
    std::optional<std::string> etag;
  };
  int id_;
  std::mt19937_64 rng_;
  World& world_;
  SimScheduler& sched_;
  Store* atomic_;
  Table table_;
  std::optional<Table> atomic_table_;
  const Table* txn_table_ = nullptr;  // the table of the transaction being buffered
  LastRead last_read_[kNumKeys];
  std::string buffer_errors_;
  std::string fenced_at_work_;
  std::string recover_errors_;
  std::vector<int> keys_{0, 1, 2, 3};
  Role role_ = Role::kMixed;
  std::chrono::milliseconds max_think_{0};
};

}  // namespace blobtable::sim

#endif  // BLOBTABLE_DEVTOOLS_STRESS_SIM_SIM_ACTOR_H_
