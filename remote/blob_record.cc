#include "remote/blob_record.h"

#include "kv/msgpack_util.h"

namespace blobtable {

namespace {
constexpr int kFormat = 1;
}

std::string EncodeBucket(const Bucket& bucket) {
  msgpack::sbuffer buf;
  msgpack::packer<msgpack::sbuffer> pk(&buf);
  pk.pack_array(2);
  pk.pack(kFormat);
  pk.pack_array(static_cast<uint32_t>(bucket.size()));
  for (const BucketEntry& e : bucket) {
    const BlobRecord& r = e.record;
    pk.pack_array(2);
    pk.pack(e.name);
    pk.pack_array(10);
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
  }
  return std::string(buf.data(), buf.size());
}

Result<Bucket> DecodeBucket(std::string_view value, std::string_view key) {
  std::string what = "local blob bucket '" + std::string(key) + "'";
  auto oh = mp::Unpack(value, what);
  if (!oh.ok()) return oh.status();
  Bucket bucket;
  Status s = mp::Guard(what, [&] {
    const msgpack::object* top = mp::Array(oh->get(), 2, "bucket");
    if (mp::Int(top[0], "format") != kFormat) throw mp::FormatError{"unknown format version"};
    const msgpack::object& list = top[1];
    const msgpack::object* entries = mp::Array(list, 0, "entries");
    for (uint32_t i = 0; i < list.via.array.size; ++i) {
      const msgpack::object* pair = mp::Array(entries[i], 2, "entry");
      BucketEntry e;
      e.name = mp::Str(pair[0], "name");
      const msgpack::object* f = mp::Array(pair[1], 10, "record");
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
      bucket.push_back(std::move(e));
    }
  });
  if (!s.ok()) return s;
  return bucket;
}

}  // namespace blobtable
