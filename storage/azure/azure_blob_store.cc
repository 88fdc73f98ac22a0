// SPDX-License-Identifier: Apache-2.0
#include "storage/azure/azure_blob_store.h"

#include <pugixml.hpp>

#include <algorithm>
#include <charconv>
#include <ctime>
#include <optional>
#include <thread>

#include "util/backoff.h"
#include "util/digest.h"
#include "util/macros.h"
#include "util/random.h"
#include "storage/azure/azure_parsing.h"
#include "storage/azure/requests.h"
#include "storage/conditions.h"
#include "storage/lease_rules.h"
#include "storage/azure/shared_key.h"
#include "storage/storage_errors.h"
#include "util/stored_format.h"

namespace blobtable {

namespace {

using azure::Stamp;

// One storage request: how to build it (fresh for every attempt: date and
// signature change) and what to call it in the log.
struct Call {
  const char* op;         // for the log: "GET", "PUT", "LEASE-ACQUIRE", ...
  std::string_view blob;  // for the log
  std::function<HttpRequest()> build;
  // Not sent again after an attempt that may have been applied: a create
  // (If-None-Match *) re-sent after its blob was made and deleted since
  // would make it again (a completed queue item delivered anew).
  bool once_maybe_applied = false;
};

struct Outcome {
  Result<HttpResponse> response = Status::Internal("no attempt made");
  int attempts = 0;
  // An attempt before the last got no answer, or one that may mean it was
  // applied (500, 504): the last answer may be about our own earlier write.
  bool unseen = false;
};

// One operation's share of RetryPolicy::max_total: its attempts, the waits
// between them and its follow-up checks all count against it.
struct Budget {
  SteadyTime start;
  std::chrono::milliseconds slept{0};
  // A caller's deadline (ReadOptions::deadline): no attempt starts after
  // it, and an attempt's timeout is cut to what is left of it.
  std::optional<SteadyTime> deadline;
  // ReadOptions::has_fallback: a refused connection is not retried.
  bool give_up_if_refused = false;
};

class AzureBlobStore final : public BlobStore {
 public:
  explicit AzureBlobStore(AzureStoreOptions o)
      : o_(std::move(o)), target_{o_.config.blob_endpoint, o_.container} {
    if (o_.clock == nullptr) o_.clock = Clock::Real();
  }

  // Opening a store sends nothing: the container is created when a write
  // first finds it missing, within that write's budget.
  Status CreateContainerIfMissing(Budget& budget) {
    Outcome out = Execute(
        {"CREATE-CONTAINER", "", [&] { return azure::CreateContainer(target_, Stamp::Now()); }},
        budget, /*follow_up=*/true);
    if (!out.response.ok()) return out.response.status();
    const HttpResponse& r = *out.response;
    if (r.status == 201 || r.status == 409) return Status::OK();  // 409: it exists
    return ErrorOf(r, "creating container " + o_.container);
  }
  static bool ContainerMissing(const HttpResponse& r) {
    const std::string* code = r.Header("x-ms-error-code");
    return r.status == 404 && code != nullptr && *code == "ContainerNotFound";
  }
  static bool ContainerMissing(const Outcome& out) {
    return out.response.ok() && ContainerMissing(*out.response);
  }
  // Sends a write that creates a blob; if the container is missing, creates
  // it and sends the write again.
  Outcome ExecuteCreating(const Call& call, Budget& budget) {
    Outcome out = Execute(call, budget);
    if (!ContainerMissing(out)) return out;
    if (!o_.create_container) return out;  // the service's 404 ContainerNotFound
    Status made = CreateContainerIfMissing(budget);
    if (!made.ok()) {
      out.response = made;
      return out;
    }
    return Execute(call, budget, /*follow_up=*/true);
  }

  Result<GetResult> Get(std::string_view name, const ReadOptions& o) override {
    Budget budget = NewBudget();
    budget.deadline = o.deadline;
    budget.give_up_if_refused = o.has_fallback;
    return Read("GET", name, o.conditions, budget);
  }
  Result<GetResult> Head(std::string_view name, const AccessConditions& c) override {
    Budget budget = NewBudget();
    return Read("HEAD", name, c, budget);
  }

