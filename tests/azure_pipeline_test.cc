// SPDX-License-Identifier: Apache-2.0
// The Azure backend's policies one at a time (storage/azure/pipeline.h,
// retry.h), each in front of a scripted fake next hop: authentication, the
// request log, the refusal of redirects and cut answers, the chain's order,
// and the retry budget (attempts, waits on a fake clock, deadlines, refused
// connections, what may have been applied).
#include <gtest/gtest.h>

#include <deque>
#include <utility>
#include <vector>

#include "blobtable/storage_options.h"
#include "storage/azure/azure_config.h"
#include "storage/azure/pipeline.h"
#include "storage/azure/retry.h"
#include "storage/azure/shared_key.h"
#include "storage/storage_errors.h"
#include "util/backoff.h"
#include "util/base64.h"
#include "testing/fake_clock.h"

namespace blobtable::internal::azure {
namespace {

using std::chrono::milliseconds;

// The next hop: answers from a script (then 200 with an ETag), records what
// reached it, and can take time on a fake clock: `takes`, or each request's
// whole timeout (`times_out`: nobody answered for that long).
class ScriptedHop final : public HttpTransport {
 public:
  std::string_view name() const override { return "scripted"; }
  Result<HttpResponse> Send(const HttpRequest& r) override {
    requests.push_back(r);
    if (clock != nullptr) clock->Advance(times_out ? r.timeout : takes);
    if (script.empty()) return Answer(200, {{"etag", "\"0x1\""}});
    Result<HttpResponse> next = std::move(script.front());
    script.pop_front();
    return next;
  }
  // As Azure Storage answers: with a request id.
  static HttpResponse Answer(int status, std::map<std::string, std::string> headers = {}) {
    HttpResponse r;
    r.status = status;
    r.headers = std::move(headers);
    r.headers.emplace("x-ms-request-id", "r1");
    return r;
  }
  static Status Refused() {
    return Status::FromStorage(Code::kUnavailable, 0, kNotSent, "connection refused");
  }
  static Status Lost() { return Status::Unavailable("connection reset"); }

