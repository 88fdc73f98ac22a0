// SPDX-License-Identifier: Apache-2.0
// Fault injection for tests of code built on blobtable (and of blobtable
// itself), in the spirit of leveldb's and RocksDB's fault-injection
// environments: a BlobStore wrapper that makes calls fail the ways remote
// storage fails, at seeded random.
//
// Each fault is what a caller of a real backend can see, and does to
// storage what the real failure would (docs/testing.md#fault-injection):
//
//   kind            storage                      the caller sees
//   server_busy     nothing done                 Unavailable, 503 ServerBusy
//   internal_error  done or not (the seed says)  reads: Unavailable, 500;
//                                                writes and lease actions:
//                                                OutcomeUnknown
//   timeout         done or not (the seed says)  as internal_error, no status
//   reset_before    nothing done (the request    Unavailable, storage code
//                   never reached storage)       "NotSent"
//   reset_after     done; the answer is lost     as internal_error
//   lease_lost      the lease the call presents  whatever storage then
//                   is broken first              answers (LeaseLost)
//
// lease_lost applies to calls that present a lease id (writes with one,
// renew, change, release); the others ignore it.
//
// Deterministic: the n-th call made through the wrapper meets the fault that
// (seed, n) picks, so a caller that makes its calls in the same order (one
// thread, or a deterministic scheduler) meets the same faults again for the
// same seed. Thread-safe; with several threads the calls are numbered in
// the order they arrive.
#ifndef BLOBTABLE_FAULT_INJECTION_H_
#define BLOBTABLE_FAULT_INJECTION_H_

#include <array>
#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>

#include "blobtable/blob_store.h"
#include "blobtable/export.h"

namespace blobtable {

// The kinds of BlobStore call, for rates per kind.
enum class BlobOp {
  kGet,
  kHead,
  kPut,
  kDelete,
  kList,
  kSetMetadata,
  kAcquireLease,
  kRenewLease,
  kChangeLease,
  kReleaseLease,
  kBreakLease,
  kBatch,  // CommitBatch, named by its first blob: all of it applied or none
};
inline constexpr int kBlobOpCount = 12;
BLOBTABLE_EXPORT const char* BlobOpName(BlobOp op);  // "get", "put", "acquire-lease", ...

enum class Fault { kServerBusy, kInternalError, kTimeout, kResetBefore, kResetAfter, kLeaseLost };
inline constexpr int kFaultCount = 6;
BLOBTABLE_EXPORT const char* FaultName(Fault f);  // "server-busy", "reset-after", ...

// One call in N fails with each kind (0: never). A call meets at most one
// fault; kinds are tried in the order above.
struct FaultRates {
  int server_busy = 0;
  int internal_error = 0;
  int timeout = 0;
  int reset_before = 0;
  int reset_after = 0;
  int lease_lost = 0;
};

struct FaultOptions {
  uint64_t seed = 1;
  FaultRates rates;  // every kind of call
  // Replaces `rates` for the kinds of call it names.
  std::map<BlobOp, FaultRates> per_op;
  // Receives a line for every fault injected: "<n> <op> <blob> <fault>
  // <applied|not-applied>" (n numbers the calls from 1).
  std::function<void(const std::string& line)> log;
};

class BLOBTABLE_EXPORT FaultInjectingBlobStore final : public BlobStoreWrapper {
 public:
  FaultInjectingBlobStore(std::shared_ptr<BlobStore> target, FaultOptions options);

  // Off: every call passes through unharmed and is not numbered (to set up
  // or inspect a test's state). On at construction.
  void set_enabled(bool on) { enabled_.store(on); }
  // Calls numbered so far, and faults injected, by kind.
  uint64_t calls() const { return calls_.load(); }
  uint64_t injected(Fault f) const { return injected_[static_cast<int>(f)].load(); }
  uint64_t injected() const;

  Result<GetResult> Get(std::string_view name, const ReadOptions& o) override;
  Result<GetResult> Head(std::string_view name, const AccessConditions& c) override;
  Result<WriteResult> Put(std::string_view name, std::string_view data,
                          const PutOptions& o) override;
  Status Delete(std::string_view name, const WriteOptions& o) override;
  Result<ListPage> List(const ListOptions& o) override;
  Result<WriteResult> SetMetadata(std::string_view name, const Metadata& m,
                                  const WriteOptions& o) override;
  Result<LeaseResult> AcquireLease(std::string_view name, int duration, std::string_view proposed,
                                   const LeaseOptions& c) override;
  Result<LeaseResult> RenewLease(std::string_view name, std::string_view id,
                                 const LeaseOptions& c) override;
  Result<LeaseResult> ChangeLease(std::string_view name, std::string_view id,
                                  std::string_view proposed, const LeaseOptions& c) override;
  Result<LeaseResult> ReleaseLease(std::string_view name, std::string_view id,
                                   const LeaseOptions& c) override;
  Result<LeaseResult> BreakLease(std::string_view name, std::optional<int> period,
                                 const LeaseOptions& c) override;
  BatchResult CommitBatch(const std::vector<BatchOp>& ops) override;

 private:
  // What happens to one call.
  struct Decision {
    bool faulted = false;
    Fault fault = Fault::kServerBusy;
    bool apply = true;  // storage does it
    uint64_t n = 0;
  };
  Decision Decide(BlobOp op, std::string_view name, bool presents_lease);
  // Numbers a call, picks its fault, and runs `call` as that fault says.
  template <typename R, typename Fn>
  R Run(BlobOp op, std::string_view name, bool presents_lease, Fn&& call);
  void BreakLeaseOf(std::string_view name);

  FaultOptions options_;
  std::atomic<bool> enabled_{true};
  std::atomic<uint64_t> calls_{0};
  std::array<std::atomic<uint64_t>, kFaultCount> injected_{};
};

}  // namespace blobtable

#endif  // BLOBTABLE_FAULT_INJECTION_H_