  Result<WriteResult> Put(std::string_view name, std::string_view data,
                          const PutOptions& o) override {
    BT_RETURN_IF_ERROR(ValidateBlobName(name));
    BT_RETURN_IF_ERROR(CheckUserMetadata(o.metadata));
    const std::string write_id = HasConditions(o.conditions) ? NewGuid() : "";
    // The service checks the body against it and keeps it as the blob's
    // Content-MD5 (what listings' inline copies are checked against).
    const std::string md5 = Md5Base64(data);
    Budget budget = NewBudget();
    budget.deadline = o.deadline;
    Outcome out = ExecuteCreating(
        {"PUT", name,
         [&] { return azure::PutBlob(target_, Stamp::Now(), name, data, md5, o, write_id); },
         o.conditions.if_none_match == kAnyETag},
        budget);
    return FinishWrite(name, out, budget, write_id, 201);
  }

  Status Delete(std::string_view name, const WriteOptions& o) override {
    BT_RETURN_IF_ERROR(ValidateBlobName(name));
    Budget budget = NewBudget();
    budget.deadline = o.deadline;
    Outcome out =
        Execute({"DELETE", name, [&] { return azure::DeleteBlob(target_, Stamp::Now(), name, o); }},
                budget);
    // A lease id makes a delete as conditional as an ETag does: a retry
    // that finds the blob gone may find it deleted by the next holder of
    // the lease (a work item completed by another worker).
    const bool conditional = HasConditions(o.conditions) || !o.lease_id.empty();
    if (auto unknown = UnknownIfMaybeApplied(name, out, conditional)) return *unknown;
    if (!out.response.ok()) return out.response.status();
    const HttpResponse& r = *out.response;
    if (r.status == 202) return Status::OK();
    // A retried delete refused after an attempt whose answer was lost: that
    // attempt may have deleted the blob. Unconditional and gone (404): gone,
    // as asked. Conditional: whether that attempt applied is not known.
    // Azure answers the re-sent If-Match of a deleted blob 404, Azurite 412
    // (ConditionNotMet); a 412 with the blob there again can be a blob
    // created after that attempt deleted the one it named. A write id
    // cannot tell (a delete leaves nothing behind).
    if (out.unseen && r.status == 404 && !conditional) return Status::OK();
    if (out.unseen && (r.status == 404 || r.status == 412) && conditional) {
      const bool gone = r.status == 404 || Head(name, {}).status().IsNotFound();
      return Status::OutcomeUnknown(
          "blob '" + std::string(name) +
          "': an earlier attempt's answer was lost and the retry "
          "was refused (HTTP " +
          std::to_string(r.status) + "); " +
          (gone ? "the blob is gone now: deleted by that attempt, or by someone else"
                : "another version is there now: written before that attempt, or after it "
                  "deleted the one named"));
    }
    return BlobErrorOf(r, name);
  }

  Result<WriteResult> SetMetadata(std::string_view name, const Metadata& metadata,
                                  const WriteOptions& o) override {
    BT_RETURN_IF_ERROR(ValidateBlobName(name));
    BT_RETURN_IF_ERROR(CheckUserMetadata(metadata));
    const std::string write_id = HasConditions(o.conditions) ? NewGuid() : "";
    Budget budget = NewBudget();
    budget.deadline = o.deadline;
    Outcome out = Execute({"SET-METADATA", name,
                           [&] {
                             return azure::SetBlobMetadata(target_, Stamp::Now(), name, metadata, o,
                                                           write_id);
                           }},
                          budget);
    return FinishWrite(name, out, budget, write_id, 200);
  }

  Result<ListPage> List(const ListOptions& o) override;

