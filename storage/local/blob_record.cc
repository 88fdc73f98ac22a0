// SPDX-License-Identifier: Apache-2.0
#include "storage/local/blob_record.h"

#include <openssl/evp.h>

#include <cstring>

#include "storage/local/lmdb_env.h"
#include "util/digest.h"
#include "util/msgpack_util.h"

namespace blobtable::internal {

namespace {
constexpr int kBucketFormat = 3;
constexpr char kFormat2Tag = '\xB2';  // never the first byte of format 1 (0x92)
constexpr size_t kBucketHeader = 5;   // tag and CRC
}  // namespace

std::string BucketKey(std::string_view name) {
  if (name.size() <= kBucketPrefix) return std::string(name);
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int size = 0;
  EVP_Digest(name.data(), name.size(), digest, &size, EVP_sha256(), nullptr);
  std::string key(name.substr(0, kGroupPrefix));
  key.append(reinterpret_cast<const char*>(digest), 32);
  return key;
}

Result<std::string_view> ReadData(MDB_txn* txn, MDB_dbi data, const BucketEntry& e) {
  if (e.record.inline_data) return std::string_view(*e.record.inline_data);
  char key[8];
  DataKey(e.record.data_id, key);
  MDB_val k{sizeof(key), key}, v;
  int rc = mdb_get(txn, data, &k, &v);
  if (rc == MDB_NOTFOUND)
    return Status::Corruption("local store: the data of blob '" + e.name + "' is missing");
  if (rc != 0) return LmdbError(rc, "reading the data of blob '" + e.name + "'");
  std::string_view bytes = FromVal(v);
  if (e.record.data_crc && Crc32(bytes) != *e.record.data_crc)
    return Status::Corruption("local store: the data of blob '" + e.name +
                              "' does not match its checksum (damaged on disk); delete or "
                              "overwrite it, and see `blobtable check`");
  return bytes;
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

Result<Bucket> DecodeBucket(std::string_view value, std::string_view key) {
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
  auto oh = mp::Unpack(value, what);
  if (!oh.ok()) return oh.status();
  Bucket bucket;
  Status s = mp::Guard(what, [&] {
    const msgpack::object* top = mp::Array(oh->get(), 2, "bucket");
    const int64_t format = mp::Int(top[0], "format");
    if (checksummed ? format != 2 && format != kBucketFormat : format != 1)
      throw mp::FormatError{"unknown format version"};
    const msgpack::object& list = top[1];
    const msgpack::object* entries = mp::Array(list, 0, "entries");
    for (uint32_t i = 0; i < list.via.array.size; ++i) {
      const msgpack::object* pair = mp::Array(entries[i], 2, "entry");
      BucketEntry e;
      e.name = mp::Str(pair[0], "name");
      const msgpack::object* f = mp::Array(pair[1], format == 1 ? 10 : 11, "record");
      const uint32_t fields = pair[1].via.array.size;
      BlobRecord& r = e.record;
      r.etag = mp::Str(f[0], "etag");
      r.last_modified_s = mp::Int(f[1], "last_modified");
      if (f[2].type != msgpack::type::MAP) throw mp::FormatError{"metadata is not a map"};
      for (uint32_t k = 0; k < f[2].via.map.size; ++k)
        r.metadata[mp::Str(f[2].via.map.ptr[k].key, "metadata name")] =
            mp::Str(f[2].via.map.ptr[k].val, "metadata value");
      int64_t state = mp::Int(f[3], "lease_state");
      if (state < 0 || state > static_cast<int>(LeaseState::kBroken))
        throw mp::FormatError{"lease state out of range"};
      r.lease.state = static_cast<LeaseState>(state);
      r.lease.id = mp::Str(f[4], "lease_id");
      r.lease.duration_seconds = static_cast<int>(mp::Int(f[5], "lease_duration"));
      r.lease.expires_ms = mp::Int(f[6], "lease_expires");
      r.lease.broken_at_ms = mp::Int(f[7], "lease_broken_at");
      r.data_id = mp::UInt(f[8], "data_id");
      r.data_size = mp::UInt(f[9], "data_size");
      if (format >= 2 && f[10].type != msgpack::type::NIL)
        r.data_crc = static_cast<uint32_t>(mp::UInt(f[10], "data_crc"));
      if (format >= 2 && fields > 11 && f[11].type != msgpack::type::NIL)
        r.data_md5 = mp::Str(f[11], "data_md5");
      if (format == 3 && fields > 12 && f[12].type != msgpack::type::NIL) {
        if (f[12].type != msgpack::type::BIN) throw mp::FormatError{"inline data is not bytes"};
        r.inline_data.emplace(f[12].via.bin.ptr, f[12].via.bin.size);
        if (r.inline_data->size() != r.data_size)
          throw mp::FormatError{"inline data is not the size its record says"};
      }
      bucket.push_back(std::move(e));
    }
  });
  if (!s.ok()) return s;
  return bucket;
}

}  // namespace blobtable::internal
