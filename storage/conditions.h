// SPDX-License-Identifier: Apache-2.0
// Azure's conditional-request rules and blob-name rules, evaluated locally.
// The local backend applies them to its stored blobs; the Azure backend lets
// the service do it and uses only the name rules.
#ifndef BLOBTABLE_STORAGE_CONDITIONS_H_
#define BLOBTABLE_STORAGE_CONDITIONS_H_

#include <string_view>

#include "blobtable/blob_store.h"

namespace blobtable::internal {

// What a condition check needs to know about the blob as it is now.
struct BlobVersion {
  std::string_view etag;
  TimePoint last_modified;
};

// True if any condition is set (a conditional request).
bool HasConditions(const AccessConditions& c);

// Read conditions against an existing blob. OK and *not_modified=true when
// If-None-Match / If-Modified-Since call for a 304; Conflict/412
// ConditionNotMet when If-Match / If-Unmodified-Since fail.
Status CheckReadConditions(const AccessConditions& c, const BlobVersion& blob, bool* not_modified);

// Write conditions. `blob` is null when the blob does not exist (only Put
// reaches here then: other writes fail 404 first). `is_put` selects Azure's
// 409 BlobAlreadyExists for If-None-Match "*" on an existing blob.
Status CheckWriteConditions(const AccessConditions& c, const BlobVersion* blob, bool is_put);

// Blob names: 1..1,024 characters of valid UTF-8, split by '/' into
// segments none of which is empty, "." or ".." (a service or an HTTP library
// would normalise them, and a name could leave its container), not ending in
// '.', with no control character (U+0000-U+001F, U+007F-U+009F) and no
// U+FFFE or U+FFFF (Azurite's listing breaks on them). InvalidArgument/400
// InvalidResourceName otherwise. The same rule for every backend.
Status ValidateBlobName(std::string_view name);

// Azure's bound on a blob's metadata, names and values together.
inline constexpr size_t kMaxMetadataBytes = 8u << 10;

// User metadata: names are C# identifiers; values printable ASCII without
// leading or trailing spaces (HTTP trims them, and Shared Key signs the
// trimmed value); kMaxMetadataBytes in all. InvalidArgument/400 otherwise.
Status ValidateMetadata(const Metadata& metadata);

// Container names: 3..63 characters, lowercase letters, digits and single
// hyphens, starting and ending with a letter or digit.
Status ValidateContainerName(std::string_view name);

}  // namespace blobtable::internal

#endif  // BLOBTABLE_STORAGE_CONDITIONS_H_