  Result<LeaseResult> AcquireLease(std::string_view name, int duration, std::string_view proposed,
                                   const AccessConditions& c) override {
    BT_RETURN_IF_ERROR(lease::ValidateDuration(duration));
    BT_RETURN_IF_ERROR(lease::ValidateProposedId(proposed));
    // Always propose an id: a retried acquire with the same id is harmless.
    std::string id = proposed.empty() ? NewGuid() : std::string(proposed);
    return Lease("LEASE-ACQUIRE", name, 201,
                 [&] { return azure::AcquireLease(target_, Stamp::Now(), name, duration, id, c); });
  }
  Result<LeaseResult> RenewLease(std::string_view name, std::string_view id,
                                 const AccessConditions& c) override {
    return Lease("LEASE-RENEW", name, 200,
                 [&] { return azure::RenewLease(target_, Stamp::Now(), name, id, c); });
  }
  Result<LeaseResult> ChangeLease(std::string_view name, std::string_view id,
                                  std::string_view proposed, const AccessConditions& c) override {
    BT_RETURN_IF_ERROR(lease::ValidateProposedId(proposed));
    return Lease("LEASE-CHANGE", name, 200,
                 [&] { return azure::ChangeLease(target_, Stamp::Now(), name, id, proposed, c); });
  }
  Result<LeaseResult> ReleaseLease(std::string_view name, std::string_view id,
                                   const AccessConditions& c) override {
    return Lease("LEASE-RELEASE", name, 200,
                 [&] { return azure::ReleaseLease(target_, Stamp::Now(), name, id, c); });
  }
  Result<LeaseResult> BreakLease(std::string_view name, std::optional<int> period,
                                 const AccessConditions& c) override {
    BT_RETURN_IF_ERROR(lease::ValidateBreakPeriod(period));
    return Lease("LEASE-BREAK", name, 202,
                 [&] { return azure::BreakLease(target_, Stamp::Now(), name, period, c); });
  }

  std::string Location() const override { return o_.config.blob_endpoint; }
  const std::string& container() const override { return o_.container; }

 private:
  static Status CheckUserMetadata(const Metadata& m) {
    for (const auto& [name, value] : m)
      if (name == kWriteIdMetadata)
        return Status::InvalidArgument(std::string("metadata name '") + kWriteIdMetadata +
                                       "' is reserved by blobtable");
    return ValidateMetadata(m);
  }

  // Authenticates (SAS in the URL, or a Shared Key signature: last, as it
  // signs everything else).
  void Authenticate(HttpRequest& r) const {
    if (!o_.config.sas.empty()) {
      r.url += (r.url.find('?') == std::string::npos ? "?" : "&") + o_.config.sas;
    } else {
      SignWithSharedKey(r, o_.config.account_name, o_.config.account_key);
    }
  }

  Budget NewBudget() const { return Budget{o_.clock->Steady(), std::chrono::milliseconds(0), {}}; }
  std::chrono::milliseconds Spent(const Budget& b) const {
    return std::max(
        std::chrono::duration_cast<std::chrono::milliseconds>(o_.clock->Steady() - b.start),
        b.slept);
  }
  // Whether another attempt, after `wait`, can finish within the budget.
  bool Affords(const Budget& b, std::chrono::milliseconds wait) const {
    if (b.deadline && o_.clock->Steady() + wait >= *b.deadline) return false;
    return Spent(b) + wait + o_.request_timeout <= o_.retry.max_total;
  }
  // The timeout of an attempt starting now: the request timeout, cut to
  // what is left before the budget's deadline (zero: no time left).
  std::chrono::milliseconds AttemptTimeout(const Budget& b) const {
    if (!b.deadline) return o_.request_timeout;
    auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(*b.deadline - o_.clock->Steady());
    return std::clamp(left, std::chrono::milliseconds(0), o_.request_timeout);
  }

