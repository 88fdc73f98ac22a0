// SPDX-License-Identifier: Apache-2.0
// Seams a test or a benchmark sets on a store (StoreOptions::testing): what
// a user has no reason to change, kept off the public options.
#ifndef BLOBTABLE_TESTING_HOOKS_H_
#define BLOBTABLE_TESTING_HOOKS_H_

#include <memory>

#include "blobtable/options.h"

namespace blobtable::internal {

struct TestingHooks {
  // Transactions on a backend that applies an atomic batch (the local store)
  // commit as one batch, one LMDB write transaction: no record, locks or
  // leases. Off: through the lease coordinator, as on Azure
  // (docs/transactions.md#the-protocol), for tests of that protocol. Both
  // may run on one store.
  bool atomic_commits = true;
  // Stores with atomic_commits off share this storage with this one (the
  // stress tool's mixed commits): their commit points check the index
  // definitions' age, not in a batch, so an index this store creates or
  // drops waits the grace as on Azure (txn/definitions_check.h). A store
  // that commits through the coordinator itself always waits it.
  bool coordinator_commits_beside = false;
  // The partition lock stripe this store's transactions try first
  // (txn/lock_stripes.h); negative: drawn at random when the store opens.
  int first_lock_stripe = -1;
  // The index definitions' times (txn/index_upkeep.h: a copy's freshness,
  // a commit point's limit, a build's grace) divided by this, so that a
  // test on a server, which keeps real time, builds an index in a second
  // rather than ten. Every store sharing the storage must use the same.
  int index_time_divisor = 1;
};

// `options` with its hooks' atomic_commits set to `on` (other hooks kept).
inline StoreOptions WithAtomicCommits(StoreOptions options, bool on) {
  TestingHooks hooks = options.testing ? *options.testing : TestingHooks{};
  hooks.atomic_commits = on;
  options.testing = std::make_shared<const TestingHooks>(hooks);
  return options;
}

// The hooks `options` asks for (the defaults when none).
inline TestingHooks HooksOf(const StoreOptions& options) {
  return options.testing ? *options.testing : TestingHooks{};
}

}  // namespace blobtable::internal

#endif  // BLOBTABLE_TESTING_HOOKS_H_
