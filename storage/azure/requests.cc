// SPDX-License-Identifier: Apache-2.0
// The Azure backend's request builders (storage/azure/requests.h).
#include "storage/azure/requests.h"

#include <chrono>
#include <utility>

#include "storage/azure/azure_parsing.h"
#include "storage/azure/shared_key.h"
#include "util/random.h"
#include "util/stored_format.h"

namespace blobtable::internal::azure {

namespace {

std::string WithQuery(std::string url, std::string_view query) {
  if (!query.empty()) (url += "?") += query;
  return url;
}

// A lease action's own headers; each is sent only if set.
struct LeaseHeaders {
  const char* action = "";
  std::optional<int> duration = std::nullopt;
  std::optional<std::string_view> id = std::nullopt;
  std::optional<std::string_view> proposed_id = std::nullopt;
  std::optional<int> break_period = std::nullopt;
};

// Lease Blob: the action's headers, in the order above, then the conditions.
HttpRequest LeaseRequest(const Target& t, const Stamp& s, std::string_view name,
                         const LeaseHeaders& h, const AccessConditions& c) {
  HttpRequest r = NewRequest("PUT", BlobUrl(t, name, "comp=lease"), s);
  r.headers.emplace_back("x-ms-lease-action", h.action);
  if (h.duration) r.headers.emplace_back("x-ms-lease-duration", std::to_string(*h.duration));
  if (h.id) r.headers.emplace_back("x-ms-lease-id", std::string(*h.id));
  if (h.proposed_id) r.headers.emplace_back("x-ms-proposed-lease-id", std::string(*h.proposed_id));
  if (h.break_period)
    r.headers.emplace_back("x-ms-lease-break-period", std::to_string(*h.break_period));
  AddConditions(r, c);
  return r;
}

}  // namespace

Stamp Stamp::Now() { return {FormatHttpDate(std::chrono::system_clock::now()), NewGuid()}; }

std::string ContainerUrl(const Target& t, std::string_view query) {
  return WithQuery(t.endpoint + "/" + t.container, query);
}

std::string BlobUrl(const Target& t, std::string_view name, std::string_view query) {
  return WithQuery(t.endpoint + "/" + t.container + "/" + PercentEncode(name, true), query);
}

HttpRequest NewRequest(const char* method, std::string url, const Stamp& stamp) {
  HttpRequest r;
  r.method = method;
  r.url = std::move(url);
  r.headers.emplace_back("x-ms-version", kAzureApiVersion);
  r.headers.emplace_back("x-ms-date", stamp.date);
  r.headers.emplace_back("x-ms-client-request-id", stamp.request_id);
  return r;
}

void AddConditions(HttpRequest& r, const AccessConditions& c) {
  if (c.if_match) r.headers.emplace_back("If-Match", *c.if_match);
  if (c.if_none_match) r.headers.emplace_back("If-None-Match", *c.if_none_match);
  if (c.if_modified_since)
    r.headers.emplace_back("If-Modified-Since", FormatHttpDate(*c.if_modified_since));
  if (c.if_unmodified_since)
    r.headers.emplace_back("If-Unmodified-Since", FormatHttpDate(*c.if_unmodified_since));
}

void AddWriteOptions(HttpRequest& r, const WriteOptions& o) {
  AddConditions(r, o.conditions);
  if (!o.lease_id.empty()) r.headers.emplace_back("x-ms-lease-id", o.lease_id);
}

void AddMetadata(HttpRequest& r, const Metadata& m, std::string_view write_id) {
  for (const auto& [name, value] : m) r.headers.emplace_back("x-ms-meta-" + name, value);
  if (!write_id.empty())
    r.headers.emplace_back(std::string("x-ms-meta-") + kWriteIdMetadata, std::string(write_id));
}

HttpRequest CreateContainer(const Target& t, const Stamp& s) {
  return NewRequest("PUT", ContainerUrl(t, "restype=container"), s);
}

HttpRequest PutBlob(const Target& t, const Stamp& s, std::string_view name, std::string_view data,
                    const std::string& md5, const PutOptions& o, std::string_view write_id) {
  HttpRequest r = NewRequest("PUT", BlobUrl(t, name), s);
  r.headers.emplace_back("x-ms-blob-type", "BlockBlob");
  r.headers.emplace_back("Content-Type", "application/octet-stream");
  r.headers.emplace_back("Content-MD5", md5);
  AddMetadata(r, o.metadata, write_id);
  AddWriteOptions(r, o);
  r.body = data;
  return r;
}

HttpRequest DeleteBlob(const Target& t, const Stamp& s, std::string_view name,
                       const WriteOptions& o) {
  HttpRequest r = NewRequest("DELETE", BlobUrl(t, name), s);
  AddWriteOptions(r, o);
  return r;
}

HttpRequest SetBlobMetadata(const Target& t, const Stamp& s, std::string_view name,
                            const Metadata& m, const WriteOptions& o, std::string_view write_id) {
  HttpRequest r = NewRequest("PUT", BlobUrl(t, name, "comp=metadata"), s);
  AddMetadata(r, m, write_id);
  AddWriteOptions(r, o);
  return r;
}

HttpRequest ReadBlob(const Target& t, const Stamp& s, const char* method, std::string_view name,
                     const AccessConditions& c) {
  HttpRequest r = NewRequest(method, BlobUrl(t, name), s);
  AddConditions(r, c);
  return r;
}

HttpRequest AcquireLease(const Target& t, const Stamp& s, std::string_view name, int duration,
                         std::string_view proposed_id, const AccessConditions& c) {
  return LeaseRequest(t, s, name,
                      {.action = "acquire", .duration = duration, .proposed_id = proposed_id}, c);
}

HttpRequest RenewLease(const Target& t, const Stamp& s, std::string_view name, std::string_view id,
                       const AccessConditions& c) {
  return LeaseRequest(t, s, name, {.action = "renew", .id = id}, c);
}

HttpRequest ChangeLease(const Target& t, const Stamp& s, std::string_view name, std::string_view id,
                        std::string_view proposed_id, const AccessConditions& c) {
  return LeaseRequest(t, s, name, {.action = "change", .id = id, .proposed_id = proposed_id}, c);
}

HttpRequest ReleaseLease(const Target& t, const Stamp& s, std::string_view name,
                         std::string_view id, const AccessConditions& c) {
  return LeaseRequest(t, s, name, {.action = "release", .id = id}, c);
}

HttpRequest BreakLease(const Target& t, const Stamp& s, std::string_view name,
                       std::optional<int> period, const AccessConditions& c) {
  return LeaseRequest(t, s, name, {.action = "break", .break_period = period}, c);
}

HttpRequest ListBlobs(const Target& t, const Stamp& s, const ListOptions& o) {
  std::string query =
      "restype=container&comp=list&include=metadata&maxresults=" + std::to_string(o.max_results);
  if (!o.prefix.empty()) query += "&prefix=" + PercentEncode(o.prefix, false);
  if (!o.marker.empty()) query += "&marker=" + PercentEncode(o.marker, false);
  if (!o.start_from.empty()) query += "&startFrom=" + PercentEncode(o.start_from, false);
  return NewRequest("GET", ContainerUrl(t, query), s);
}

}  // namespace blobtable::internal::azure