  // Sends a call, retrying what is worth retrying while the budget affords
  // a whole attempt, and logs every attempt. A follow-up (a check after
  // another request of the same operation) is sent only if it fits.
  Outcome Execute(const Call& call, Budget& budget, bool follow_up = false) {
    Outcome out;
    if (follow_up && !Affords(budget, std::chrono::milliseconds(0))) {
      out.response =
          Status::Unavailable("no time left in the retry budget for " + std::string(call.op));
      return out;
    }
    for (int attempt = 1;; ++attempt) {
      HttpRequest request = call.build();
      request.timeout = AttemptTimeout(budget);
      if (request.timeout.count() == 0) {
        out.response = Status::Unavailable(std::string(call.op) + " '" + std::string(call.blob) +
                                           "': the caller's deadline passed before an attempt");
        break;
      }
      Authenticate(request);
      auto t0 = o_.clock->Steady();
      out.response = RefuseCutAnswer(RefuseRedirect(o_.transport->Send(request), call), call);
      out.attempts = attempt;
      if (out.response.ok() && out.response->resent)
        out.unseen = true;  // the transport's own retry
      double ms = std::chrono::duration<double, std::milli>(o_.clock->Steady() - t0).count();
      Log(call, attempt, ms, out.response);
      bool retryable = out.response.ok() ? IsRetryableHttpStatus(out.response->status)
                                         : out.response.status().IsUnavailable() &&
                                               !(budget.give_up_if_refused &&
                                                 out.response.status().storage_code() == kNotSent);
      if (!retryable || attempt >= o_.retry.max_attempts) break;
      if (call.once_maybe_applied && (out.unseen || MayHaveBeenApplied(out.response))) break;
      auto delay = BackoffDelay(o_.retry, attempt, RandomU64());
      if (!Affords(budget, delay)) break;
      out.unseen = out.unseen || MayHaveBeenApplied(out.response);
      o_.clock->SleepFor(delay);
      budget.slept += delay;
    }
    return out;
  }
  Outcome Execute(const Call& call) {
    Budget budget = NewBudget();
    return Execute(call, budget);
  }
  // The blob as it is now, within what is left of an operation's budget.
  Outcome HeadFollowUp(std::string_view name, Budget& budget) {
    return Execute(
        {"HEAD", name, [&] { return azure::ReadBlob(target_, Stamp::Now(), "HEAD", name, {}); }},
        budget, /*follow_up=*/true);
  }
  // Whether an attempt that is about to be retried may have been applied:
  // no answer (unless the request was never sent), or a timeout answer.
  static bool MayHaveBeenApplied(const Result<HttpResponse>& r) {
    if (!r.ok()) return r.status().storage_code() != kNotSent;
    return r->status == 500 || r->status == 504;
  }

  // Every successful answer to these carries an ETag; one without it was cut
  // short (a response truncated inside its headers can reach us as a bare
  // status line): treat it as no answer, so the write-id rules settle it.
  static Result<HttpResponse> RefuseCutAnswer(Result<HttpResponse> r, const Call& call) {
    const std::string_view op = call.op;
    const bool has_etag = op == "PUT" || op == "SET-METADATA" || op == "GET" || op == "HEAD" ||
                          op.rfind("LEASE-", 0) == 0;
    if (!r.ok() || !has_etag || r->status < 200 || r->status > 299 || r->Header("etag") != nullptr)
      return r;
    return Status::Unavailable(std::string(call.op) + " '" + std::string(call.blob) +
                               "': the answer was cut short (HTTP " + std::to_string(r->status) +
                               " without an ETag)");
  }

  // A redirect is never followed (it would carry the Authorization header and
  // the request to another host): it is an error naming where it pointed.
  // 304 is not a redirect but a conditional read's answer.
  static Result<HttpResponse> RefuseRedirect(Result<HttpResponse> r, const Call& call) {
    if (!r.ok() || r->status < 300 || r->status > 399 || r->status == 304) return r;
    std::string host = "an unnamed location";
    if (const std::string* location = r->Header("location")) {
      size_t start = location->find("://");
      start = start == std::string::npos ? 0 : start + 3;
      host = "'" + location->substr(start, location->find_first_of("/?#", start) - start) + "'";
    }
    return Status::FromStorage(Code::kInvalidArgument, r->status, "Redirect",
                               std::string(call.op) + " '" + std::string(call.blob) +
                                   "': the service redirected it to " + host +
                                   "; blobtable follows no redirects (check the endpoint)");
  }