  std::deque<Result<HttpResponse>> script;
  std::vector<HttpRequest> requests;
  const FakeClock* clock = nullptr;
  milliseconds takes{0};
  bool times_out = false;
};

AzureConfig DevConfig() { return *ParseConnectionString("UseDevelopmentStorage=true"); }

HttpRequest SomeRequest(const char* url = "http://127.0.0.1:10000/devstoreaccount1/c/b") {
  HttpRequest r;
  r.method = "PUT";
  r.url = url;
  r.headers = {{"x-ms-version", "2026-02-06"}, {"x-ms-date", "Mon, 01 Jan 2024 00:00:00 GMT"}};
  return r;
}

// ---- AuthPolicy ----

TEST(AuthPolicy, SharedKeySignsWhatGoesOutAsItsLastHeader) {
  ScriptedHop hop;
  HttpRequest r = SomeRequest();
  const HttpRequest unsigned_copy = r;
  ASSERT_TRUE(AuthPolicy(DevConfig()).Send(r, {"PUT", "b"}, NextHop(hop)).ok());
  ASSERT_EQ(hop.requests.size(), 1u);
  const auto& sent = hop.requests[0].headers;
  ASSERT_EQ(sent.size(), unsigned_copy.headers.size() + 1);
  EXPECT_EQ(sent.back().first, "Authorization");
  EXPECT_EQ(sent.back().second,
            "SharedKey devstoreaccount1:" +
                SharedKeySignature(*Base64Decode(kDevAccountKey),
                                   SharedKeyStringToSign(unsigned_copy, "devstoreaccount1")));
  EXPECT_EQ(hop.requests[0].url, unsigned_copy.url);
}

TEST(AuthPolicy, SasGoesIntoTheUrlAndNoHeaderIsAdded) {
  AzureConfig sas =
      *ParseConnectionString("BlobEndpoint=http://h/acct;SharedAccessSignature=sv=1&sig=S");
  ScriptedHop hop;
  HttpRequest plain = SomeRequest("http://h/acct/c/b");
  ASSERT_TRUE(AuthPolicy(sas).Send(plain, {"PUT", "b"}, NextHop(hop)).ok());
  HttpRequest queried = SomeRequest("http://h/acct/c/b?comp=lease");
  ASSERT_TRUE(AuthPolicy(sas).Send(queried, {"PUT", "b"}, NextHop(hop)).ok());
  EXPECT_EQ(hop.requests[0].url, "http://h/acct/c/b?sv=1&sig=S");
  EXPECT_EQ(hop.requests[1].url, "http://h/acct/c/b?comp=lease&sv=1&sig=S");
  for (const auto& sent : hop.requests) EXPECT_EQ(sent.headers, SomeRequest().headers);
}

TEST(AuthPolicy, AHeaderWithALineBreakIsRefusedAndNothingIsSent) {
  // An ETag given as If-Match, with a header of its own after a CRLF: sent
  // over SAS (no signature to break), it added that header to the blob.
  AzureConfig sas =
      *ParseConnectionString("BlobEndpoint=http://h/acct;SharedAccessSignature=sv=1&sig=S");
  for (const AzureConfig& config : {sas, DevConfig()}) {
    ScriptedHop hop;
    HttpRequest r = SomeRequest();
    r.headers.emplace_back("If-Match", "\"0x1\"\r\nx-ms-meta-injected: yes");
    Result<HttpResponse> sent = AuthPolicy(config).Send(r, {"PUT", "b"}, NextHop(hop));
    EXPECT_TRUE(sent.status().IsInvalidArgument()) << sent.status().ToString();
    EXPECT_NE(sent.status().message().find("If-Match"), std::string::npos);
    EXPECT_EQ(sent.status().storage_code(), kNotSent);  // no write may have been applied
    EXPECT_TRUE(hop.requests.empty());
  }
}

// ---- LogPolicy ----

TEST(LogPolicy, OneLinePerAttemptWithWhatCameBackAndHowLong) {
  FakeClock clock;
  ScriptedHop hop;
  hop.clock = &clock;
  hop.takes = milliseconds(3);
  hop.script = {ScriptedHop::Answer(412, {{"x-ms-error-code", "ConditionNotMet"}}),
                ScriptedHop::Lost()};
  std::vector<std::string> lines;
  LogPolicy log([&](const std::string& line) { lines.push_back(line); }, clock);
  HttpRequest r = SomeRequest();
  EXPECT_EQ(log.Send(r, {"PUT", "t/orders/e/-p/-r", 1}, NextHop(hop))->status, 412);
  EXPECT_EQ(log.Send(r, {"PUT", "t/orders/e/-p/-r", 2}, NextHop(hop)).status().code(),
            Code::kUnavailable);
  EXPECT_EQ(lines, (std::vector<std::string>{
                       "blobtable: PUT t/orders/e/-p/-r -> 412 ConditionNotMet 3.0 ms attempt 1",
                       "blobtable: PUT t/orders/e/-p/-r -> no response (Unavailable) 3.0 ms "
                       "attempt 2"}));
}

TEST(LogPolicy, WithoutACallbackItOnlyPassesTheAnswerOn) {
  FakeClock clock;
  ScriptedHop hop;
  HttpRequest r = SomeRequest();
  EXPECT_EQ(LogPolicy(nullptr, clock).Send(r, {"GET", "b"}, NextHop(hop))->status, 200);
  EXPECT_EQ(hop.requests.size(), 1u);
}

TEST(LogPolicy, TheLineHoldsNoUrlHeaderOrBody) {
  HttpResponse answer = ScriptedHop::Answer(201, {{"etag", "\"0x1\""}});
  answer.body = "BODY";
  EXPECT_EQ(LogLine({"LEASE-ACQUIRE", "c/locks/-x", 3}, 12.345, answer),
            "blobtable: LEASE-ACQUIRE c/locks/-x -> 201 12.3 ms attempt 3");
  EXPECT_EQ(LogLine({"CREATE-CONTAINER", "", 1}, 0, Status::InvalidArgument("x")),
            "blobtable: CREATE-CONTAINER  -> no response (InvalidArgument) 0.0 ms attempt 1");
}

// ---- RefusalPolicy ----

Result<HttpResponse> Through(const RefusalPolicy& p, const char* op, Result<HttpResponse> answer) {
  ScriptedHop hop;
  hop.script = {std::move(answer)};
  HttpRequest r = SomeRequest();
  return p.Send(r, {op, "b"}, NextHop(hop));
}

TEST(RefusalPolicy, RedirectsAreErrorsNamingTheHost) {
  RefusalPolicy p;
  auto moved = Through(
      p, "GET", ScriptedHop::Answer(302, {{"location", "https://other.example:8443/c/b?x"}}));
  EXPECT_EQ(moved.status().code(), Code::kInvalidArgument);
  EXPECT_EQ(moved.status().storage_code(), "Redirect");
  EXPECT_EQ(moved.status().http_status(), 302);
  EXPECT_EQ(moved.status().message(),
            "GET 'b': the service redirected it to 'other.example:8443'; blobtable follows no "
            "redirects (check the endpoint)");
  auto unnamed = Through(p, "DELETE", ScriptedHop::Answer(307));
  EXPECT_NE(unnamed.status().message().find("an unnamed location"), std::string::npos);
  // 304 is a conditional read's answer, not a redirect.
  EXPECT_EQ(Through(p, "GET", ScriptedHop::Answer(304))->status, 304);
}

// Issue 56 (found by the review): a web server's 200 page read as an empty
// listing, an empty store. An answer below 500 without Azure's request id
// (or error code) is no store; a 5xx without one stays transient.
TEST(RefusalPolicy, AnAnswerWithoutAzuresRequestIdIsNoStore) {
  RefusalPolicy p;
  for (int status : {200, 201, 304, 404}) {
    HttpResponse page;
    page.status = status;
    page.headers["content-type"] = "text/html";
    auto r = Through(p, "LIST", page);
    EXPECT_EQ(r.status().code(), Code::kInvalidArgument) << status;
    EXPECT_EQ(r.status().storage_code(), kStoreNotFound) << status;
  }
  HttpResponse busy;
  busy.status = 503;
  EXPECT_EQ(Through(p, "GET", busy)->status, 503);
  HttpResponse coded;
  coded.status = 403;
  coded.headers["x-ms-error-code"] = "AuthenticationFailed";
  EXPECT_EQ(Through(p, "GET", coded)->status, 403);
}

TEST(RefusalPolicy, ASuccessWithoutItsETagIsNoAnswer) {
  RefusalPolicy p;
  for (const char* op : {"PUT", "SET-METADATA", "GET", "HEAD", "LEASE-ACQUIRE", "LEASE-BREAK"}) {
    auto cut = Through(p, op, ScriptedHop::Answer(201));
    EXPECT_EQ(cut.status().code(), Code::kUnavailable) << op;
    EXPECT_NE(cut.status().message().find("the answer was cut short (HTTP 201 without an ETag)"),
              std::string::npos)
        << cut.status().message();
    EXPECT_EQ(Through(p, op, ScriptedHop::Answer(201, {{"etag", "\"0x1\""}}))->status, 201);
    EXPECT_EQ(Through(p, op, ScriptedHop::Answer(404))->status, 404);  // errors carry none
  }
  // Answers that carry no ETag anyway.
  for (const char* op : {"DELETE", "LIST", "CREATE-CONTAINER"})
    EXPECT_EQ(Through(p, op, ScriptedHop::Answer(202))->status, 202) << op;
  EXPECT_EQ(Through(p, "PUT", ScriptedHop::Lost()).status().message(), "connection reset");
}

// ---- The chain ----

TEST(Pipeline, SignsThenLogsWhatTheRefusalsMadeOfTheAnswer) {
  FakeClock clock;
  auto hop = std::make_shared<ScriptedHop>();
  hop->script = {ScriptedHop::Answer(201), ScriptedHop::Answer(301)};
  std::vector<std::string> lines;
  Pipeline pipeline(
      DevConfig(), hop, [&](const std::string& l) { lines.push_back(l); }, clock);
  HttpRequest r = SomeRequest();
  EXPECT_EQ(pipeline.Start().Send(r, {"PUT", "b", 1}).status().code(), Code::kUnavailable);
  HttpRequest again = SomeRequest();
  EXPECT_EQ(pipeline.Start().Send(again, {"PUT", "b", 2}).status().storage_code(), "Redirect");
  ASSERT_EQ(hop->requests.size(), 2u);
  EXPECT_EQ(hop->requests[0].headers.back().first, "Authorization");
  EXPECT_EQ(lines, (std::vector<std::string>{
                       "blobtable: PUT b -> no response (Unavailable) 0.0 ms attempt 1",
                       "blobtable: PUT b -> no response (InvalidArgument) 0.0 ms attempt 2"}));
}

// ---- RetryBudgetPolicy ----

uint64_t FixedRandom() { return 12345; }

// A retry budget on a fake clock that records its waits, and a call that
// counts the requests it builds.
struct RetryHarness {
  FakeClock clock;
  ScriptedHop hop;
  std::vector<milliseconds> sleeps;
  RetryPolicy policy = AzureOptions::DefaultStorageRetry();
  milliseconds request_timeout{1'000};
  int built = 0;

  RetryHarness() {
    hop.clock = &clock;
    policy.max_attempts = 4;
    policy.initial_delay = milliseconds(100);
    policy.max_delay = milliseconds(1'000);
    policy.max_total = milliseconds(10'000);
    clock.set_sleep([this](milliseconds d) {
      sleeps.push_back(d);
      clock.Advance(d);
    });
  }
  Call MakeCall(const char* op = "PUT", bool once_maybe_applied = false) {
    return {op, "b",
            [this] {
              ++built;
              return SomeRequest();
            },
            once_maybe_applied};
  }
  RetryBudgetPolicy Retry() const { return {policy, request_timeout, clock, &FixedRandom}; }
  Outcome Send(const Call& call, Budget& budget, bool follow_up = false) {
    return Retry().Send(call, budget, NextHop(hop), follow_up);
  }
  Outcome Send(const Call& call) {
    Budget budget = Retry().NewBudget();
    return Send(call, budget);
  }
};

TEST(RetryBudgetPolicy, RetriesTransientAnswersWithBackoffWaits) {
  RetryHarness h;
  h.hop.script = {ScriptedHop::Answer(503), ScriptedHop::Refused(), ScriptedHop::Answer(429)};
  Outcome out = h.Send(h.MakeCall());
  ASSERT_TRUE(out.response.ok());
  EXPECT_EQ(out.response->status, 200);
  EXPECT_EQ(out.attempts, 4);
  EXPECT_FALSE(out.unseen);  // 503, a refused connection, 429: none was applied
  EXPECT_EQ(h.built, 4);     // a fresh request (date, id, signature) for each attempt
  EXPECT_EQ(h.sleeps, (std::vector<milliseconds>{BackoffDelay(h.policy, 1, 12345),
                                                 BackoffDelay(h.policy, 2, 12345),
                                                 BackoffDelay(h.policy, 3, 12345)}));
  for (const HttpRequest& r : h.hop.requests) EXPECT_EQ(r.timeout, h.request_timeout);
}

TEST(RetryBudgetPolicy, StopsAtMaxAttemptsWithTheLastAnswer) {
  RetryHarness h;
  h.hop.script = {ScriptedHop::Answer(503), ScriptedHop::Answer(502), ScriptedHop::Answer(503),
                  ScriptedHop::Answer(500), ScriptedHop::Answer(503)};
  Outcome out = h.Send(h.MakeCall());
  EXPECT_EQ(out.attempts, 4);
  EXPECT_EQ(out.response->status, 500);
  EXPECT_EQ(h.sleeps.size(), 3u);
}

TEST(RetryBudgetPolicy, AnswersRetryingCannotFixAreNotRetried) {
  for (int status : {200, 304, 400, 403, 404, 409, 412}) {
    RetryHarness h;
    h.hop.script = {ScriptedHop::Answer(status, {{"etag", "\"0x1\""}})};
    Outcome out = h.Send(h.MakeCall());
    EXPECT_EQ(out.attempts, 1) << status;
    EXPECT_TRUE(h.sleeps.empty());
  }
  RetryHarness h;
  h.hop.script = {Status::InvalidArgument("TLS certificate verification")};
  EXPECT_EQ(h.Send(h.MakeCall()).attempts, 1);
}

TEST(RetryBudgetPolicy, ARefusedConnectionEndsAReadThatHasAFallback) {
  RetryHarness h;
  h.hop.script = {ScriptedHop::Refused()};
  Budget budget = h.Retry().NewBudget(std::nullopt, /*give_up_if_refused=*/true);
  Outcome out = h.Send(h.MakeCall("GET"), budget);
  EXPECT_EQ(out.attempts, 1);
  EXPECT_EQ(out.response.status().storage_code(), kNotSent);
  h.hop.script = {ScriptedHop::Lost()};  // no answer, but sent: retried even so
  EXPECT_EQ(h.Send(h.MakeCall("GET"), budget).attempts, 2);
}

TEST(RetryBudgetPolicy, WaitsAndTimeoutsStayWithinMaxTotal) {
  RetryHarness h;
  h.policy.max_total = milliseconds(2'500);
  h.hop.times_out = true;
  h.hop.script = {ScriptedHop::Lost(), ScriptedHop::Lost(), ScriptedHop::Lost()};
  const SteadyTime start = h.clock.Steady();
  Outcome out = h.Send(h.MakeCall());
  // 1 s, a wait, 1 s: a third attempt would not fit.
  EXPECT_EQ(out.attempts, 2);
  EXPECT_LE(h.clock.Steady() - start, h.policy.max_total);
  EXPECT_TRUE(out.unseen);  // the first attempt's answer was lost
}

TEST(RetryBudgetPolicy, TheCallersDeadlineCutsAttemptsAndStartsNoneAfterIt) {
  RetryHarness h;
  h.hop.times_out = true;
  h.hop.script = {ScriptedHop::Lost(), ScriptedHop::Lost(), ScriptedHop::Lost()};
  const SteadyTime start = h.clock.Steady();
  Budget budget = h.Retry().NewBudget(start + milliseconds(1'500));
  Outcome out = h.Send(h.MakeCall("GET"), budget);
  // The first attempt gets the whole request timeout, the second what is
  // left after it and a wait; none starts after the deadline.
  ASSERT_EQ(h.hop.requests.size(), 2u);
  ASSERT_EQ(h.sleeps.size(), 1u);
  EXPECT_EQ(h.hop.requests[0].timeout, h.request_timeout);
  EXPECT_EQ(h.hop.requests[1].timeout, milliseconds(500) - h.sleeps[0]);
  EXPECT_EQ(out.response.status().code(), Code::kUnavailable);
  EXPECT_EQ(h.clock.Steady(), start + milliseconds(1'500));
  // A deadline already past sends nothing.
  Budget late = h.Retry().NewBudget(h.clock.Steady());
  Outcome none = h.Send(h.MakeCall("GET"), late);
  EXPECT_EQ(none.attempts, 0);
  EXPECT_EQ(none.response.status().message(),
            "GET 'b': the caller's deadline passed before an attempt");
  EXPECT_EQ(h.hop.requests.size(), 2u);
}

TEST(RetryBudgetPolicy, AFollowUpIsSentOnlyIfAWholeAttemptFits) {
  RetryHarness h;
  Budget budget = h.Retry().NewBudget();
  h.clock.Advance(h.policy.max_total - h.request_timeout);
  EXPECT_EQ(h.Send(h.MakeCall("HEAD"), budget, /*follow_up=*/true).attempts, 1);
  h.clock.Advance(milliseconds(1));
  Outcome out = h.Send(h.MakeCall("HEAD"), budget, /*follow_up=*/true);
  EXPECT_EQ(out.attempts, 0);
  EXPECT_EQ(out.response.status().message(), "no time left in the retry budget for HEAD");
  EXPECT_EQ(h.hop.requests.size(), 1u);
}

TEST(RetryBudgetPolicy, ACreateIsNotSentAgainAfterAnAttemptThatMayHaveBeenApplied) {
  for (Result<HttpResponse> maybe :
       {Result<HttpResponse>(ScriptedHop::Lost()), Result<HttpResponse>(ScriptedHop::Answer(500)),
        Result<HttpResponse>(ScriptedHop::Answer(504))}) {
    RetryHarness h;
    h.hop.script = {maybe};
    Outcome out = h.Send(h.MakeCall("PUT", /*once_maybe_applied=*/true));
    EXPECT_EQ(out.attempts, 1);
    EXPECT_TRUE(h.sleeps.empty());
  }
  RetryHarness h;  // never sent, or surely refused: sent again
  h.hop.script = {ScriptedHop::Refused(), ScriptedHop::Answer(503)};
  EXPECT_EQ(h.Send(h.MakeCall("PUT", /*once_maybe_applied=*/true)).attempts, 3);
}

TEST(RetryBudgetPolicy, AnAnswerToATransportsOwnResendIsUnseen) {
  RetryHarness h;
  HttpResponse resent = ScriptedHop::Answer(412);
  resent.resent = true;
  h.hop.script = {resent};
  Outcome out = h.Send(h.MakeCall());
  EXPECT_EQ(out.attempts, 1);
  EXPECT_TRUE(out.unseen);
}

TEST(RetryBudgetPolicy, WhatMayHaveBeenApplied) {
  EXPECT_TRUE(MayHaveBeenApplied(ScriptedHop::Lost()));
  EXPECT_TRUE(MayHaveBeenApplied(ScriptedHop::Answer(500)));
  EXPECT_TRUE(MayHaveBeenApplied(ScriptedHop::Answer(504)));
  EXPECT_FALSE(MayHaveBeenApplied(ScriptedHop::Refused()));
  for (int s : {200, 408, 409, 412, 429, 502, 503})
    EXPECT_FALSE(MayHaveBeenApplied(ScriptedHop::Answer(s))) << s;
}

TEST(HttpRetry, RetryableStatusesAndDefaults) {
  for (int s : {408, 429, 500, 502, 503, 504}) EXPECT_TRUE(IsRetryableHttpStatus(s)) << s;
  for (int s : {200, 304, 400, 403, 404, 409, 412}) EXPECT_FALSE(IsRetryableHttpStatus(s)) << s;
  RetryPolicy p = AzureOptions::DefaultStorageRetry();
  EXPECT_EQ(p.max_attempts, 5);
  EXPECT_EQ(p.initial_delay, milliseconds(200));
  EXPECT_EQ(p.max_delay, milliseconds(8'000));
  EXPECT_EQ(p.max_total, milliseconds(60'000));
  EXPECT_TRUE(ValidateRetryPolicy(p).ok());
}

}  // namespace
}  // namespace blobtable::internal::azure
