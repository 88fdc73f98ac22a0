// SPDX-License-Identifier: Apache-2.0
// The BlobStore conformance suite: written once, run against every backend.
// A backend's test file instantiates it with INSTANTIATE_TEST_SUITE_P and a
// Backend (tests/backend.h).
#ifndef BLOBTABLE_TESTS_BLOB_STORE_CONFORMANCE_H_
#define BLOBTABLE_TESTS_BLOB_STORE_CONFORMANCE_H_

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "blobtable/blob_store.h"
#include "tests/backend.h"
#include "tests/test_util.h"

namespace blobtable::testing {

class BlobStoreConformance : public ::testing::TestWithParam<Backend> {
 protected:
  void SetUp() override;
  BlobStore& store() { return *store_; }
  internal::FakeClock& clock() { return clock_; }
  // False for servers with their own clock: tests that move time are skipped.
  bool controls_clock() const { return GetParam().fake_clock(); }
  // Azurite: skip the single assertions where it deviates from Azure (each
  // skip names the Azurite issue).
  bool azurite() const { return GetParam().azurite(); }
  // Lease helpers: puts `name` into a lease state (an enum of the .cc file)
  // with lease id A, and reads a blob's lease state.
  void Prepare(const std::string& name, int start);
  LeaseState StateOf(const std::string& name);

  internal::FakeClock clock_;
  std::shared_ptr<BlobStore> store_;
};

}  // namespace blobtable::testing

#endif  // BLOBTABLE_TESTS_BLOB_STORE_CONFORMANCE_H_