  // "blobtable: PUT t/orders/e/-p/-r -> 412 ConditionNotMet 3.2 ms attempt 1".
  // Only the method, blob name, status and error code: never a URL (it may
  // carry a SAS), a header or a body.
  void Log(const Call& call, int attempt, double ms, const Result<HttpResponse>& response) {
    if (!o_.request_log) return;
    std::string outcome;
    if (response.ok()) {
      outcome = std::to_string(response->status);
      if (const std::string* code = response->Header("x-ms-error-code")) outcome += " " + *code;
    } else {
      outcome = "no response (" + std::string(CodeName(response.status().code())) + ")";
    }
    char ms_text[32];
    snprintf(ms_text, sizeof(ms_text), "%.1f", ms);
    o_.request_log("blobtable: " + std::string(call.op) + " " + std::string(call.blob) + " -> " +
                   outcome + " " + ms_text + " ms attempt " + std::to_string(attempt));
  }

  Status ErrorOf(const HttpResponse& r, const std::string& what) const {
    std::string code;
    if (const std::string* h = r.Header("x-ms-error-code")) code = *h;
    std::string message;
    pugi::xml_document doc;
    if (!r.body.empty() && doc.load_buffer(r.body.data(), r.body.size())) {
      if (code.empty()) code = doc.child("Error").child_value("Code");
      message = doc.child("Error").child_value("Message");
      // Azure's message can quote the string it signed: never pass it on.
      size_t cut = message.find_first_of("\r\n");
      if (cut != std::string::npos) message.resize(cut);
    }
    if (code == "AuthenticationFailed" || r.status == 403)
      message = "authentication failed: check the AccountKey or SharedAccessSignature";
    if (message.empty()) message = "HTTP " + std::to_string(r.status);
    return StorageError(r.status, code, what + ": " + message);
  }

  // A request about one blob. A container not created yet holds no blobs:
  // the blob is missing, as on a store whose container exists.
  Status BlobErrorOf(const HttpResponse& r, std::string_view name, const char* what = "") const {
    const std::string blob = what + ("blob '" + std::string(name) + "'");
    if (ContainerMissing(r))
      return StorageError(
          404, "BlobNotFound",
          blob + ": does not exist (nothing was written to container '" + o_.container + "' yet)");
    return ErrorOf(r, blob);
  }

  Result<BlobProperties> PropertiesOf(const HttpResponse& r) const {
    BlobProperties p;
    if (const std::string* e = r.Header("etag")) p.etag = Quoted(*e);
    if (const std::string* lm = r.Header("last-modified")) ParseHttpDate(*lm, &p.last_modified);
    if (const std::string* cl = r.Header("content-length")) {
      auto length = ParseDecimal<uint64_t>(*cl);
      if (!length) return MalformedHeader("Content-Length", *cl);
      p.content_length = *length;
    }
    if (const std::string* md5 = r.Header("content-md5")) p.content_md5 = *md5;
    for (const auto& [name, value] : r.headers)
      if (name.rfind("x-ms-meta-", 0) == 0 && name != std::string("x-ms-meta-") + kWriteIdMetadata)
        p.metadata[name.substr(10)] = value;
    p.lease_state = ParseLeaseState(r.Header("x-ms-lease-state"));
    const std::string* status = r.Header("x-ms-lease-status");
    p.lease_status = status && *status == "locked" ? LeaseStatus::kLocked : LeaseStatus::kUnlocked;
    p.lease_duration = ParseLeaseDuration(r.Header("x-ms-lease-duration"));
    return p;
  }

