// SPDX-License-Identifier: Apache-2.0
// AzureBlobStore: each BlobStore call reads as "build the request
// (storage/azure/requests.h), send it through the retry budget and the
// pipeline (retry.h, pipeline.h), map the answer (responses.h,
// write_check.h)". What stays here: checking the caller's arguments, and
// creating the container when a write first finds it missing.
#include "storage/azure/azure_blob_store.h"

#include <utility>

#include "storage/azure/pipeline.h"
#include "storage/azure/responses.h"
#include "storage/azure/write_check.h"
#include "storage/conditions.h"
#include "storage/lease_rules.h"
#include "storage/storage_errors.h"
#include "util/digest.h"
#include "util/macros.h"
#include "util/random.h"
#include "util/stored_format.h"

namespace blobtable::internal {

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
        metrics_(o_.metrics
                     ? o_.metrics
                     : std::shared_ptr<MetricsRegistry>(std::shared_ptr<void>(), &UnreadMetrics())),
        retry_(o_.retry, o_.request_timeout, *clock_, nullptr, *metrics_),
        pipeline_(o_.config, o_.transport, o_.request_log, *clock_, *metrics_, o_.tracer) {}

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
                                   const LeaseOptions& o) override {
    BT_RETURN_IF_ERROR(lease::ValidateDuration(duration));
    BT_RETURN_IF_ERROR(lease::ValidateProposedId(proposed));
    // Always propose an id: a retried acquire with the same id is harmless.
    std::string id = proposed.empty() ? NewGuid() : std::string(proposed);
    return Lease("LEASE-ACQUIRE", name, o.deadline, 201, [&] {
      return azure::AcquireLease(target_, Stamp::Now(), name, duration, id, o.conditions);
    });
  }
  Result<LeaseResult> RenewLease(std::string_view name, std::string_view id,
                                 const LeaseOptions& o) override {
    return Lease("LEASE-RENEW", name, o.deadline, 200,
                 [&] { return azure::RenewLease(target_, Stamp::Now(), name, id, o.conditions); });
  }
  Result<LeaseResult> ChangeLease(std::string_view name, std::string_view id,
                                  std::string_view proposed, const LeaseOptions& o) override {
    BT_RETURN_IF_ERROR(lease::ValidateProposedId(proposed));
    return Lease("LEASE-CHANGE", name, o.deadline, 200, [&] {
      return azure::ChangeLease(target_, Stamp::Now(), name, id, proposed, o.conditions);
    });
  }
  Result<LeaseResult> ReleaseLease(std::string_view name, std::string_view id,
                                   const LeaseOptions& o) override {
    return Lease("LEASE-RELEASE", name, o.deadline, 200, [&] {
      return azure::ReleaseLease(target_, Stamp::Now(), name, id, o.conditions);
    });
  }
  Result<LeaseResult> BreakLease(std::string_view name, std::optional<int> period,
                                 const LeaseOptions& o) override {
    BT_RETURN_IF_ERROR(lease::ValidateBreakPeriod(period));
    return Lease("LEASE-BREAK", name, o.deadline, 202, [&] {
      return azure::BreakLease(target_, Stamp::Now(), name, period, o.conditions);
    });
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

  Result<LeaseResult> Lease(const char* op, std::string_view name,
                            std::optional<SteadyTime> deadline, int success_status,
                            const std::function<HttpRequest()>& build) const {
    BT_RETURN_IF_ERROR(ValidateBlobName(name));
    Budget budget = retry_.NewBudget(deadline);
    Outcome out = Send({op, name, build}, budget);
    return azure::FinishLease(op, name, out, success_status, HeadNow(name, budget), o_.container);
  }

  AzureStoreOptions o_;
  const Clock* clock_;
  azure::Target target_;
  std::shared_ptr<MetricsRegistry> metrics_;  // before what counts in it
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

}  // namespace blobtable::internal
