// SPDX-License-Identifier: Apache-2.0
// The Azure backend's response mapping: what an answer of the Blob service
// means for a BlobStore call. HTTP status and error code to Status, the
// properties a read or a write returns, a lease action's result. Pure
// functions of the answer (listings: ParseListBlobs, azure_parsing.h; lost
// answers and write ids: storage/azure/write_check.h).
#ifndef BLOBTABLE_STORAGE_AZURE_RESPONSES_H_
#define BLOBTABLE_STORAGE_AZURE_RESPONSES_H_

#include <string>
#include <string_view>

#include "blobtable/blob_store.h"
#include "storage/azure/http_transport.h"

namespace blobtable::internal::azure {

// 404 ContainerNotFound: nothing was written to the container yet.
bool ContainerMissing(const HttpResponse& r);
// Create Container's answer: 201 (made) or 409 (it exists) is OK.
Status ContainerCreated(const HttpResponse& r, std::string_view container);

// The error an answer means: its x-ms-error-code (or the XML body's Code),
// and the first line of its message, after "what: ". Never Azure's message
// for a failed authentication: it can quote the string it signed.
Status ErrorOf(const HttpResponse& r, const std::string& what);
// Whether `r` carries Azure Storage's x-ms-request-id (every answer of
// Azure Storage and Azurite does) or its x-ms-error-code (no other server
// sends one).
bool FromAzureStorage(const HttpResponse& r);
// The failure for an answer that is not Azure Storage's: InvalidArgument,
// storage code kStoreNotFound, naming its status.
Status NotAzureStorage(const HttpResponse& r, std::string_view method);
// The same for a request about one blob, named "<what>blob 'name'". A
// container not created yet holds no blobs: the blob is missing, as on a
// store whose container exists (404 BlobNotFound).
Status BlobErrorOf(const HttpResponse& r, std::string_view name, std::string_view container,
                   const char* what = "");

// A blob's properties from its headers (the write id hidden from metadata);
// Corruption if its Content-Length is not a number.
Result<BlobProperties> PropertiesOf(const HttpResponse& r);
// A write's ETag and Last-Modified.
WriteResult WriteResultOf(const HttpResponse& r);
// A read's answer ("GET": with the body, moved out of `r`; "HEAD": without):
// 200, or 304 for a conditional read (its ETag from the If-None-Match when
// the answer has none, as Azurite's has not); anything else an error.
Result<GetResult> ReadResultOf(HttpResponse& r, std::string_view method, std::string_view name,
                               const AccessConditions& c, std::string_view container);
// A lease action's answer (its success status checked by the caller): the
// lease id (cleared for a release or a break: no lease is held after them),
// ETag, Last-Modified, and x-ms-lease-time (Corruption if not a number).
Result<LeaseResult> LeaseResultOf(const HttpResponse& r, bool keeps_lease_id);

}  // namespace blobtable::internal::azure

#endif  // BLOBTABLE_STORAGE_AZURE_RESPONSES_H_
