// SPDX-License-Identifier: Apache-2.0
// The Azure backend's response mapping (storage/azure/responses.h) and the
// write-id check after lost answers (storage/azure/write_check.h), tested by
// answers: what each status, header and body means for a BlobStore call,
// and what a write, delete or lease action says after an attempt whose
// answer was lost, with a scripted HEAD.
#include <gtest/gtest.h>

#include <utility>

#include "storage/azure/responses.h"
#include "storage/azure/write_check.h"
#include "util/stored_format.h"

namespace blobtable::internal::azure {
namespace {

HttpResponse Answer(int status, std::map<std::string, std::string> headers = {},
                    std::string body = "") {
  HttpResponse r;
  r.status = status;
  r.headers = std::move(headers);
  r.body = std::move(body);
  return r;
}

// As Azure Storage answers: with its error code and a request id.
HttpResponse WithCode(int status, const char* code) {
  return Answer(status, {{"x-ms-error-code", code}, {"x-ms-request-id", "r1"}});
}

// ---- Status and error code ----

// Issue 56 item 5: a 404 that is not Azure Storage's "no such blob" (an
// endpoint that is not Azure Storage, an account it does not have) was
// NotFound, which reads as an empty store.
TEST(AzureResponses, A404ThatIsNotAMissingBlobSaysNoStoreIsThere) {
  for (const HttpResponse& r : {Answer(404), WithCode(404, "ResourceNotFound"),
                                Answer(404, {{"x-ms-error-code", "BlobNotFound"}})}) {
    Status s = ErrorOf(r, "blob 'b'");
    EXPECT_EQ(s.code(), Code::kInvalidArgument) << s.ToString();
    EXPECT_EQ(s.storage_code(), kStoreNotFound) << s.ToString();
  }
  EXPECT_EQ(ErrorOf(WithCode(404, "BlobNotFound"), "blob 'b'").code(), Code::kNotFound);
  EXPECT_EQ(BlobErrorOf(WithCode(404, "ContainerNotFound"), "b", "c").code(), Code::kNotFound);
}

TEST(AzureResponses, ErrorsCarryTheServicesCodeAndTheFirstLineOfItsMessage) {
  Status header = ErrorOf(WithCode(412, "ConditionNotMet"), "blob 'b'");
  EXPECT_EQ(header.code(), Code::kConflict);
  EXPECT_EQ(header.http_status(), 412);
  EXPECT_EQ(header.storage_code(), "ConditionNotMet");
  EXPECT_EQ(header.message(), "blob 'b': HTTP 412");
  Status body = ErrorOf(Answer(409, {},
                               "<?xml version=\"1.0\"?><Error><Code>LeaseAlreadyPresent</Code>"
                               "<Message>There is already a lease.\nRequestId:1</Message></Error>"),
                        "lease on blob 'b'");
  EXPECT_EQ(body.code(), Code::kBusy);
  EXPECT_EQ(body.storage_code(), "LeaseAlreadyPresent");
  EXPECT_EQ(body.message(), "lease on blob 'b': There is already a lease.");
  // A failed authentication never passes Azure's message on: it can quote
  // the string it signed.
  Status auth = ErrorOf(Answer(403, {{"x-ms-error-code", "AuthenticationFailed"}},
                               "<Error><Message>string to sign: 'PUT\n...'</Message></Error>"),
                        "x");
  EXPECT_EQ(auth.code(), Code::kInvalidArgument);
  EXPECT_EQ(auth.message(),
            "x: authentication failed: check the AccountKey or SharedAccessSignature");
  EXPECT_EQ(ErrorOf(Answer(503), "x").code(), Code::kUnavailable);
}

TEST(AzureResponses, AMissingContainerHoldsNoBlobs) {
  const HttpResponse missing = WithCode(404, "ContainerNotFound");
  EXPECT_TRUE(ContainerMissing(missing));
  EXPECT_FALSE(ContainerMissing(WithCode(404, "BlobNotFound")));
  EXPECT_FALSE(ContainerMissing(Answer(404)));
  Status blob = BlobErrorOf(missing, "t/b", "tables");
  EXPECT_EQ(blob.code(), Code::kNotFound);
  EXPECT_EQ(blob.storage_code(), "BlobNotFound");
  EXPECT_EQ(blob.message(),
            "blob 't/b': does not exist (nothing was written to container 'tables' yet)");
  Status lease =
      BlobErrorOf(WithCode(409, "LeaseIdMismatchWithLeaseOperation"), "b", "tables", "lease on ");
  EXPECT_EQ(lease.code(), Code::kLeaseLost);
  EXPECT_EQ(lease.message(), "lease on blob 'b': HTTP 409");
}

TEST(AzureResponses, CreatingTheContainerSucceedsIfItIsThereAfter) {
  EXPECT_TRUE(ContainerCreated(Answer(201), "tables").ok());
  EXPECT_TRUE(ContainerCreated(WithCode(409, "ContainerAlreadyExists"), "tables").ok());
  Status refused = ContainerCreated(WithCode(403, "AuthorizationFailure"), "tables");
  EXPECT_EQ(refused.code(), Code::kInvalidArgument);
  EXPECT_EQ(refused.message().rfind("creating container tables: ", 0), 0u) << refused.message();
}

// ---- Properties, reads, writes, leases ----

TEST(AzureResponses, PropertiesFromHeadersWithTheWriteIdHidden) {
  auto p = PropertiesOf(Answer(200, {{"etag", "0x8D1"},
                                     {"last-modified", "Sun, 06 Nov 1994 08:49:37 GMT"},
                                     {"content-length", "42"},
                                     {"content-md5", "MD5=="},
                                     {"x-ms-meta-k", "v"},
                                     {"x-ms-meta-blobtablewriteid", "wid"},
                                     {"x-ms-lease-state", "leased"},
                                     {"x-ms-lease-status", "locked"},
                                     {"x-ms-lease-duration", "infinite"}}));
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_EQ(p->etag, "\"0x8D1\"");
  EXPECT_EQ(p->last_modified, TimePoint(std::chrono::seconds(784111777)));
  EXPECT_EQ(p->content_length, 42u);
  EXPECT_EQ(p->content_md5, "MD5==");
  EXPECT_EQ(p->metadata, (Metadata{{"k", "v"}}));
  EXPECT_EQ(p->lease_state, LeaseState::kLeased);
  EXPECT_EQ(p->lease_status, LeaseStatus::kLocked);
  EXPECT_EQ(p->lease_duration, LeaseDurationType::kInfinite);
  auto bare = PropertiesOf(Answer(200));
  ASSERT_TRUE(bare.ok());
  EXPECT_EQ(bare->lease_state, LeaseState::kAvailable);
  EXPECT_EQ(bare->lease_status, LeaseStatus::kUnlocked);
  for (const char* length : {"12abc", "-1", "", "99999999999999999999999"})
    EXPECT_EQ(PropertiesOf(Answer(200, {{"content-length", length}})).status().code(),
              Code::kCorruption)
        << length;
}

TEST(AzureResponses, ReadsKeepTheBodyOfAGetOnly) {
  HttpResponse got = Answer(200, {{"etag", "\"0x1\""}}, "body");
  auto get = ReadResultOf(got, "GET", "b", {}, "tables");
  ASSERT_TRUE(get.ok());
  EXPECT_EQ(get->data, "body");
  EXPECT_EQ(get->properties.etag, "\"0x1\"");
  EXPECT_FALSE(get->not_modified);
  HttpResponse headed = Answer(200, {{"etag", "\"0x1\""}}, "body");
  EXPECT_TRUE(ReadResultOf(headed, "HEAD", "b", {}, "tables")->data.empty());
  HttpResponse missing = WithCode(404, "BlobNotFound");
  EXPECT_EQ(ReadResultOf(missing, "GET", "b", {}, "tables").status().code(), Code::kNotFound);
}

TEST(AzureResponses, NotModifiedNamesTheETagEvenWhenTheAnswerDoesNot) {
  AccessConditions c;
  c.if_none_match = "\"0x7\"";
  HttpResponse bare = Answer(304, {{"last-modified", "Sun, 06 Nov 1994 08:49:37 GMT"}});
  auto r = ReadResultOf(bare, "GET", "b", c, "tables");  // as Azurite answers
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->not_modified);
  EXPECT_EQ(r->properties.etag, "\"0x7\"");
  EXPECT_EQ(r->properties.last_modified, TimePoint(std::chrono::seconds(784111777)));
  HttpResponse named = Answer(304, {{"etag", "\"0x8\""}});
  EXPECT_EQ(ReadResultOf(named, "GET", "b", c, "tables")->properties.etag, "\"0x8\"");
  c.if_none_match = "*";
  HttpResponse any = Answer(304);
  EXPECT_EQ(ReadResultOf(any, "GET", "b", c, "tables")->properties.etag, "");
}

TEST(AzureResponses, WriteAndLeaseResults) {
  WriteResult w = WriteResultOf(
      Answer(201, {{"etag", "\"0x2\""}, {"last-modified", "Sun, 06 Nov 1994 08:49:37 GMT"}}));
  EXPECT_EQ(w.etag, "\"0x2\"");
  EXPECT_EQ(w.last_modified, TimePoint(std::chrono::seconds(784111777)));
  const HttpResponse leased =
      Answer(200, {{"x-ms-lease-id", "L"}, {"etag", "\"0x3\""}, {"x-ms-lease-time", "7"}});
  auto kept = LeaseResultOf(leased, /*keeps_lease_id=*/true);
  ASSERT_TRUE(kept.ok());
  EXPECT_EQ(kept->lease_id, "L");
  EXPECT_EQ(kept->etag, "\"0x3\"");
  EXPECT_EQ(kept->lease_time_seconds, 7);
  EXPECT_EQ(LeaseResultOf(leased, /*keeps_lease_id=*/false)->lease_id, "");
  for (const char* seconds : {"abc", "99999999999999999999"})
    EXPECT_EQ(LeaseResultOf(Answer(202, {{"x-ms-lease-time", seconds}}), false).status().code(),
              Code::kCorruption);
}

// ---- Lost answers and write ids ----

Outcome Seen(Result<HttpResponse> r, int attempts = 1) { return {std::move(r), attempts, false}; }
Outcome AfterLost(Result<HttpResponse> r, int attempts = 2) {
  return {std::move(r), attempts, true};
}

// A HEAD for the check, counted.
struct ScriptedHead {
  Result<HttpResponse> answer = Status::Internal("no HEAD expected");
  int sent = 0;
  HeadNow Fn() {
    return [this] {
      ++sent;
      return Outcome{answer, 1, false};
    };
  }
};

HttpResponse Carrying(const std::string& write_id) {
  return Answer(200, {{"etag", "\"0x5\""}, {"x-ms-meta-blobtablewriteid", write_id}});
}

TEST(WriteCheck, AWriteIdOnlyForConditionalWrites) {
  EXPECT_EQ(WriteIdFor({}), "");
  AccessConditions c;
  c.if_match = "\"0x1\"";
  const std::string a = WriteIdFor(c), b = WriteIdFor(c);
  EXPECT_EQ(a.size(), 36u);
  EXPECT_NE(a, b);
}

TEST(WriteCheck, AnsweredWritesNeedNoCheck) {
  ScriptedHead head;
  auto ok = FinishWrite("b", Seen(Answer(201, {{"etag", "\"0x1\""}})), "wid", 201, head.Fn(), "c");
  ASSERT_TRUE(ok.ok());
  EXPECT_EQ(ok->etag, "\"0x1\"");
  EXPECT_EQ(FinishWrite("b", Seen(WithCode(412, "ConditionNotMet")), "wid", 201, head.Fn(), "c")
                .status()
                .code(),
            Code::kConflict);
  EXPECT_EQ(FinishWrite("b", Seen(Answer(503)), "", 201, head.Fn(), "c").status().code(),
            Code::kUnavailable);
  EXPECT_EQ(head.sent, 0);
}

TEST(WriteCheck, ARefusalAfterALostAnswerIsOursOnlyIfOurWriteIdIsOnTheBlob) {
  ScriptedHead head;
  head.answer = Carrying("wid");
  auto ours =
      FinishWrite("b", AfterLost(WithCode(409, "BlobAlreadyExists")), "wid", 201, head.Fn(), "c");
  ASSERT_TRUE(ours.ok()) << ours.status().ToString();
  EXPECT_EQ(ours->etag, "\"0x5\"");
  EXPECT_EQ(head.sent, 1);
  struct Case {
    Result<HttpResponse> head;
    const char* why;
  };
  for (Case c : {Case{Carrying("theirs"), "another write is on the blob now"},
                 Case{Answer(404), "the blob is gone now (HTTP 404)"},
                 Case{Status::Unavailable("no time left"), "no time left"}}) {
    head.answer = c.head;
    auto unknown =
        FinishWrite("b", AfterLost(WithCode(412, "ConditionNotMet")), "wid", 200, head.Fn(), "c");
    EXPECT_EQ(unknown.status().code(), Code::kOutcomeUnknown);
    EXPECT_EQ(unknown.status().message(),
              std::string("blob 'b': an earlier attempt's answer was lost and the retry was "
                          "refused (HTTP 412); whether the write was applied could not be told: ") +
                  c.why);
  }
  // Without a write id (unconditional) a refusal is what it says.
  EXPECT_EQ(
      FinishWrite("b", AfterLost(WithCode(409, "X")), "", 201, head.Fn(), "c").status().code(),
      Code::kConflict);
}

TEST(WriteCheck, AConditionalWriteThatGaveUpAfterAMaybeAppliedAttemptIsUnknownUnlessOurs) {
  for (Outcome out : {AfterLost(Answer(503), 4), Seen(Status::Unavailable("reset"), 1),
                      Seen(Answer(500), 4), Seen(Answer(504), 1)}) {
    ScriptedHead head;
    head.answer = Carrying("theirs");
    auto unknown = FinishWrite("b", out, "wid", 201, head.Fn(), "c");
    EXPECT_EQ(unknown.status().code(), Code::kOutcomeUnknown) << unknown.status().ToString();
    EXPECT_NE(unknown.status().message().find("no answer after " + std::to_string(out.attempts) +
                                              " attempt(s)"),
              std::string::npos);
    head.answer = Carrying("wid");
    EXPECT_TRUE(FinishWrite("b", out, "wid", 201, head.Fn(), "c").ok());
    // Unconditional: harmless to retry, so what it was.
    EXPECT_EQ(FinishWrite("b", out, "", 201, head.Fn(), "c").status().code(), Code::kUnavailable);
  }
  // Every attempt surely refused (503s, a connection never made): not applied.
  ScriptedHead head;
  EXPECT_EQ(FinishWrite("b", Seen(Answer(503), 4), "wid", 201, head.Fn(), "c").status().code(),
            Code::kUnavailable);
  EXPECT_EQ(
      FinishWrite("b", Seen(Status::FromStorage(Code::kUnavailable, 0, "NotSent", "refused"), 4),
                  "wid", 201, head.Fn(), "c")
          .status()
          .code(),
      Code::kUnavailable);
  EXPECT_EQ(head.sent, 0);
  EXPECT_FALSE(
      UnknownIfMaybeApplied("b", AfterLost(Answer(503)), /*conditional=*/false).has_value());
  EXPECT_FALSE(
      UnknownIfMaybeApplied("b", AfterLost(Answer(412)), /*conditional=*/true).has_value());
}

TEST(WriteCheck, ADeleteAfterALostAnswerSaysOnlyWhatIsKnown) {
  int heads = 0;
  bool gone = true;
  auto gone_now = [&] {
    ++heads;
    return gone;
  };
  EXPECT_TRUE(FinishDelete("b", Seen(Answer(202)), true, gone_now, "c").ok());
  EXPECT_TRUE(FinishDelete("b", AfterLost(Answer(404)), false, gone_now, "c").ok());
  EXPECT_EQ(FinishDelete("b", Seen(WithCode(404, "BlobNotFound")), false, gone_now, "c").code(),
            Code::kNotFound);
  Status unknown = FinishDelete("b", AfterLost(Answer(404)), true, gone_now, "c");
  EXPECT_EQ(unknown.code(), Code::kOutcomeUnknown);
  EXPECT_NE(unknown.message().find("the blob is gone now"), std::string::npos);
  EXPECT_EQ(heads, 0);  // a 404 says it
  gone = false;
  Status there =
      FinishDelete("b", AfterLost(WithCode(412, "ConditionNotMet")), true, gone_now, "c");
  EXPECT_EQ(there.code(), Code::kOutcomeUnknown);
  EXPECT_NE(there.message().find("another version is there now"), std::string::npos);
  EXPECT_EQ(heads, 1);
  EXPECT_EQ(FinishDelete("b", Seen(Answer(500), 4), true, gone_now, "c").code(),
            Code::kOutcomeUnknown);
  EXPECT_EQ(FinishDelete("b", Seen(Answer(500), 4), false, gone_now, "c").code(),
            Code::kUnavailable);
}

TEST(WriteCheck, ARetriedReleaseThatFindsNoLeaseWasReleasedByTheLostAttempt) {
  ScriptedHead head;
  head.answer = Answer(200, {{"etag", "\"0x6\""}, {"x-ms-lease-state", "available"}});
  const HttpResponse none = WithCode(409, "LeaseNotPresentWithLeaseOperation");
  auto released = FinishLease("LEASE-RELEASE", "b", AfterLost(none), 200, head.Fn(), "c");
  ASSERT_TRUE(released.ok()) << released.status().ToString();
  EXPECT_EQ(released->etag, "\"0x6\"");
  EXPECT_EQ(released->lease_id, "");
  head.answer = Answer(200, {{"etag", "\"0x6\""}, {"x-ms-lease-state", "leased"}});
  EXPECT_EQ(FinishLease("LEASE-RELEASE", "b", AfterLost(none), 200, head.Fn(), "c").status().code(),
            Code::kLeaseLost);
  EXPECT_EQ(head.sent, 2);
  EXPECT_EQ(FinishLease("LEASE-RELEASE", "b", Seen(none), 200, head.Fn(), "c").status().code(),
            Code::kLeaseLost);
  EXPECT_EQ(FinishLease("LEASE-RENEW", "b", AfterLost(none), 200, head.Fn(), "c").status().code(),
            Code::kLeaseLost);
  EXPECT_EQ(head.sent, 2);
}

TEST(WriteCheck, LeaseActionsKeepTheirIdUnlessReleasedOrBroken) {
  ScriptedHead head;
  const HttpResponse ok = Answer(200, {{"x-ms-lease-id", "L"}, {"etag", "\"0x1\""}});
  EXPECT_EQ(FinishLease("LEASE-RENEW", "b", Seen(ok), 200, head.Fn(), "c")->lease_id, "L");
  EXPECT_EQ(FinishLease("LEASE-RELEASE", "b", Seen(ok), 200, head.Fn(), "c")->lease_id, "");
  HttpResponse broken = ok;
  broken.status = 202;
  EXPECT_EQ(FinishLease("LEASE-BREAK", "b", Seen(broken), 202, head.Fn(), "c")->lease_id, "");
  EXPECT_EQ(FinishLease("LEASE-ACQUIRE", "b", Seen(Status::Unavailable("x")), 201, head.Fn(), "c")
                .status()
                .code(),
            Code::kUnavailable);
  Status busy = FinishLease("LEASE-ACQUIRE", "b", Seen(WithCode(409, "LeaseAlreadyPresent")), 201,
                            head.Fn(), "c")
                    .status();
  EXPECT_EQ(busy.code(), Code::kBusy);
  EXPECT_EQ(busy.message(), "lease on blob 'b': HTTP 409");
}

}  // namespace
}  // namespace blobtable::internal::azure
