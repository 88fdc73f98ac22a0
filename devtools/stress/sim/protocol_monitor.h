// SPDX-License-Identifier: Apache-2.0
// A protocol monitor for the simulation: watches every write from below the
// scheduler (its own reads are not scheduling points) for writes around a
// *committed* transaction, whether or not the history shows them:
// - protocol 2: a write that succeeds on an entity still holding the intent
//   of a committed transaction must be its finishing: the new version put
//   (stamped with the transaction, its btsame naming the intent, or, for an
//   intent that leaves the version as it was, the version before), the
//   entity deleted if the new version is none, or another transaction's
//   intent whose previous version is that new version;
// - an atomic batch that writes over a committed intent.
#ifndef BLOBTABLE_DEVTOOLS_STRESS_SIM_PROTOCOL_MONITOR_H_
#define BLOBTABLE_DEVTOOLS_STRESS_SIM_PROTOCOL_MONITOR_H_

#include <functional>
#include <mutex>
#include <optional>
#include <string>

#include "blobtable/blob_store.h"
#include "txn/intent.h"
#include "txn/txn_record.h"
#include "util/macros.h"

namespace blobtable::sim {

class ProtocolMonitor final : public BlobStoreWrapper {
 public:
  using BlobStoreWrapper::BlobStoreWrapper;
  // What it flagged (several stores may share one string: set `sink`).
  std::string* sink = nullptr;

  Result<WriteResult> Put(std::string_view n, std::string_view d, const PutOptions& o) override;
  Status Delete(std::string_view n, const WriteOptions& o) override;
  Result<WriteResult> SetMetadata(std::string_view n, const Metadata& m,
                                  const WriteOptions& o) override;
  Result<LeaseResult> AcquireLease(std::string_view n, int d, std::string_view p,
                                   const LeaseOptions& c) override;
  BatchResult CommitBatch(const std::vector<BatchOp>& ops) override;

  // Whether a put of `body` with `metadata` over the intent `i` (whose blob
  // is at `cur`) is that intent's finishing, committed. Public for tests.
  static bool FinishesCommitted(const internal::EntityIntent& i, const BlobProperties& cur,
                                std::string_view body, const Metadata& metadata);

 private:
  using Finishes = std::function<bool(const internal::EntityIntent&, const BlobProperties&)>;
  std::optional<internal::TxnRecord> Committed(const std::string& txn);
  std::string Around(std::string_view name, const Finishes& finishes);
  void Flag(const std::string& what);

  template <typename F>
  auto Watch(std::string_view name, const std::string& lease_id, const char* what,
             const Finishes& finishes, F call) -> decltype(call()) {
    const std::string committed_by = Around(name, finishes);
    auto r = call();
    if (!committed_by.empty() && internal::StatusOf(r).ok())
      Flag(std::string(what) + " on " + std::string(name) + " by " +
           (lease_id.empty() ? std::string("a plain write") : "lease " + lease_id) +
           ", around committed transaction " + committed_by + "\n");
    return r;
  }
};

}  // namespace blobtable::sim

#endif  // BLOBTABLE_DEVTOOLS_STRESS_SIM_PROTOCOL_MONITOR_H_
