// SPDX-License-Identifier: Apache-2.0
// AzureBlobStore: each BlobStore call builds its request
// (storage/azure/requests.h), sends it through the retry budget and the
// pipeline (retry.h, pipeline.h), and maps the answer (below).
#include "storage/azure/azure_blob_store.h"

#include <pugixml.hpp>

#include <functional>
#include <optional>
#include <utility>

#include "storage/azure/azure_parsing.h"
#include "storage/azure/pipeline.h"
#include "storage/azure/retry.h"
#include "storage/conditions.h"
#include "storage/lease_rules.h"
#include "storage/storage_errors.h"
#include "util/digest.h"
#include "util/macros.h"
#include "util/random.h"
#include "util/stored_format.h"

namespace blobtable {

namespace azure {
namespace {

// ---- Response mapping: what an answer means for a BlobStore call ----

// The ETag (quoted) and Last-Modified an answer carries, if it does.
void ReadVersion(const HttpResponse& r, std::string* etag, TimePoint* last_modified) {
  if (const std::string* e = r.Header("etag")) *etag = Quoted(*e);
  if (const std::string* lm = r.Header("last-modified")) ParseHttpDate(*lm, last_modified);
}

bool ContainerMissing(const HttpResponse& r) {
  const std::string* code = r.Header("x-ms-error-code");
  return r.status == 404 && code != nullptr && *code == "ContainerNotFound";
}

Status ErrorOf(const HttpResponse& r, const std::string& what) {
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

Status BlobErrorOf(const HttpResponse& r, std::string_view name, std::string_view container,
                   const char* what = "") {
  const std::string blob = what + ("blob '" + std::string(name) + "'");
  if (ContainerMissing(r))
    return StorageError(404, "BlobNotFound",
                        blob + ": does not exist (nothing was written to container '" +
                            std::string(container) + "' yet)");
  return ErrorOf(r, blob);
}

Status ContainerCreated(const HttpResponse& r, std::string_view container) {
  if (r.status == 201 || r.status == 409) return Status::OK();  // 409: it exists
  return ErrorOf(r, "creating container " + std::string(container));
}

Result<BlobProperties> PropertiesOf(const HttpResponse& r) {
  BlobProperties p;
  ReadVersion(r, &p.etag, &p.last_modified);
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

WriteResult WriteResultOf(const HttpResponse& r) {
  WriteResult w;
  ReadVersion(r, &w.etag, &w.last_modified);
  return w;
}

Result<GetResult> ReadResultOf(HttpResponse& r, std::string_view method, std::string_view name,
                               const AccessConditions& c, std::string_view container) {
  GetResult result;
  if (r.status == 304) {
    result.not_modified = true;
    ReadVersion(r, &result.properties.etag, &result.properties.last_modified);
    // Azurite omits the ETag on 304; a matching If-None-Match names it.
    if (result.properties.etag.empty() && c.if_none_match && *c.if_none_match != kAnyETag)
      result.properties.etag = *c.if_none_match;
    return result;
  }
  if (r.status != 200) return BlobErrorOf(r, name, container);
  BT_ASSIGN_OR_RETURN(result.properties, PropertiesOf(r));
  if (method == "GET") result.data = std::move(r.body);
  return result;
}

Result<LeaseResult> LeaseResultOf(const HttpResponse& r, bool keeps_lease_id) {
  LeaseResult l;
  if (const std::string* id = r.Header("x-ms-lease-id")) l.lease_id = *id;
  ReadVersion(r, &l.etag, &l.last_modified);
  if (const std::string* t = r.Header("x-ms-lease-time")) {
    auto seconds = ParseDecimal<int>(*t);
    if (!seconds) return MalformedHeader("x-ms-lease-time", *t);
    l.lease_time_seconds = *seconds;
  }
  if (!keeps_lease_id) l.lease_id.clear();
  return l;
}

// ---- After lost answers: the write-id check (docs/azure.md#write-ids) ----

// The blob as it is now: a HEAD, sent within what is left of the write's
// budget.
using HeadNow = std::function<Outcome()>;

const std::string* WriteIdOn(const HttpResponse& head) {
  return head.Header(std::string("x-ms-meta-") + kWriteIdMetadata);
}

// The blob's properties if it carries `write_id` now; nullopt otherwise.
std::optional<WriteResult> OursOnBlob(const Outcome& head, const std::string& write_id) {
  if (!head.response.ok() || head.response->status != 200) return std::nullopt;
  const std::string* id = WriteIdOn(*head.response);
  if (id == nullptr || *id != write_id) return std::nullopt;
  auto p = PropertiesOf(*head.response);
  if (!p.ok()) return std::nullopt;
  return WriteResult{p->etag, p->last_modified};
}

// A write refused (409/412) after an attempt whose answer was lost: ours if
// our write id is on the blob now, else unknown.
Result<WriteResult> RefusedAfterLostAnswer(std::string_view name, int status,
                                           const std::string& write_id, const HeadNow& head) {
  Outcome now = head();
  if (now.response.ok() && now.response->status == 200) {
    const std::string* id = WriteIdOn(*now.response);
    if (id != nullptr && *id == write_id) {
      BT_ASSIGN_OR_RETURN(BlobProperties p, PropertiesOf(*now.response));
      return WriteResult{p.etag, p.last_modified};
    }
  }
  std::string why = !now.response.ok()            ? now.response.status().message()
                    : now.response->status == 200 ? "another write is on the blob now"
                                                  : "the blob is gone now (HTTP " +
                                                        std::to_string(now.response->status) + ")";
  return Status::OutcomeUnknown("blob '" + std::string(name) +
                                "': an earlier attempt's answer was lost and the retry "
                                "was refused (HTTP " +
                                std::to_string(status) +
                                "); whether the write was applied "
                                "could not be told: " +
                                why);
}

std::string WriteIdFor(const AccessConditions& c) { return HasConditions(c) ? NewGuid() : ""; }

std::optional<Status> UnknownIfMaybeApplied(std::string_view name, const Outcome& out,
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

Result<WriteResult> FinishWrite(std::string_view name, const Outcome& out,
                                const std::string& write_id, int success_status,
                                const HeadNow& head, std::string_view container) {
  if (auto unknown = UnknownIfMaybeApplied(name, out, !write_id.empty())) {
    // No answer, after an attempt that may have been applied: our write
    // id on the blob says it was.
    if (auto ours = OursOnBlob(head(), write_id)) return *ours;
    return *unknown;
  }
  if (!out.response.ok()) return out.response.status();
  const HttpResponse& r = *out.response;
  if (r.status == success_status) return WriteResultOf(r);
  if ((r.status == 412 || r.status == 409) && out.unseen && !write_id.empty())
    return RefusedAfterLostAnswer(name, r.status, write_id, head);
  return BlobErrorOf(r, name, container);
}

Status FinishDelete(std::string_view name, const Outcome& out, bool conditional,
                    const std::function<bool()>& gone_now, std::string_view container) {
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
    const bool gone = r.status == 404 || gone_now();
    return Status::OutcomeUnknown(
        "blob '" + std::string(name) +
        "': an earlier attempt's answer was lost and the retry "
        "was refused (HTTP " +
        std::to_string(r.status) + "); " +
        (gone ? "the blob is gone now: deleted by that attempt, or by someone else"
              : "another version is there now: written before that attempt, or after it "
                "deleted the one named"));
  }
  return BlobErrorOf(r, name, container);
}

Result<LeaseResult> FinishLease(std::string_view op, std::string_view name, const Outcome& out,
                                int success_status, const HeadNow& head,
                                std::string_view container) {
  if (!out.response.ok()) return out.response.status();
  const HttpResponse& r = *out.response;
  const bool release = op == "LEASE-RELEASE";
  if (r.status == success_status) return LeaseResultOf(r, !release && op != "LEASE-BREAK");
  // A retried release that finds no lease: the lost first attempt released it.
  if (release && r.status == 409 && out.unseen) {
    Outcome now = head();
    if (now.response.ok() && now.response->status == 200) {
      BT_ASSIGN_OR_RETURN(BlobProperties p, PropertiesOf(*now.response));
      if (p.lease_state == LeaseState::kAvailable)
        return LeaseResult{"", p.etag, p.last_modified, 0};
    }
  }
  return BlobErrorOf(r, name, container, "lease on ");
}

}  // namespace
}  // namespace azure

namespace {

using azure::Budget;
using azure::Call;
using azure::Outcome;
using azure::Stamp;

class AzureBlobStore final : public BlobStore {
 public:
  explicit AzureBlobStore(AzureStoreOptions o)
      : o_(std::move(o)),
        clock_(o_.clock != nullptr ? o_.clock : Clock::Real()),
        target_{o_.config.blob_endpoint, o_.container},
        retry_(o_.retry, o_.request_timeout, *clock_),
        pipeline_(o_.config, o_.transport, o_.request_log, *clock_) {}

