// SPDX-License-Identifier: Apache-2.0
// How the local backend stores blobs in LMDB.
//
// LMDB keys are at most 511 bytes but blob names may be up to 1,024
// characters, so blobs live in *buckets*, one LMDB value per key:
// - a name of up to kBucketPrefix (480) bytes is its own key;
// - a longer one is keyed by its first kGroupPrefix (448) bytes and the
//   SHA-256 of the whole name (32 bytes).
// So every bucket holds one blob, whatever the key lengths (a partition
// under a long PartitionKey is not one shared bucket). Order: keys no
// longer than 448 bytes sort as their names do. Keys longer than 448 bytes
// that share their first 448 (a *group*: the names longer than 448 bytes
// with that prefix) lie together in key order, each group exactly where its
// names belong, but inside a group the digests scramble the order: a
// listing reads a group whole and sorts it by name. Blob data is not in the
// bucket: it lives in a second database under an 8-byte id.
//
// Stores written before 2026-11 keyed names over 480 bytes by their first
// 480 bytes, many to a bucket; they are re-keyed once, when their container
// is opened (MigrateBuckets).
//
// Value format 5 (written since 2026-11-29): format 4's record made small
// (a record's head went from about 240 bytes to about 80: issue 57). The
// byte 0xB5; the CRC-32 of the head, seeded with the CRC-32 of the record's
// LMDB key, so that a key changed on disk is damage, not another blob (or
// a blob its name no longer finds); the head's length (a varint: LEB128,
// unsigned); the head; then inline data, as in format 4. The head: flags (1
// byte: 1 inline, 2 data_crc present, 4 the name is the LMDB key and is not
// stored, 8 lease fields present, 16 ETag packed, 32 MD5 packed);
// last_modified_s (a signed varint: zigzag, then LEB128); if 8: lease_state
// (1 byte), lease_duration, lease_expires_ms, lease_broken_at_ms (signed
// varints) and lease_id (a string: a varint length and its bytes); data_id
// and data_size (varints); if 2, data_crc (4 bytes); unless 4, the name; the
// number of metadata pairs (varint); the ETag: if 16, the 16 bytes whose 32
// uppercase hex digits make `"0x<digits>"` (the local backend's form), else
// a string; the MD5: if 32, its 16 bytes (base64 when read), else a string;
// then each pair: its name (a string) and its value: a varint v, then v/2
// bytes when v is even, or when v is 1 the 16 bytes of a lowercase UUID in
// canonical form (a transaction id). A later format may add bytes after the
// metadata: readers skip them. Readers write packed fields out into
// RecordView::unpacked. Binaries from before format 5 refuse it as
// Corruption: processes sharing a store upgrade together.
//
// Value format 4 (written 2026-11-27 to 29; still read): one blob's record, its *head*
// apart from its data, so that a reader can check the head without reading
// the data. The byte 0xB4; the CRC-32 of the head (gzip's, as zlib computes
// it); the head's length; the head; then the blob's data if it is kept
// inline (up to kInlineDataBytes, data_id 0), else nothing. Integers are
// little-endian, 4 bytes unless said. The head: flags (1 byte: 1 inline, 2
// data_crc present), lease_state (1 byte), last_modified_s (8),
// lease_duration, lease_expires_ms (8), lease_broken_at_ms (8), data_id (8),
// data_size (8), data_crc, then name, etag, lease_id, data_md5 (each a
// length and its bytes), the number of metadata pairs and each pair's name
// and value (the same). A later format may add bytes after the metadata,
// inside the head's length: readers skip them. Inline data is covered by
// data_crc (always present with it), not by the head's CRC: it is checked
// when it is read out (ReadData with InPlaceData::kChecked), and a reader that
// hands it over where it lies may leave it unchecked (in_place.h).
//
// Format 3 (written 2026-11-25 to 27; still read): the byte 0xB2, the
// CRC-32 of everything after it, then msgpack [3, [[name, record], ...]]
// with record = [etag, last_modified_s, {metadata}, lease_state, lease_id,
// lease_duration, lease_expires_ms, lease_broken_at_ms, data_id, data_size,
// data_crc or nil, data_md5 or nil, data or nil]: inline data covered by
// the record's checksum.
// Format 2 (written until 2026-11-24; still read) is the same with 2 and no
// inline data; its records written before 2026-11-24 end at data_crc (11
// fields), and readers take any record of at least 11.
// Format 1 (still read; written until 2026-11) is the bare
// msgpack [1, entries] with 10-field records: no checksum anywhere.
// A record of an older format is rewritten in format 4 when it next changes.
// Binaries from before format 4 refuse a format-4 value as Corruption (to
// them it is no bucket): processes sharing a store upgrade together.
#ifndef BLOBTABLE_STORAGE_LOCAL_BLOB_RECORD_H_
#define BLOBTABLE_STORAGE_LOCAL_BLOB_RECORD_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <lmdb.h>

#include "blobtable/blob_store.h"
#include "storage/in_place.h"
#include "storage/lease_rules.h"
#include "util/digest.h"  // Crc32
#include "util/function_ref.h"

