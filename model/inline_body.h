// SPDX-License-Identifier: Apache-2.0
// A small blob's body carried in its own metadata (docs/data-model.md#stored-form):
// List Blobs returns every blob's metadata, so a listing then answers for
// the blob without a GET, with or without a cache.
//
// The copy is metadata kInlineBodyMetadata: the body in base64. It is
// trusted only where the MD5 of the decoded copy equals the blob's
// Content-MD5, which the service computes over the body it holds: a blob
// rewritten by another client that kept the old metadata, or one assembled
// from blocks (no Content-MD5), is read whole instead. The body stays the
// blob's content, so other clients read an ordinary blob.
#ifndef BLOBTABLE_MODEL_INLINE_BODY_H_
#define BLOBTABLE_MODEL_INLINE_BODY_H_

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "blobtable/blob_store.h"
#include "storage/conditions.h"

namespace blobtable::internal {

// Room a copy leaves for metadata blobtable adds to the blob later: the
// Azure backend's write id, a transaction's intent mark or stamp.
inline constexpr size_t kMetadataReserve = 512;

// Adds a copy of `body` to `metadata` if the body is at most `max_body`
// bytes and the metadata then stays within kMaxMetadataBytes less
// kMetadataReserve; otherwise removes any copy `metadata` had (it would
// describe another body). Returns whether it added one.
bool AddInlineBody(Metadata& metadata, std::string_view body, size_t max_body);

// The body `p` carries in its metadata, if it has a copy and the copy's MD5
// is p.content_md5; nullopt otherwise (then read the blob).
std::optional<std::string> InlineBody(const BlobProperties& p);

}  // namespace blobtable::internal

#endif  // BLOBTABLE_MODEL_INLINE_BODY_H_