  Result<GetResult> Get(std::string_view name, const ReadOptions& o) override {
    return Read("GET", name, o.conditions, retry_.NewBudget(o.deadline, o.has_fallback));
  }
  Result<GetResult> Head(std::string_view name, const AccessConditions& c) override {
    return Read("HEAD", name, c, retry_.NewBudget());
  }

  Result<WriteResult> Put(std::string_view name, std::string_view data,
                          const PutOptions& o) override {
    BT_RETURN_IF_ERROR(ValidateBlobName(name));
    BT_RETURN_IF_ERROR(CheckUserMetadata(o.metadata));
    const std::string write_id = azure::WriteIdFor(o.conditions);
    // The service checks the body against it and keeps it as the blob's
    // Content-MD5 (what listings' inline copies are checked against).
    const std::string md5 = Md5Base64(data);
    Budget budget = retry_.NewBudget(o.deadline);
    Outcome out = SendCreating(
        {"PUT", name,
         [&] { return azure::PutBlob(target_, Stamp::Now(), name, data, md5, o, write_id); },
         o.conditions.if_none_match == kAnyETag},
        budget);
    return azure::FinishWrite(name, out, write_id, 201, HeadNow(name, budget), o_.container);
  }

  Status Delete(std::string_view name, const WriteOptions& o) override {
    BT_RETURN_IF_ERROR(ValidateBlobName(name));
    Budget budget = retry_.NewBudget(o.deadline);
    Outcome out =
        Send({"DELETE", name, [&] { return azure::DeleteBlob(target_, Stamp::Now(), name, o); }},
             budget);
    // A lease id makes a delete as conditional as an ETag does: a retry
    // that finds the blob gone may find it deleted by the next holder of
    // the lease (a work item completed by another worker).
    const bool conditional = HasConditions(o.conditions) || !o.lease_id.empty();
    return azure::FinishDelete(
        name, out, conditional, [&] { return Head(name, {}).status().IsNotFound(); }, o_.container);
  }