namespace blobtable::internal {

inline constexpr size_t kBucketPrefix = 480;  // < LMDB's 511-byte key limit
inline constexpr size_t kGroupPrefix = 448;   // + a 32-byte digest = 480
// Data up to this size is kept in its record (see above). A record with it
// still fits a page or two; lease changes, which rewrite only the record,
// copy it too.
inline constexpr size_t kInlineDataBytes = 4096;

struct BlobRecord {
  std::string etag;
  int64_t last_modified_s = 0;
  Metadata metadata;
  lease::LeaseRecord lease;
  uint64_t data_id = 0;                    // key of the data in the data database; 0 if inline
  std::optional<std::string> inline_data;  // the data, if kept in the record
  uint64_t data_size = 0;
  // CRC-32 of the data, checked on every read; none for blobs written in
  // format 1 and not rewritten since.
  std::optional<uint32_t> data_crc;
  // The data's MD5 in base64 (the Content-MD5 that Azure reports); empty for
  // blobs written before it was kept.
  std::string data_md5;
};

// The key of a blob's data in the data database: its id, big-endian.
inline void DataKey(uint64_t id, char out[8]) {
  for (int i = 0; i < 8; ++i) out[i] = static_cast<char>(id >> (56 - 8 * i));
}

struct BucketEntry {
  std::string name;
  BlobRecord record;
};

// Entries sorted by name.
using Bucket = std::vector<BucketEntry>;

// A stored record viewed where it lies: its strings point into the LMDB
// value it was decoded from, valid while that value is (its transaction).
// Reads decode into it without copying what they do not keep.
struct RecordView {
  RecordView() = default;
  // Not copied: a copy's views would point into this one's `unpacked`.
  RecordView(const RecordView&) = delete;
  RecordView& operator=(const RecordView&) = delete;

  std::string_view name;
  std::string_view etag;
  int64_t last_modified_s = 0;
  std::vector<std::pair<std::string_view, std::string_view>> metadata;  // as stored
  LeaseState lease_state = LeaseState::kAvailable;
  std::string_view lease_id;
  int lease_duration_seconds = 0;
  int64_t lease_expires_ms = 0;
  int64_t lease_broken_at_ms = 0;
  uint64_t data_id = 0;
  uint64_t data_size = 0;
  std::optional<uint32_t> data_crc;
  std::optional<std::string_view> inline_data;
  // The data's MD5 as stored: base64 text, or (data_md5_packed) its 16
  // bytes, written out only when asked for (DataMd5): most reads never do.
  std::string_view data_md5;
  bool data_md5_packed = false;
  // Where a packed ETag is written out for `etag` (format 5), and the
  // transaction ids of `metadata`: no allocation for a record without
  // packed metadata. Reused from record to record.
  char etag_text[36] = {};
  std::string unpacked;

  // The data's MD5 in base64 (the Content-MD5 Azure reports); empty if
  // none is kept.
  std::string DataMd5() const;
  lease::LeaseRecord Lease() const;
  BucketEntry ToEntry() const;  // a copy that owns its strings
};

// The data of record `r`: its inline data, or from data database `data` in
// `txn`, checked against its checksum (if it has one) unless `check` says
// not (storage/in_place.h says when a reader may skip it). Corruption
// naming the blob if it is missing or does not match;
// IOError if LMDB fails. Valid while `txn` and `r` are. The BucketEntry
// form always checks.
Result<std::string_view> ReadData(MDB_txn* txn, MDB_dbi data, const RecordView& r,
                                  InPlaceData check = InPlaceData::kChecked);
Result<std::string_view> ReadData(MDB_txn* txn, MDB_dbi data, const BucketEntry& e);

// The LMDB key of blob `name`'s bucket.
std::string BucketKey(std::string_view name);
// The same without copying a name that is its own key: a view of `name`,
// or of `scratch` holding the key of a long name.
std::string_view BucketKey(std::string_view name, std::string& scratch);

// Where a listing that must include `name` (or names after it) starts: the
// name itself, or the start of the group it falls in.
inline std::string_view SeekKey(std::string_view name) {
  return name.substr(0, std::min(name.size(), kGroupPrefix));
}

// True if LMDB key `key` is in a group (see above): read with its group.
inline bool InGroup(std::string_view key) { return key.size() > kGroupPrefix; }

// The value (format 5) of a bucket holding blob `e`.
std::string EncodeRecord(const BucketEntry& e);
// The same in format 4, as stores written before format 5 hold it (for
// tests of reading them).
std::string EncodeFormat4Record(const BucketEntry& e);
// True if bucket value `value` is in the format EncodeRecord writes (by
// its first byte: not checked).
bool IsCurrentFormat(std::string_view value);

// A call back for each record (it never allocates: util/function_ref.h).
using RecordSink = FunctionRef<void(const RecordView&)>;

// Calls `fn(const RecordView&)` for each record of bucket `value` (LMDB key
// `key`) in stored order, after checking the bucket's checksum; the view is
// reused between calls. Corruption naming `key` if the value is not a
// bucket of a known format or its checksum does not match (then `fn` has
// seen none of it: the checksum is checked first; a malformed record after
// well-formed ones is reported after `fn` saw those).
Status VisitBucket(std::string_view value, std::string_view key, RecordSink fn);
// The same, reading into `scratch`: a caller that reads many buckets keeps
// one, so that each read reuses its metadata's storage.
Status VisitBucket(std::string_view value, std::string_view key, RecordView& scratch,
                   RecordSink fn);

// The whole bucket, copied out. Errors as VisitBucket's.
Result<Bucket> DecodeBucket(std::string_view value, std::string_view key);

}  // namespace blobtable::internal

#endif  // BLOBTABLE_STORAGE_LOCAL_BLOB_RECORD_H_