  Result<GetResult> Read(const char* method, std::string_view name, const AccessConditions& c,
                         Budget& budget) {
    BT_RETURN_IF_ERROR(ValidateBlobName(name));
    Outcome out = Execute(
        {method, name, [&] { return azure::ReadBlob(target_, Stamp::Now(), method, name, c); }},
        budget);
    if (!out.response.ok()) return out.response.status();
    HttpResponse& r = *out.response;
    GetResult result;
    if (r.status == 304) {
      result.not_modified = true;
      if (const std::string* e = r.Header("etag")) result.properties.etag = Quoted(*e);
      // Azurite omits the ETag on 304; a matching If-None-Match names it.
      if (result.properties.etag.empty() && c.if_none_match && *c.if_none_match != kAnyETag)
        result.properties.etag = *c.if_none_match;
      if (const std::string* lm = r.Header("last-modified"))
        ParseHttpDate(*lm, &result.properties.last_modified);
      return result;
    }
    if (r.status != 200) return BlobErrorOf(r, name);
    BT_ASSIGN_OR_RETURN(result.properties, PropertiesOf(r));
    if (std::string_view(method) == "GET") result.data = std::move(r.body);
    return result;
  }

  // A conditional write that gives up (no answer, or a status worth
  // retrying, on its last attempt) after an attempt that may have been
  // applied (the last one included): whether it was is not known, and a
  // caller that took it for undone would retry into a false Conflict, or
  // apply its change twice. Unconditional writes stay Unavailable:
  // retrying them is harmless.
  static std::optional<Status> UnknownIfMaybeApplied(std::string_view name, const Outcome& out,
                                                     bool conditional) {
    if (!conditional) return std::nullopt;
    const bool unanswered = !out.response.ok() || IsRetryableHttpStatus(out.response->status);
    if (!unanswered || !(out.unseen || MayHaveBeenApplied(out.response))) return std::nullopt;
    return Status::OutcomeUnknown(
        "blob '" + std::string(name) + "': no answer after " + std::to_string(out.attempts) +
        " attempt(s), one of which may have been applied; whether the write was applied is not "
        "known (" +
        (out.response.ok() ? "HTTP " + std::to_string(out.response->status)
                           : out.response.status().message()) +
        ")");
  }

  // The blob's properties if it carries `write_id` now (a HEAD, if the
  // budget affords one); nullopt otherwise.
  std::optional<WriteResult> OursOnBlob(std::string_view name, Budget& budget,
                                        const std::string& write_id) {
    Outcome head = HeadFollowUp(name, budget);
    if (!head.response.ok() || head.response->status != 200) return std::nullopt;
    const std::string* id = head.response->Header(std::string("x-ms-meta-") + kWriteIdMetadata);
    if (id == nullptr || *id != write_id) return std::nullopt;
    auto p = PropertiesOf(*head.response);
    if (!p.ok()) return std::nullopt;
    return WriteResult{p->etag, p->last_modified};
  }

  Result<WriteResult> FinishWrite(std::string_view name, Outcome& out, Budget& budget,
                                  const std::string& write_id, int success_status) {
    if (auto unknown = UnknownIfMaybeApplied(name, out, !write_id.empty())) {
      // No answer, after an attempt that may have been applied: our write
      // id on the blob says it was.
      if (auto ours = OursOnBlob(name, budget, write_id)) return *ours;
      return *unknown;
    }
    if (!out.response.ok()) return out.response.status();
    const HttpResponse& r = *out.response;
    if (r.status == success_status) {
      WriteResult w;
      if (const std::string* e = r.Header("etag")) w.etag = Quoted(*e);
      if (const std::string* lm = r.Header("last-modified")) ParseHttpDate(*lm, &w.last_modified);
      return w;
    }
    // Refused after an attempt whose answer was lost: perhaps because of our
    // own earlier attempt. Our write id on the blob says so; anything else
    // (another write id, no blob, no answer, no time left) leaves it unknown,
    // never a Conflict: a caller would apply its change a second time.
    if ((r.status == 412 || r.status == 409) && out.unseen && !write_id.empty()) {
      Outcome head = HeadFollowUp(name, budget);
      if (head.response.ok() && head.response->status == 200) {
        const std::string* id = head.response->Header(std::string("x-ms-meta-") + kWriteIdMetadata);
        if (id != nullptr && *id == write_id) {
          BT_ASSIGN_OR_RETURN(BlobProperties p, PropertiesOf(*head.response));
          return WriteResult{p.etag, p.last_modified};
        }
      }
      std::string why =
          !head.response.ok() ? head.response.status().message()
          : head.response->status == 200
              ? "another write is on the blob now"
              : "the blob is gone now (HTTP " + std::to_string(head.response->status) + ")";
      return Status::OutcomeUnknown("blob '" + std::string(name) +
                                    "': an earlier attempt's answer was lost and the retry "
                                    "was refused (HTTP " +
                                    std::to_string(r.status) +
                                    "); whether the write was applied "
                                    "could not be told: " +
                                    why);
    }
    return BlobErrorOf(r, name);
  }

