// SPDX-License-Identifier: Apache-2.0
// What one simulated run needs around its actors (interleavings.cc and
// exhaustive.cc): a store directory in memory, the store(s) opened through
// the protocol monitor and the scheduler, the history, and the check at
// the end (leases run out, Recover, every key read, a serial order sought).
#ifndef BLOBTABLE_DEVTOOLS_STRESS_SIM_SIM_WORLD_H_
#define BLOBTABLE_DEVTOOLS_STRESS_SIM_SIM_WORLD_H_

#include <memory>
#include <mutex>
#include <string>

#include "blobtable/store.h"
#include "devtools/stress/sim/history_checker.h"
#include "devtools/stress/sim/sim_scheduler.h"
#include "testing/fake_clock.h"

namespace blobtable::sim {

// The keys every run uses: two partitions of two entities.
inline const char* const kKeys[][2] = {{"p0", "a"}, {"p0", "b"}, {"p1", "c"}, {"p1", "d"}};
constexpr int kNumKeys = 4;
std::string KeyName(int k);
// "<v>" or "<v>+<m>": what replaces and inserts wrote, and what a merge
// added on top (the checker's model of a merge).
Version ValueOf(const Result<Entity>& e);

// A new directory, removed with everything in it: in memory (/dev/shm)
// where there is one, else under the temporary directory. The simulation
// searches the protocol's interleavings, not the disk's durability, and a
// run of 2,100 seeds commits tens of thousands of times: on a disk each
// commit waits for fsync, 23 s a run here and over 300 s when a build
// competed for the disk (a CI timeout), against 5 s in memory.
class TempDirectory {
 public:
  TempDirectory();
  ~TempDirectory();
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

class World {
 public:
  World(internal::FakeClock& clock, SimScheduler& sched) : clock_(clock), sched_(sched) {}
  // Opens the protocol store (committing through the lease protocol,
  // finishing inline) and, with `atomic`, a second store on the same
  // directory that commits as one LMDB batch; both go through the monitor
  // and the scheduler. With `in_place_reads`, gets and queries read in
  // place, as on an unwrapped embedded store (storage/in_place.h); without,
  // through Get and List.
  Status Open(bool atomic, bool in_place_reads = true);
  Store& protocol() { return *protocol_; }
  Store* atomic() { return atomic_.get(); }
  // A third store on the directory, as another process whose wall clock is
  // `wall_offset` away from the others' (monotonic time and the boot are
  // the machine's): the one `Recover` runs in.
  Status OpenRecoverer(std::chrono::milliseconds wall_offset);
  Store* recoverer() { return recoverer_.get(); }
  History& history() { return history_; }
  std::mutex& mu() { return mu_; }
  // Sets up key k with `v` (or leaves it absent), through `store`: as a
  // plain insert, or (`via_txn`, and always on the atomic store, which then
  // stamps it) a transaction, which also creates its partition's lock blob.
  Status SetInitial(int k, Version v, Store& store, bool via_txn = false);
  // After the actors: leases run out, a fresh store recovers and reads
  // every key; returns every violation found ("" if none).
  std::string Finish();
  std::string Describe() const { return history_.Describe(); }

 private:
  static std::string LeasedIntentsLeft(BlobStore& blobs);
  // The options every store of the world opens with, on `clock`.
  StoreOptions Options(Clock& clock, bool in_place_reads);

  internal::FakeClock& clock_;
  SimScheduler& sched_;
  TempDirectory dir_;
  std::string monitor_;  // what the monitors flagged (outlives the stores)
  std::unique_ptr<internal::SkewedClock> skewed_;  // the recoverer's
  std::unique_ptr<Store> protocol_, atomic_, recoverer_;
  History history_;
  std::mutex mu_;
};

}  // namespace blobtable::sim

#endif  // BLOBTABLE_DEVTOOLS_STRESS_SIM_SIM_WORLD_H_
