// SPDX-License-Identifier: Apache-2.0
#include "storage/local/blob_record.h"

#include <openssl/evp.h>

#include <algorithm>
#include <cstring>

#include "storage/local/lmdb_env.h"
#include "util/digest.h"
#include "util/macros.h"
#include "util/msgpack_util.h"

namespace blobtable::internal {

namespace {
constexpr int kBucketFormat = 3;
constexpr char kFormat2Tag = '\xB2';  // never the first byte of format 1 (0x92)
constexpr size_t kBucketHeader = 5;   // tag and CRC
}  // namespace

std::string_view BucketKey(std::string_view name, std::string& scratch) {
  if (name.size() <= kBucketPrefix) return name;
  scratch = BucketKey(name);
  return scratch;
}

std::string BucketKey(std::string_view name) {
  if (name.size() <= kBucketPrefix) return std::string(name);
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int size = 0;
  EVP_Digest(name.data(), name.size(), digest, &size, EVP_sha256(), nullptr);
  std::string key(name.substr(0, kGroupPrefix));
  key.append(reinterpret_cast<const char*>(digest), 32);
  return key;
}

namespace {
Result<std::string_view> ReadStoredData(MDB_txn* txn, MDB_dbi data, std::string_view name,
                                        uint64_t data_id, const std::optional<uint32_t>& crc) {
  char key[8];
  DataKey(data_id, key);
  MDB_val k{sizeof(key), key}, v;
  int rc = mdb_get(txn, data, &k, &v);
  if (rc == MDB_NOTFOUND)
    return Status::Corruption("local store: the data of blob '" + std::string(name) +
                              "' is missing");
  if (rc != 0) return LmdbError(rc, "reading the data of blob '" + std::string(name) + "'");
  std::string_view bytes = FromVal(v);
  if (crc && Crc32(bytes) != *crc)
    return Status::Corruption("local store: the data of blob '" + std::string(name) +
                              "' does not match its checksum (damaged on disk); delete or "
                              "overwrite it, and see `blobtable check`");
  return bytes;
}
}  // namespace

Result<std::string_view> ReadData(MDB_txn* txn, MDB_dbi data, const RecordView& r) {
  if (r.inline_data) return *r.inline_data;
  return ReadStoredData(txn, data, r.name, r.data_id, r.data_crc);
}

Result<std::string_view> ReadData(MDB_txn* txn, MDB_dbi data, const BucketEntry& e) {
  if (e.record.inline_data) return std::string_view(*e.record.inline_data);
  return ReadStoredData(txn, data, e.name, e.record.data_id, e.record.data_crc);
}

lease::LeaseRecord RecordView::Lease() const {
  lease::LeaseRecord l;
  l.state = lease_state;
  l.id = std::string(lease_id);
  l.duration_seconds = lease_duration_seconds;
  l.expires_ms = lease_expires_ms;
  l.broken_at_ms = lease_broken_at_ms;
  return l;
}

BucketEntry RecordView::ToEntry() const {
  BucketEntry e;
  e.name = std::string(name);
  BlobRecord& r = e.record;
  r.etag = std::string(etag);
  r.last_modified_s = last_modified_s;
  for (const auto& [k, v] : metadata) r.metadata[std::string(k)] = std::string(v);
  r.lease = Lease();
  r.data_id = data_id;
  r.data_size = data_size;
  r.data_crc = data_crc;
  r.data_md5 = std::string(data_md5);
  if (inline_data) r.inline_data.emplace(*inline_data);
  return e;
}

std::string EncodeBucket(const Bucket& bucket) {
  msgpack::sbuffer buf;
  const char header[kBucketHeader] = {kFormat2Tag, 0, 0, 0, 0};  // CRC filled in below
  buf.write(header, kBucketHeader);
  msgpack::packer<msgpack::sbuffer> pk(&buf);
  pk.pack_array(2);
  pk.pack(kBucketFormat);
  pk.pack_array(static_cast<uint32_t>(bucket.size()));
  for (const BucketEntry& e : bucket) {
    const BlobRecord& r = e.record;
    pk.pack_array(2);
    pk.pack(e.name);
    pk.pack_array(13);
    pk.pack(r.etag);
    pk.pack(r.last_modified_s);
    pk.pack(r.metadata);
    pk.pack(static_cast<int>(r.lease.state));
    pk.pack(r.lease.id);
    pk.pack(r.lease.duration_seconds);
    pk.pack(r.lease.expires_ms);
    pk.pack(r.lease.broken_at_ms);
    pk.pack(r.data_id);
    pk.pack(r.data_size);
    if (r.data_crc)
      pk.pack(*r.data_crc);
    else
      pk.pack_nil();
    if (!r.data_md5.empty())
      pk.pack(r.data_md5);
    else
      pk.pack_nil();
    if (r.inline_data) {
      pk.pack_bin(static_cast<uint32_t>(r.inline_data->size()));
      pk.pack_bin_body(r.inline_data->data(), static_cast<uint32_t>(r.inline_data->size()));
    } else {
      pk.pack_nil();
    }
  }
  std::string out(buf.data(), buf.size());
  const uint32_t crc = Crc32(std::string_view(out).substr(kBucketHeader));
  for (int i = 0; i < 4; ++i) out[1 + i] = static_cast<char>(crc >> (8 * i));
  return out;
}

namespace {

// Reads one record's fields ([etag, last_modified, {metadata}, lease_state,
// ...], see the header) into `r`; fields of a later format are skipped.
void ReadRecord(mp::Reader& in, int64_t format, RecordView& r) {
  const uint32_t fields = in.Array("record");
  if (fields < (format == 1 ? 10u : 11u)) throw mp::FormatError{"record is not long enough"};
  r.etag = in.Str("etag");
  r.last_modified_s = in.Int("last_modified");
  r.metadata.clear();
  const uint32_t pairs = in.Map("metadata");
  for (uint32_t i = 0; i < pairs; ++i) {
    const std::string_view name = in.Str("metadata name");
    r.metadata.emplace_back(name, in.Str("metadata value"));
  }
  const int64_t state = in.Int("lease_state");
  if (state < 0 || state > static_cast<int>(LeaseState::kBroken))
    throw mp::FormatError{"lease state out of range"};
  r.lease_state = static_cast<LeaseState>(state);
  r.lease_id = in.Str("lease_id");
  r.lease_duration_seconds = static_cast<int>(in.Int("lease_duration"));
  r.lease_expires_ms = in.Int("lease_expires");
  r.lease_broken_at_ms = in.Int("lease_broken_at");
  r.data_id = in.UInt("data_id");
  r.data_size = in.UInt("data_size");
  r.data_crc.reset();
  r.data_md5 = {};
  r.inline_data.reset();
  // The optional fields: those the record has, in order, nil where absent.
  const uint32_t optional = std::min(fields, 13u) - 10;
  for (uint32_t i = 0; i < optional; ++i) {
    const mp::Item it = in.Next();
    if (format < 2 || it.IsNil()) continue;
    if (i == 0) r.data_crc = static_cast<uint32_t>(it.UInt("data_crc"));
    if (i == 1) r.data_md5 = it.Str("data_md5");
    if (i == 2 && format == 3) {
      r.inline_data = it.Bin("inline data");
      if (r.inline_data->size() != r.data_size)
        throw mp::FormatError{"inline data is not the size its record says"};
    }
  }
  in.Skip(fields - 10 - optional);
}

// Reads a bucket's msgpack ([format, [[name, record], ...]]), calling `fn`
// with each record in turn; items a later format may add (after the
// entries, after an entry's record) are skipped.
void ReadBucket(std::string_view value, bool checksummed, RecordSink fn) {
  mp::Reader in(value);
  const uint32_t top = in.Array("bucket");
  if (top < 2) throw mp::FormatError{"bucket is not long enough"};
  const int64_t format = in.Int("format");
  if (checksummed ? format != 2 && format != kBucketFormat : format != 1)
    throw mp::FormatError{"unknown format version"};
  const uint32_t entries = in.Array("entries");
  RecordView view;
  // The metadata's vector is kept from read to read on each thread (a
  // read would allocate it otherwise); a nested read takes an empty one.
  thread_local std::vector<std::pair<std::string_view, std::string_view>> kept;
  view.metadata.swap(kept);
  for (uint32_t i = 0; i < entries; ++i) {
    const uint32_t items = in.Array("entry");
    if (items < 2) throw mp::FormatError{"entry is not long enough"};
    view.name = in.Str("name");
    ReadRecord(in, format, view);
    in.Skip(items - 2);
    fn(view);
  }
  in.Skip(top - 2);
  in.ExpectEnd();
  view.metadata.swap(kept);
}

}  // namespace

Status VisitBucket(std::string_view value, std::string_view key, RecordSink fn) {
  const mp::What what("local blob bucket", key);
  bool checksummed = false;  // formats 2 and 3; format 1 has no header
  if (!value.empty() && value[0] == kFormat2Tag) {
    if (value.size() < kBucketHeader) return Status::Corruption(what.str() + ": cut short");
    uint32_t stored = 0;
    for (int i = 0; i < 4; ++i)
      stored |= uint32_t{static_cast<unsigned char>(value[1 + i])} << (8 * i);
    value.remove_prefix(kBucketHeader);
    if (Crc32(value) != stored)
      return Status::Corruption(what.str() +
                                ": its checksum does not match (the record is damaged)");
    checksummed = true;
  }
  return mp::Guard(what, [&] { ReadBucket(value, checksummed, fn); });
}

Result<Bucket> DecodeBucket(std::string_view value, std::string_view key) {
  Bucket bucket;
  BT_RETURN_IF_ERROR(
      VisitBucket(value, key, [&](const RecordView& r) { bucket.push_back(r.ToEntry()); }));
  return bucket;
}

}  // namespace blobtable::internal
