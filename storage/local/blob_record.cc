// SPDX-License-Identifier: Apache-2.0
#include "storage/local/blob_record.h"

#include <openssl/evp.h>

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

// Walks a bucket's msgpack ([format, [[name, [fields...]], ...]]) into one
// RecordView at a time. Depths: 1 the top array's items, 2 the entries, 3
// an entry's name and record, 4 the record's fields, 5 the metadata map.
class BucketWalker {
 public:
  BucketWalker(bool checksummed, RecordSink fn) : checksummed_(checksummed), fn_(fn) {}

  void operator()(const mp::Path& p, const mp::Item& it) {
    // Elements a later format may add are skipped: items after the entries,
    // after an entry's record, and inside record fields other than metadata.
    if ((p.depth >= 2 && p.index[0] != 1) || (p.depth >= 4 && p.index[2] != 1) ||
        (p.depth >= 5 && p.index[3] != 2))
      return;
    switch (p.depth) {
      case 0: return Top(it);
      case 1: return TopItem(p.Last(), it);
      case 2: return Entry(it);
      case 3: return EntryItem(p.Last(), it);
      case 4: return Field(p.Last(), it);
      case 5: return Metadata(p.Last(), it);
      default: return;  // below a metadata value, which is refused as not a string
    }
  }

 private:
  void Top(const mp::Item& it) {
    if (it.kind == mp::Item::kArray && it.size < 2)
      throw mp::FormatError{"bucket is not long enough"};
    if (it.kind != mp::Item::kArray && it.kind != mp::Item::kEnd)
      throw mp::FormatError{"bucket is not an array"};
  }
  void TopItem(uint32_t index, const mp::Item& it) {
    if (index == 0) {
      format_ = it.Int("format");
      if (checksummed_ ? format_ != 2 && format_ != kBucketFormat : format_ != 1)
        throw mp::FormatError{"unknown format version"};
    } else if (index == 1 && it.kind != mp::Item::kArray && it.kind != mp::Item::kEnd) {
      throw mp::FormatError{"entries is not an array"};
    }
  }
  void Entry(const mp::Item& it) {
    if (it.kind == mp::Item::kEnd) {
      if (fields_ < (format_ == 1 ? 10u : 11u)) throw mp::FormatError{"record is not long enough"};
      fn_(view_);
      return;
    }
    if (it.kind != mp::Item::kArray) throw mp::FormatError{"entry is not an array"};
    if (it.size < 2) throw mp::FormatError{"entry is not long enough"};
    view_.metadata.clear();
    view_.data_crc.reset();
    view_.data_md5 = {};
    view_.inline_data.reset();
    fields_ = 0;
  }
  void EntryItem(uint32_t index, const mp::Item& it) {
    if (index == 0) view_.name = it.Str("name");
    if (index == 1 && it.kind != mp::Item::kArray && it.kind != mp::Item::kEnd)
      throw mp::FormatError{"record is not an array"};
    if (index == 1 && it.kind == mp::Item::kArray) fields_ = it.size;
  }
  void Field(uint32_t index, const mp::Item& it) {
    RecordView& r = view_;
    switch (index) {
      case 0: r.etag = it.Str("etag"); break;
      case 1: r.last_modified_s = it.Int("last_modified"); break;
      case 2:
        if (it.kind != mp::Item::kMap && it.kind != mp::Item::kEnd)
          throw mp::FormatError{"metadata is not a map"};
        break;
      case 3: {
        const int64_t state = it.Int("lease_state");
        if (state < 0 || state > static_cast<int>(LeaseState::kBroken))
          throw mp::FormatError{"lease state out of range"};
        r.lease_state = static_cast<LeaseState>(state);
        break;
      }
      case 4: r.lease_id = it.Str("lease_id"); break;
      case 5: r.lease_duration_seconds = static_cast<int>(it.Int("lease_duration")); break;
      case 6: r.lease_expires_ms = it.Int("lease_expires"); break;
      case 7: r.lease_broken_at_ms = it.Int("lease_broken_at"); break;
      case 8: r.data_id = it.UInt("data_id"); break;
      case 9: r.data_size = it.UInt("data_size"); break;
      case 10:
        if (format_ >= 2 && !it.IsNil()) r.data_crc = static_cast<uint32_t>(it.UInt("data_crc"));
        break;
      case 11:
        if (format_ >= 2 && !it.IsNil()) r.data_md5 = it.Str("data_md5");
        break;
      case 12:
        if (format_ == 3 && !it.IsNil()) {
          r.inline_data = it.Bin("inline data");
          if (r.inline_data->size() != r.data_size)
            throw mp::FormatError{"inline data is not the size its record says"};
        }
        break;
      default: break;  // fields of a later format
    }
  }
  void Metadata(uint32_t index, const mp::Item& it) {
    if (index % 2 == 0)
      view_.metadata.emplace_back(it.Str("metadata name"), std::string_view());
    else
      view_.metadata.back().second = it.Str("metadata value");
  }

  const bool checksummed_;
  const RecordSink fn_;
  int64_t format_ = 0;
  uint32_t fields_ = 0;
  RecordView view_;
};

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
  return mp::Walk(value, what, BucketWalker(checksummed, fn));
}

Result<Bucket> DecodeBucket(std::string_view value, std::string_view key) {
  Bucket bucket;
  BT_RETURN_IF_ERROR(
      VisitBucket(value, key, [&](const RecordView& r) { bucket.push_back(r.ToEntry()); }));
  return bucket;
}

}  // namespace blobtable::internal
