// SPDX-License-Identifier: Apache-2.0
// What the Azure backend reads out of the service's answers, apart from the
// requests, so that it can be tested and fuzzed on its own: ETags, lease
// headers, and List Blobs' XML. Nothing here throws; malformed input is
// Corruption.
#ifndef BLOBTABLE_STORAGE_AZURE_AZURE_PARSING_H_
#define BLOBTABLE_STORAGE_AZURE_AZURE_PARSING_H_

#include <string>
#include <string_view>

#include "blobtable/blob_store.h"

namespace blobtable::internal {

// RFC 1123 dates, as HTTP headers and List Blobs carry them ("Sun, 06 Nov
// 1994 08:49:37 GMT"); ParseHttpDate is false for anything else, and for
// years outside 1678..2261 (what a TimePoint holds).
std::string FormatHttpDate(TimePoint t);
bool ParseHttpDate(const std::string& text, TimePoint* out);

// An ETag in the quotes blobtable compares with ("0x1" -> "\"0x1\"").
std::string Quoted(std::string etag);
// x-ms-lease-state / -duration (and their List Blobs twins); null or
// unknown: available / none.
LeaseState ParseLeaseState(const std::string* s);
LeaseDurationType ParseLeaseDuration(const std::string* s);

// One page of a List Blobs answer to `o` (prefix, marker, start_from):
// names (percent-decoded where the service encoded them), properties,
// Content-MD5, lease state and metadata (the write id hidden), names before
// o.start_from dropped (a service that ignores startFrom still gives correct
// pages). Corruption if the XML is malformed, a number in it is not one, or
// the next marker is the one given (the listing would never end).
Result<ListPage> ParseListBlobs(std::string_view xml, const ListOptions& o);

}  // namespace blobtable::internal

#endif  // BLOBTABLE_STORAGE_AZURE_AZURE_PARSING_H_
