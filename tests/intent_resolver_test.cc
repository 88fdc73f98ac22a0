// SPDX-License-Identifier: Apache-2.0
// Deciding a stalled transaction aborted (txn/intent_resolver.h), when the
// record it meets is there and then gone: the transaction was decided and
// finished by someone else between the two requests (seen once in CI, where
// a reader's commit then failed with Unavailable).
#include "txn/intent_resolver.h"

#include <gtest/gtest.h>

#include "blobtable/blob_store.h"
#include "tests/test_util.h"
#include "txn/txn_record.h"

namespace blobtable::testing {
namespace {
using namespace internal;

// Answers the creation of a record with Conflict, as if another client's
// record stood there, and writes nothing: by the time the caller reads the
// record, that client has finished the transaction and deleted it.
class RecordFinishedMeanwhile final : public BlobStoreWrapper {
 public:
  using BlobStoreWrapper::BlobStoreWrapper;
  Result<WriteResult> Put(std::string_view name, std::string_view data,
                          const PutOptions& o) override {
    if (name == RecordBlobName("t1") && o.conditions.if_none_match)
      return Status::Conflict("the record exists (BlobAlreadyExists)");
    return BlobStoreWrapper::Put(name, data, o);
  }
};

class IntentResolverTest : public ::testing::Test {
 protected:
  void SetUp() override { local_ = *OpenLocalBlobStore(dir_.path()); }
  TempDir dir_;
  std::shared_ptr<BlobStore> local_;
};

TEST_F(IntentResolverTest, ARecordGoneAfterStoppingTheAbortMeansReadAgainNotUnavailable) {
  RecordFinishedMeanwhile blobs(local_);
  auto outcome = DecideAbort(blobs, "t1");
  ASSERT_TRUE(outcome.ok()) << outcome.status().ToString();
  EXPECT_EQ(*outcome, Outcome::kUndecided) << "the caller reads the entity again";
}

TEST_F(IntentResolverTest, TheRecordThatStandsDecides) {
  TxnRecord committed;
  committed.txn_id = "t2";
  committed.state = TxnState::kCommitted;
  ASSERT_TRUE(local_->Put(RecordBlobName("t2"), EncodeRecord(committed), {}).ok());
  auto outcome = DecideAbort(*local_, "t2");
  ASSERT_TRUE(outcome.ok()) << outcome.status().ToString();
  EXPECT_EQ(*outcome, Outcome::kCommitted) << "its commit point got there first";

  outcome = DecideAbort(*local_, "t3");
  ASSERT_TRUE(outcome.ok()) << outcome.status().ToString();
  EXPECT_EQ(*outcome, Outcome::kAborted);
  EXPECT_EQ(*OutcomeOf(*local_, "t3"), Outcome::kAborted);
}

}  // namespace
}  // namespace blobtable::testing