  Result<WriteResult> SetMetadata(std::string_view name, const Metadata& metadata,
                                  const WriteOptions& o) override {
    BT_RETURN_IF_ERROR(ValidateBlobName(name));
    BT_RETURN_IF_ERROR(CheckUserMetadata(metadata));
    const std::string write_id = azure::WriteIdFor(o.conditions);
    Budget budget = retry_.NewBudget(o.deadline);
    Outcome out =
        Send({"SET-METADATA", name,
              [&] {
                return azure::SetBlobMetadata(target_, Stamp::Now(), name, metadata, o, write_id);
              }},
             budget);
    return azure::FinishWrite(name, out, write_id, 200, HeadNow(name, budget), o_.container);
  }

  Result<ListPage> List(const ListOptions& o) override {
    if (o.max_results < 1 || o.max_results > 5000)
      return StorageError(400, "OutOfRangeQueryParameterValue", "maxresults must be 1..5000");
    Budget budget = retry_.NewBudget(o.deadline, o.has_fallback);
    Outcome out = Send(
        {"LIST", o.prefix, [&] { return azure::ListBlobs(target_, Stamp::Now(), o); }}, budget);
    if (!out.response.ok()) return out.response.status();
    const HttpResponse& r = *out.response;
    if (azure::ContainerMissing(r)) return ListPage{};  // created by the first write
    if (r.status != 200) return azure::ErrorOf(r, "listing '" + o.prefix + "'");
    return ParseListBlobs(r.body, o);
  }

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

  // Sends a call through the retry budget and the pipeline.
  Outcome Send(const Call& call, Budget& budget, bool follow_up = false) const {
    return retry_.Send(call, budget, pipeline_.Start(), follow_up);
  }

  // Sends a write that creates a blob; if the container is missing, creates
  // it (within the write's budget: opening a store sends nothing) and sends
  // the write again.
  Outcome SendCreating(const Call& call, Budget& budget) const {
    Outcome out = Send(call, budget);
    if (!out.response.ok() || !azure::ContainerMissing(*out.response)) return out;
    if (!o_.create_container) return out;  // the service's 404 ContainerNotFound
    Outcome made = Send(
        {"CREATE-CONTAINER", "", [&] { return azure::CreateContainer(target_, Stamp::Now()); }},
        budget, /*follow_up=*/true);
    Status created = made.response.ok() ? azure::ContainerCreated(*made.response, o_.container)
                                        : made.response.status();
    if (!created.ok()) {
      out.response = created;
      return out;
    }
    return Send(call, budget, /*follow_up=*/true);
  }

  // The blob as it is now, within what is left of an operation's budget.
  azure::HeadNow HeadNow(std::string_view name, Budget& budget) const {
    return [this, name, &budget] {
      return Send(
          {"HEAD", name, [&] { return azure::ReadBlob(target_, Stamp::Now(), "HEAD", name, {}); }},
          budget, /*follow_up=*/true);
    };
  }

  Result<GetResult> Read(const char* method, std::string_view name, const AccessConditions& c,
                         Budget budget) const {
    BT_RETURN_IF_ERROR(ValidateBlobName(name));
    Outcome out = Send(
        {method, name, [&] { return azure::ReadBlob(target_, Stamp::Now(), method, name, c); }},
        budget);
    if (!out.response.ok()) return out.response.status();
    return azure::ReadResultOf(*out.response, method, name, c, o_.container);
  }

  Result<LeaseResult> Lease(const char* op, std::string_view name, int success_status,
                            const std::function<HttpRequest()>& build) const {
    BT_RETURN_IF_ERROR(ValidateBlobName(name));
    Budget budget = retry_.NewBudget();
    Outcome out = Send({op, name, build}, budget);
    return azure::FinishLease(op, name, out, success_status, HeadNow(name, budget), o_.container);
  }

  AzureStoreOptions o_;
  const Clock* clock_;
  azure::Target target_;
  azure::RetryBudgetPolicy retry_;
  azure::Pipeline pipeline_;
};

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
