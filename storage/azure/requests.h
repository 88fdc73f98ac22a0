// SPDX-License-Identifier: Apache-2.0
// The Azure backend's request builders: each Blob service request blobtable
// sends, as a pure function of its arguments (no transport, clock or
// randomness: the date and client request id come in a Stamp), so that a
// test reads the very request that would go out. Authentication and each
// attempt's timeout are added on the way out (storage/azure/pipeline.h,
// storage/azure/retry.h).
#ifndef BLOBTABLE_STORAGE_AZURE_REQUESTS_H_
#define BLOBTABLE_STORAGE_AZURE_REQUESTS_H_

#include <optional>
#include <string>
#include <string_view>

#include "blobtable/blob_store.h"
#include "storage/azure/http_transport.h"

namespace blobtable::internal {

// The service version sent (x-ms-version): 2026-02-06 brings List Blobs'
// startFrom. Azurite needs --skipApiVersionCheck for it.
inline constexpr char kAzureApiVersion[] = "2026-02-06";

}  // namespace blobtable::internal

namespace blobtable::internal::azure {

// Where requests go: the service's base URL (no trailing slash) and the
// container.
struct Target {
  std::string endpoint;
  std::string container;
};

// What differs between two attempts of one request: the date and the client
// request id. Now(): the current date and a new GUID.
struct Stamp {
  std::string date;
  std::string request_id;
  static Stamp Now();
};

// "endpoint/container[?query]" and "endpoint/container/name[?query]", the
// name percent-encoded but for its slashes.
std::string ContainerUrl(const Target& t, std::string_view query);
std::string BlobUrl(const Target& t, std::string_view name, std::string_view query = "");

// A request with the headers every request carries: x-ms-version, x-ms-date,
// x-ms-client-request-id.
HttpRequest NewRequest(const char* method, std::string url, const Stamp& stamp);
// If-Match, If-None-Match, If-Modified-Since, If-Unmodified-Since.
void AddConditions(HttpRequest& r, const AccessConditions& c);
// The conditions, then x-ms-lease-id if the write names a lease.
void AddWriteOptions(HttpRequest& r, const WriteOptions& o);
// x-ms-meta-NAME per entry, then the write id (if any) as x-ms-meta-blobtablewriteid.
void AddMetadata(HttpRequest& r, const Metadata& m, std::string_view write_id);

// Create Container.
HttpRequest CreateContainer(const Target& t, const Stamp& s);
// Put Blob (a block blob) of `data`, whose Content-MD5 is `md5` (base64).
HttpRequest PutBlob(const Target& t, const Stamp& s, std::string_view name, std::string_view data,
                    const std::string& md5, const PutOptions& o, std::string_view write_id);
HttpRequest DeleteBlob(const Target& t, const Stamp& s, std::string_view name,
                       const WriteOptions& o);
HttpRequest SetBlobMetadata(const Target& t, const Stamp& s, std::string_view name,
                            const Metadata& m, const WriteOptions& o, std::string_view write_id);
// Get Blob ("GET") or Get Blob Properties ("HEAD").
HttpRequest ReadBlob(const Target& t, const Stamp& s, const char* method, std::string_view name,
                     const AccessConditions& c);
// Lease Blob: acquire (always with a proposed id), renew, change, release,
// break (a break period if given).
HttpRequest AcquireLease(const Target& t, const Stamp& s, std::string_view name, int duration,
                         std::string_view proposed_id, const AccessConditions& c);
HttpRequest RenewLease(const Target& t, const Stamp& s, std::string_view name, std::string_view id,
                       const AccessConditions& c);
HttpRequest ChangeLease(const Target& t, const Stamp& s, std::string_view name, std::string_view id,
                        std::string_view proposed_id, const AccessConditions& c);
HttpRequest ReleaseLease(const Target& t, const Stamp& s, std::string_view name,
                         std::string_view id, const AccessConditions& c);
HttpRequest BreakLease(const Target& t, const Stamp& s, std::string_view name,
                       std::optional<int> period, const AccessConditions& c);
// List Blobs with metadata: max_results, prefix, marker and start_from.
HttpRequest ListBlobs(const Target& t, const Stamp& s, const ListOptions& o);

}  // namespace blobtable::internal::azure

#endif  // BLOBTABLE_STORAGE_AZURE_REQUESTS_H_