  Result<LeaseResult> Lease(const char* op, std::string_view name, int success_status,
                            const std::function<HttpRequest()>& build) {
    BT_RETURN_IF_ERROR(ValidateBlobName(name));
    Budget budget = NewBudget();
    Outcome out = Execute({op, name, build}, budget);
    if (!out.response.ok()) return out.response.status();
    const HttpResponse& r = *out.response;
    bool release = std::string_view(op) == "LEASE-RELEASE";
    if (r.status != success_status) {
      // A retried release that finds no lease: the lost first attempt released it.
      if (release && r.status == 409 && out.unseen) {
        Outcome head = HeadFollowUp(name, budget);
        if (head.response.ok() && head.response->status == 200) {
          BT_ASSIGN_OR_RETURN(BlobProperties p, PropertiesOf(*head.response));
          if (p.lease_state == LeaseState::kAvailable)
            return LeaseResult{"", p.etag, p.last_modified, 0};
        }
      }
      return BlobErrorOf(r, name, "lease on ");
    }
    LeaseResult l;
    if (const std::string* id = r.Header("x-ms-lease-id")) l.lease_id = *id;
    if (const std::string* e = r.Header("etag")) l.etag = Quoted(*e);
    if (const std::string* lm = r.Header("last-modified")) ParseHttpDate(*lm, &l.last_modified);
    if (const std::string* t = r.Header("x-ms-lease-time")) {
      auto seconds = ParseDecimal<int>(*t);
      if (!seconds) return MalformedHeader("x-ms-lease-time", *t);
      l.lease_time_seconds = *seconds;
    }
    if (release || std::string_view(op) == "LEASE-BREAK") l.lease_id.clear();
    return l;
  }

  AzureStoreOptions o_;
  azure::Target target_;
};

Result<ListPage> AzureBlobStore::List(const ListOptions& o) {
  if (o.max_results < 1 || o.max_results > 5000)
    return StorageError(400, "OutOfRangeQueryParameterValue", "maxresults must be 1..5000");
  Budget budget = NewBudget();
  budget.deadline = o.deadline;
  budget.give_up_if_refused = o.has_fallback;
  Outcome out = Execute(
      {"LIST", o.prefix, [&] { return azure::ListBlobs(target_, Stamp::Now(), o); }}, budget);
  if (ContainerMissing(out)) return ListPage{};  // created by the first write
  if (!out.response.ok()) return out.response.status();
  const HttpResponse& r = *out.response;
  if (r.status != 200) return ErrorOf(r, "listing '" + o.prefix + "'");
  return ParseListBlobs(r.body, o);
}

}  // namespace

std::shared_ptr<BlobStore> MakeAzureBlobStore(AzureStoreOptions options) {
  return std::make_shared<AzureBlobStore>(std::move(options));
}

Result<std::shared_ptr<BlobStore>> OpenAzureBlobStore(AzureStoreOptions options) {
  BT_RETURN_IF_ERROR(ValidateContainerName(options.container));
  if (!options.transport) return Status::InvalidArgument("Azure store needs an HTTP transport");
  return std::shared_ptr<BlobStore>(std::make_shared<AzureBlobStore>(std::move(options)));
}

}  // namespace blobtable
