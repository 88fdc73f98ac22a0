// SPDX-License-Identifier: Apache-2.0
// Every name blobtable writes to storage, in one place: what a stored blob,
// its metadata, or a local store's files are called. Changing any of these
// changes the stored format (existing stores would no longer be read).
// docs/data-model.md#blob-naming, docs/transactions.md#the-protocol and
// docs/backends.md#the-local-backend describe them.
#ifndef BLOBTABLE_UTIL_STORED_FORMAT_H_
#define BLOBTABLE_UTIL_STORED_FORMAT_H_

namespace blobtable::internal {

// ---- Blob names (any backend) ----
// Entity blobs "t/<table>/e/-<key(PK)>/-<key(RK)>", partition lock blobs
// "t/<table>/l/-<key(PK)>" (model/blob_naming.h), transaction records
// "x/<txn id>" and markers of transactions in flight "p/<txn id>"
// (txn/txn_record.h).
inline constexpr char kTablePrefix[] = "t/";
inline constexpr char kEntitySegment[] = "e/";
inline constexpr char kLockSegment[] = "l/";
// Secondary index entries "t/<table>/i/<index>/..." (model/index_naming.h).
inline constexpr char kIndexSegment[] = "i/";
inline constexpr char kRecordPrefix[] = "x/";
inline constexpr char kMarkerPrefix[] = "p/";

// ---- Blob metadata (lowercase: Azure returns names lowercased) ----
// A write's client-generated id (Azure backend; hidden from callers): tells
// a retried write's own effect from another writer's.
inline constexpr char kWriteIdMetadata[] = "blobtablewriteid";
// On a lock blob: the transaction holding the partition; on an entity blob:
// the transaction whose committed write it holds (a stamp). Value: txn id.
inline constexpr char kTxnMetadata[] = "btxn";
// Marks of the first commit protocol (value: txn id): an entity it was
// about to write, and a reservation for one it would create. Recognised
// only to refuse a store that still holds them (txn/txn_record.h).
inline constexpr char kProtocolOneIntentMetadata[] = "btint";
inline constexpr char kProtocolOneReservationMetadata[] = "btres";
// An entity blob whose body is a transaction's intent (txn/intent.h), not
// an entity: both versions, until that transaction is decided and the blob
// is rewritten plain (value: txn id). Written by the protocol since format 2.
inline constexpr char kPrewriteMetadata[] = "btpw";
// On a blob that finished or undid an intent: the handles (ETags) of the
// version it continues, space-separated, newest first, at most four: the
// intent's, after a commit; after an abort, or after a commit of an entity
// the transaction only read, the ETag the intent replaced and the handles
// that version carried. A condition on any of them still means this version.
inline constexpr char kSameAsMetadata[] = "btsame";
// A copy of a small blob's whole body, base64 (model/inline_body.h), so a
// listing answers for it without a GET. Trusted only while the MD5 of the
// copy equals the blob's Content-MD5.
inline constexpr char kInlineBodyMetadata[] = "btbody";

// ---- The local backend's files and LMDB databases ----
inline constexpr char kStoreMarkerFile[] = "blobtable.store";  // beside data.mdb
inline constexpr char kContainerDbPrefix[] = "container:";     // + container: buckets
inline constexpr char kDataDbPrefix[] = "data:";               // + container: blob data
inline constexpr char kMetaDb[] = "meta";  // the local cache's too (cache/blob_cache.cc)
inline constexpr char kEtagCounterKey[] = "etag-counter";           // in kMetaDb
inline constexpr char kBucketSchemeKeyPrefix[] = "bucket-scheme:";  // + container, in kMetaDb

}  // namespace blobtable::internal

#endif  // BLOBTABLE_UTIL_STORED_FORMAT_H_
