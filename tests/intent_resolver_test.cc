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

// X2 of docs/protocol.md: a decider rewrites a pending record aborted,
// If-Match the pending version that the commit point is conditional on, so
// the commit point fails however late it comes, even once the aborted
// record is deleted (no clock decides when that may be).
TEST_F(IntentResolverTest, AbortingAPendingRecordFencesItsCommitPointForGood) {
  TxnRecord pending;
  pending.txn_id = "t4";
  pending.state = TxnState::kPending;
  pending.writes = {{"t/a/e/-p/-x", ""}};
  pending.locks = {"t/a/l/-p"};
  auto created = local_->Put(RecordBlobName("t4"), EncodeRecord(pending), {});
  ASSERT_TRUE(created.ok());
  EXPECT_EQ(*OutcomeOf(*local_, "t4"), Outcome::kUndecided);
  auto outcome = DecideAbort(*local_, "t4");
  ASSERT_TRUE(outcome.ok()) << outcome.status().ToString();
  EXPECT_EQ(*outcome, Outcome::kAborted);
  TxnRecord aborted;
  ASSERT_EQ(*OutcomeOf(*local_, "t4", &aborted), Outcome::kAborted);
  EXPECT_EQ(aborted.writes.size(), 1u) << "it still names what the transaction may hold";
  EXPECT_EQ(aborted.locks, pending.locks);
  ASSERT_TRUE(local_->Delete(RecordBlobName("t4"), {}).ok());
  TxnRecord committed = pending;
  committed.state = TxnState::kCommitted;
  PutOptions commit_point;
  commit_point.conditions.if_match = created->etag;
  EXPECT_FALSE(local_->Put(RecordBlobName("t4"), EncodeRecord(committed), commit_point).ok())
      << "a commit point arriving after the aborted record was deleted";
}

// X1: one intent names one attempt. A committed record commits the intent
// it names on a blob, and no other intent of that transaction there.
TEST_F(IntentResolverTest, ACommittedRecordCommitsOnlyTheIntentsItNames) {
  TxnRecord committed;
  committed.txn_id = "t5";
  committed.state = TxnState::kCommitted;
  committed.writes = {{"t/a/e/-p/-x", "\"e2\""}};
  EXPECT_EQ(OutcomeOfIntent(Outcome::kCommitted, committed, "t/a/e/-p/-x", "\"e2\""),
            Outcome::kCommitted);
  EXPECT_EQ(OutcomeOfIntent(Outcome::kCommitted, committed, "t/a/e/-p/-x", "\"e1\""),
            Outcome::kAborted)
      << "an earlier attempt on the blob borrowed a later decision";
  EXPECT_EQ(OutcomeOfIntent(Outcome::kCommitted, committed, "t/a/e/-p/-y", "\"e3\""),
            Outcome::kAborted);
  EXPECT_EQ(OutcomeOfIntent(Outcome::kUndecided, committed, "t/a/e/-p/-x", "\"e2\""),
            Outcome::kUndecided);
  // Encoded and read back, format 3 keeps what each field says.
  committed.locks = {"t/a/l/-p/3"};
  auto back = DecodeRecord(EncodeRecord(committed), "x/t5");
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->writes[0].intent_etag, "\"e2\"");
  EXPECT_EQ(back->locks, committed.locks);
  committed.locks = {"t/a/e/-p/-x"};  // not a lock blob
  EXPECT_TRUE(DecodeRecord(EncodeRecord(committed), "x/t5").status().IsCorruption());
}

}  // namespace
}  // namespace blobtable::testing
