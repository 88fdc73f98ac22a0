// SPDX-License-Identifier: Apache-2.0
// The Azure backend's response mapping (storage/azure/responses.h).
#include "storage/azure/responses.h"

#include <pugixml.hpp>

#include <utility>

#include "storage/azure/azure_parsing.h"
#include "storage/storage_errors.h"
#include "util/macros.h"
#include "util/stored_format.h"

namespace blobtable::internal::azure {

namespace {

// The ETag (quoted) and Last-Modified an answer carries, if it does.
void ReadVersion(const HttpResponse& r, std::string* etag, TimePoint* last_modified) {
  if (const std::string* e = r.Header("etag")) *etag = Quoted(*e);
  if (const std::string* lm = r.Header("last-modified")) ParseHttpDate(*lm, last_modified);
}

}  // namespace

bool ContainerMissing(const HttpResponse& r) {
  const std::string* code = r.Header("x-ms-error-code");
  return r.status == 404 && code != nullptr && *code == "ContainerNotFound";
}

Status ContainerCreated(const HttpResponse& r, std::string_view container) {
  if (r.status == 201 || r.status == 409) return Status::OK();  // 409: it exists
  return ErrorOf(r, "creating container " + std::string(container));
}

namespace {

// A 404 that is not Azure Storage's "no such blob" or "no such container":
// the answer of something that is not Azure Storage (no x-ms-request-id),
// or of Azure Storage about an account it does not have (Azurite:
// ResourceNotFound). Never read as an empty store.
bool NoStoreThere(const HttpResponse& r, const std::string& code) {
  return r.status == 404 && (r.Header("x-ms-request-id") == nullptr ||
                             (code != "BlobNotFound" && code != "ContainerNotFound"));
}

}  // namespace

bool FromAzureStorage(const HttpResponse& r) {
  return r.Header("x-ms-request-id") != nullptr || r.Header("x-ms-error-code") != nullptr;
}

Status NotAzureStorage(const HttpResponse& r, std::string_view method) {
  const std::string* type = r.Header("content-type");
  return Status::FromStorage(
      Code::kInvalidArgument, r.status, kStoreNotFound,
      std::string(method) + ": the endpoint answered HTTP " + std::to_string(r.status) +
          (type != nullptr ? " (" + *type + ")" : std::string()) +
          " without x-ms-request-id: it is not Azure Storage; check the connection string's "
          "BlobEndpoint");
}

Status ErrorOf(const HttpResponse& r, const std::string& what) {
  std::string code;
  if (const std::string* h = r.Header("x-ms-error-code")) code = *h;
  if (NoStoreThere(r, code))
    return Status::FromStorage(Code::kInvalidArgument, 404, kStoreNotFound,
                               what + ": no Azure Storage account answers there (HTTP 404 " +
                                   (r.Header("x-ms-request-id") == nullptr
                                        ? std::string("without x-ms-request-id: not Azure Storage")
                                    : code.empty() ? std::string("with no error code")
                                                   : code) +
                                   "): check the connection string's AccountName and BlobEndpoint");
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
                   const char* what) {
  const std::string blob = what + ("blob '" + std::string(name) + "'");
  if (ContainerMissing(r))
    return StorageError(404, "BlobNotFound",
                        blob + ": does not exist (nothing was written to container '" +
                            std::string(container) + "' yet)");
  return ErrorOf(r, blob);
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

}  // namespace blobtable::internal::azure
