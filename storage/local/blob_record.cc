// SPDX-License-Identifier: Apache-2.0
#include "storage/local/blob_record.h"

#include <openssl/evp.h>

#include <algorithm>
#include <bit>
#include <cstring>

#include "storage/local/lmdb_env.h"
#include "util/base64.h"
#include "util/digest.h"
#include "util/macros.h"
#include "util/msgpack_util.h"
#include "util/thread_spare.h"

namespace blobtable::internal {

namespace {
constexpr char kFormat2Tag = '\xB2';  // formats 2 and 3; never the first byte of format 1 (0x92)
constexpr size_t kBucketHeader = 5;   // tag and CRC
constexpr char kFormat4Tag = '\xB4';
constexpr size_t kFormat4Header = 9;  // tag, the head's CRC, the head's length
constexpr char kFormat5Tag = '\xB5';
// Format 4's flags, and format 5's (blob_record.h).
constexpr uint8_t kInline = 1;  // the data follows the head
constexpr uint8_t kHasCrc = 2;  // data_crc holds the data's CRC
constexpr uint8_t kNameIsKey = 4;
constexpr uint8_t kHasLease = 8;
constexpr uint8_t kEtagPacked = 16;
constexpr uint8_t kMd5Packed = 32;
constexpr uint8_t kFormat5Flags = 63;
constexpr size_t kPacked = 16;  // bytes of a packed ETag, MD5 or UUID
constexpr size_t kEtagChars = 36, kMd5Chars = 24, kUuidChars = 36;
static_assert(sizeof(RecordView::etag_text) == kEtagChars);
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
// `bytes`, the data of blob `name`, if it matches `crc` (when there is one).
Result<std::string_view> Checked(std::string_view bytes, std::string_view name,
                                 const std::optional<uint32_t>& crc) {
  if (crc && Crc32(bytes) != *crc)
    return Status::Corruption("local store: the data of blob '" + std::string(name) +
                              "' does not match its checksum (damaged on disk); delete or "
                              "overwrite it, and see `blobtable check`");
  return bytes;
}

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
  return Checked(FromVal(v), name, crc);
}
}  // namespace

Result<std::string_view> ReadData(MDB_txn* txn, MDB_dbi data, const RecordView& r,
                                  InPlaceData check) {
  const std::optional<uint32_t> none;
  const std::optional<uint32_t>& crc = check == InPlaceData::kChecked ? r.data_crc : none;
  if (r.inline_data) return Checked(*r.inline_data, r.name, crc);
  return ReadStoredData(txn, data, r.name, r.data_id, crc);
}

Result<std::string_view> ReadData(MDB_txn* txn, MDB_dbi data, const BucketEntry& e) {
  if (e.record.inline_data)
    return Checked(std::string_view(*e.record.inline_data), e.name, e.record.data_crc);
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

std::string RecordView::DataMd5() const {
  if (!data_md5_packed) return std::string(data_md5);
  std::string out;
  Base64EncodeTo(data_md5, out);
  return out;
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
  r.data_md5 = DataMd5();
  if (inline_data) r.inline_data.emplace(*inline_data);
  return e;
}

namespace {

void Put8(std::string& out, uint8_t v) { out.push_back(static_cast<char>(v)); }
void Put32(std::string& out, uint32_t v) {
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<char>(v >> (8 * i)));
}
void Put64(std::string& out, uint64_t v) {
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<char>(v >> (8 * i)));
}
void PutStr(std::string& out, std::string_view s) {
  Put32(out, static_cast<uint32_t>(s.size()));
  out.append(s);
}

// A little-endian integer at `p`: one load (blobtable builds for
// little-endian machines only, as util/msgpack_util.h says).
template <typename T>
T GetLE(const char* p) {
  static_assert(std::endian::native == std::endian::little, "format 4 is little-endian");
  T v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
uint32_t Get32(const char* p) { return GetLE<uint32_t>(p); }

// Reads a head (format 4's variable part, or format 5's) field by field;
// a read past its end, or a varint longer than 64 bits, answers zero or
// empty and marks it cut short.
class HeadReader {
 public:
  explicit HeadReader(std::string_view head) : head_(head) {}
  uint8_t Byte() { return Take(1) ? static_cast<uint8_t>(head_[pos_ - 1]) : 0; }
  uint32_t U32() { return Take(4) ? Get32(head_.data() + pos_ - 4) : 0; }
  uint64_t Varint() {
    uint64_t v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      const uint8_t b = Byte();
      if (short_read_) return 0;
      v |= uint64_t{b & 0x7Fu} << shift;
      if (b < 0x80) return v;
    }
    short_read_ = true;
    return 0;
  }
  int64_t Signed() {
    const uint64_t v = Varint();
    return static_cast<int64_t>(v >> 1) ^ -static_cast<int64_t>(v & 1);
  }
  std::string_view Bytes(uint64_t n) {
    return Take(n) ? head_.substr(pos_ - n, n) : std::string_view();
  }
  std::string_view Str32() { return Bytes(U32()); }   // format 4: a 4-byte length
  std::string_view Str() { return Bytes(Varint()); }  // format 5: a varint length
  size_t left() const { return head_.size() - pos_; }
  bool short_() const { return short_read_; }

 private:
  bool Take(uint64_t n) {
    if (short_read_ || head_.size() - pos_ < n) {
      short_read_ = true;
      return false;
    }
    pos_ += n;
    return true;
  }
  std::string_view head_;
  size_t pos_ = 0;
  bool short_read_ = false;
};

}  // namespace

std::string EncodeFormat4Record(const BucketEntry& e) {
  const BlobRecord& r = e.record;
  std::string out(kFormat4Header, '\0');
  out[0] = kFormat4Tag;
  std::optional<uint32_t> crc = r.data_crc;
  // An inline value is always checked by its own CRC here (format 3 covered
  // it by the record's, which was checked when this record was read).
  if (r.inline_data && !crc) crc = Crc32(*r.inline_data);
  Put8(out, (r.inline_data ? kInline : 0) | (crc ? kHasCrc : 0));
  Put8(out, static_cast<uint8_t>(r.lease.state));
  Put64(out, static_cast<uint64_t>(r.last_modified_s));
  Put32(out, static_cast<uint32_t>(r.lease.duration_seconds));
  Put64(out, static_cast<uint64_t>(r.lease.expires_ms));
  Put64(out, static_cast<uint64_t>(r.lease.broken_at_ms));
  Put64(out, r.data_id);
  Put64(out, r.data_size);
  Put32(out, crc.value_or(0));
  PutStr(out, e.name);
  PutStr(out, r.etag);
  PutStr(out, r.lease.id);
  PutStr(out, r.data_md5);
  Put32(out, static_cast<uint32_t>(r.metadata.size()));
  for (const auto& [name, value] : r.metadata) {
    PutStr(out, name);
    PutStr(out, value);
  }
  const std::string_view head = std::string_view(out).substr(kFormat4Header);
  const uint32_t head_crc = Crc32(head), head_size = static_cast<uint32_t>(head.size());
  for (int i = 0; i < 4; ++i) {
    out[1 + i] = static_cast<char>(head_crc >> (8 * i));
    out[5 + i] = static_cast<char>(head_size >> (8 * i));
  }
  if (r.inline_data) out.append(*r.inline_data);
  return out;
}

namespace {

// ---- Format 5's parts (blob_record.h) ----

void PutVarint(std::string& out, uint64_t v) {
  while (v >= 0x80) {
    out.push_back(static_cast<char>(v | 0x80));
    v >>= 7;
  }
  out.push_back(static_cast<char>(v));
}
void PutSigned(std::string& out, int64_t v) {
  PutVarint(out, (static_cast<uint64_t>(v) << 1) ^ static_cast<uint64_t>(v >> 63));
}
void PutBytes(std::string& out, std::string_view s) {
  PutVarint(out, s.size());
  out.append(s);
}

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}

// `hex` (2n hex digits, their letters in the case asked) as n bytes
// appended to `out`; false (and `out` as it was) if a digit is not one.
bool PackHex(std::string_view hex, bool upper, std::string& out) {
  const size_t start = out.size();
  for (size_t i = 0; i + 1 < hex.size(); i += 2) {
    const char a = hex[i], b = hex[i + 1];
    const int hi = HexValue(a), lo = HexValue(b);
    auto in_case = [upper](char c) { return c <= '9' || (upper ? c <= 'F' : c >= 'a'); };
    if (hi < 0 || lo < 0 || !in_case(a) || !in_case(b)) {
      out.resize(start);
      return false;
    }
    out.push_back(static_cast<char>(hi << 4 | lo));
  }
  return true;
}
// Each byte's two hex digits, upper- and lowercase: reads write out every
// record's ETag and transaction id (32 bytes), a pair at a time.
struct HexPairs {
  char upper[512], lower[512];
  constexpr HexPairs() : upper(), lower() {
    constexpr char kUpper[] = "0123456789ABCDEF", kLower[] = "0123456789abcdef";
    for (int b = 0; b < 256; ++b) {
      upper[2 * b] = kUpper[b >> 4];
      upper[2 * b + 1] = kUpper[b & 15];
      lower[2 * b] = kLower[b >> 4];
      lower[2 * b + 1] = kLower[b & 15];
    }
  }
};
constexpr HexPairs kHexPairs;

// Writes the 2n hex digits of n bytes at `out`.
char* UnpackHex(std::string_view bytes, bool upper, char* out) {
  const char* pairs = upper ? kHexPairs.upper : kHexPairs.lower;
  for (char c : bytes) {
    std::memcpy(out, pairs + 2 * static_cast<uint8_t>(c), 2);
    out += 2;
  }
  return out;
}

// The local backend's ETag `"0x<32 uppercase hex digits>"`, packed.
bool PackEtag(std::string_view etag, std::string& out) {
  return etag.size() == kEtagChars && etag.substr(0, 3) == "\"0x" && etag.back() == '"' &&
         PackHex(etag.substr(3, 32), /*upper=*/true, out);
}
// A lowercase UUID in canonical form (8-4-4-4-12), packed.
bool PackUuid(std::string_view id, std::string& out) {
  if (id.size() != kUuidChars || id[8] != '-' || id[13] != '-' || id[18] != '-' || id[23] != '-')
    return false;
  const size_t start = out.size();
  for (auto [at, n] : {std::pair{0, 8}, {9, 4}, {14, 4}, {19, 4}, {24, 12}}) {
    if (!PackHex(id.substr(at, n), /*upper=*/false, out)) {
      out.resize(start);
      return false;
    }
  }
  return true;
}
// Appends the canonical lowercase form of packed UUID `b` to `out`.
void UnpackUuid(std::string_view b, std::string& out) {
  // Where each byte's two digits go in 8-4-4-4-12.
  static constexpr uint8_t kAt[kPacked] = {0,  2,  4,  6,  9,  11, 14, 16,
                                           19, 21, 24, 26, 28, 30, 32, 34};
  char text[kUuidChars];
  text[8] = text[13] = text[18] = text[23] = '-';
  for (size_t i = 0; i < kPacked; ++i)
    std::memcpy(text + kAt[i], kHexPairs.lower + 2 * static_cast<uint8_t>(b[i]), 2);
  out.append(text, kUuidChars);
}
// Writes `"0x<digits>"` of packed ETag `b` at `text` (kEtagChars).
void UnpackEtag(std::string_view b, char* text) {
  text[0] = '"';
  text[1] = '0';
  text[2] = 'x';
  UnpackHex(b, /*upper=*/true, text + 3);
  text[kEtagChars - 1] = '"';
}

// Content-MD5 in canonical base64 of 16 bytes, packed.
bool PackMd5(std::string_view md5, std::string& out) {
  if (md5.size() != kMd5Chars) return false;
  auto raw = Base64Decode(md5);
  if (!raw.ok() || raw->size() != kPacked) return false;
  out.append(*raw);
  return true;
}

bool HasLease(const lease::LeaseRecord& l) {
  return l.state != LeaseState::kAvailable || !l.id.empty() || l.duration_seconds != 0 ||
         l.expires_ms != 0 || l.broken_at_ms != 0;
}

}  // namespace

bool IsCurrentFormat(std::string_view value) { return !value.empty() && value[0] == kFormat5Tag; }

std::string EncodeRecord(const BucketEntry& e) {
  const BlobRecord& r = e.record;
  std::optional<uint32_t> crc = r.data_crc;
  if (r.inline_data && !crc) crc = Crc32(*r.inline_data);  // as format 4
  const bool name_is_key = e.name.size() <= kBucketPrefix;
  std::string head;
  head.reserve(96 + r.metadata.size() * 48 + (name_is_key ? 0 : e.name.size()));
  head.push_back(0);  // the flags, set below
  uint8_t flags =
      (r.inline_data ? kInline : 0) | (crc ? kHasCrc : 0) | (name_is_key ? kNameIsKey : 0);
  PutSigned(head, r.last_modified_s);
  if (HasLease(r.lease)) {
    flags |= kHasLease;
    head.push_back(static_cast<char>(r.lease.state));
    PutSigned(head, r.lease.duration_seconds);
    PutSigned(head, r.lease.expires_ms);
    PutSigned(head, r.lease.broken_at_ms);
    PutBytes(head, r.lease.id);
  }
  PutVarint(head, r.data_id);
  PutVarint(head, r.data_size);
  if (crc) Put32(head, *crc);
  if (!name_is_key) PutBytes(head, e.name);
  PutVarint(head, r.metadata.size());
  if (PackEtag(r.etag, head))
    flags |= kEtagPacked;
  else
    PutBytes(head, r.etag);
  if (PackMd5(r.data_md5, head))
    flags |= kMd5Packed;
  else
    PutBytes(head, r.data_md5);
  for (const auto& [name, value] : r.metadata) {
    PutBytes(head, name);
    head.push_back(1);  // a packed UUID, if the value is one
    if (!PackUuid(value, head)) {
      head.pop_back();
      PutVarint(head, uint64_t{value.size()} << 1);
      head.append(value);
    }
  }
  head[0] = static_cast<char>(flags);
  const uint32_t head_crc =
      Crc32(Crc32(name_is_key ? std::string_view(e.name) : BucketKey(e.name)), head);
  std::string out;
  out.reserve(5 + 3 + head.size() + (r.inline_data ? r.inline_data->size() : 0));
  out.push_back(kFormat5Tag);
  Put32(out, head_crc);
  PutVarint(out, head.size());
  out.append(head);
  if (r.inline_data) out.append(*r.inline_data);
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
  r.data_md5_packed = false;
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
      if (r.data_id != 0) throw mp::FormatError{"inline data beside a data id"};
    }
  }
  in.Skip(fields - 10 - optional);
}

// Reads a bucket's msgpack ([format, [[name, record], ...]]), calling `fn`
// with each record in turn; items a later format may add (after the
// entries, after an entry's record) are skipped.
void ReadBucket(std::string_view value, bool checksummed, RecordView& view, RecordSink fn) {
  mp::Reader in(value);
  const uint32_t top = in.Array("bucket");
  if (top < 2) throw mp::FormatError{"bucket is not long enough"};
  const int64_t format = in.Int("format");
  if (checksummed ? format != 2 && format != 3 : format != 1)
    throw mp::FormatError{"unknown format version"};
  const uint32_t entries = in.Array("entries");
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
}

// The data after a head (formats 4 and 5) into `r`, as the head's flags
// and sizes say: null, or what is wrong.
const char* PlaceInlineData(uint8_t flags, std::string_view data, RecordView& r) {
  r.inline_data.reset();
  if (flags & kInline) {
    if (!r.data_crc) return "inline data without its checksum";
    if (r.data_id != 0) return "inline data beside a data id";
    r.inline_data = data;
  }
  if (data.size() != (r.inline_data ? r.data_size : 0))
    return "its data is not the size its head says";
  return nullptr;
}

// Format 4's head into `r`; false if it is malformed (its checksum matched:
// a bug or a later format, not damage).
bool ReadHead(std::string_view head, std::string_view data, RecordView& r, std::string* why) {
  auto fail = [why](const char* reason) {
    *why = reason;
    return false;
  };
  // The fixed fields first, with one bounds check.
  constexpr size_t kFixed = 1 + 1 + 8 + 4 + 8 + 8 + 8 + 8 + 4;
  if (head.size() < kFixed) return fail("its head is cut short");
  const char* f = head.data();
  const auto flags = static_cast<uint8_t>(f[0]), state = static_cast<uint8_t>(f[1]);
  r.last_modified_s = GetLE<int64_t>(f + 2);
  r.lease_duration_seconds = GetLE<int32_t>(f + 10);
  r.lease_expires_ms = GetLE<int64_t>(f + 14);
  r.lease_broken_at_ms = GetLE<int64_t>(f + 22);
  r.data_id = GetLE<uint64_t>(f + 30);
  r.data_size = GetLE<uint64_t>(f + 38);
  const uint32_t crc = GetLE<uint32_t>(f + 46);
  HeadReader in(head.substr(kFixed));
  r.name = in.Str32();
  r.etag = in.Str32();
  r.lease_id = in.Str32();
  r.data_md5 = in.Str32();
  r.data_md5_packed = false;
  r.metadata.clear();
  const uint32_t pairs = in.U32();
  for (uint32_t i = 0; i < pairs && !in.short_(); ++i) {
    const std::string_view name = in.Str32();
    r.metadata.emplace_back(name, in.Str32());
  }
  // Bytes after the metadata are a later format's: skipped.
  if (in.short_()) return fail("its head is cut short");
  if (state > static_cast<int>(LeaseState::kBroken)) return fail("lease state out of range");
  r.lease_state = static_cast<LeaseState>(state);
  r.data_crc.reset();
  if (flags & ~(kInline | kHasCrc)) return fail("flags unknown to this blobtable");
  if (flags & kHasCrc) r.data_crc = crc;
  if (const char* why_not = PlaceInlineData(flags, data, r)) return fail(why_not);
  return true;
}

// Format 5's head into `r` (the blob's LMDB key is `key`); false if it is
// malformed (its checksum matched: a bug or a later format, not damage).
bool ReadHead5(std::string_view head, std::string_view key, std::string_view data, RecordView& r,
               std::string* why) {
  auto fail = [why](const char* reason) {
    *why = reason;
    return false;
  };
  HeadReader in(head);
  const uint8_t flags = in.Byte();
  if (flags & ~kFormat5Flags) return fail("flags unknown to this blobtable");
  r.last_modified_s = in.Signed();
  r.lease_state = LeaseState::kAvailable;
  r.lease_duration_seconds = 0;
  r.lease_expires_ms = r.lease_broken_at_ms = 0;
  r.lease_id = {};
  if (flags & kHasLease) {
    const uint8_t state = in.Byte();
    if (state > static_cast<int>(LeaseState::kBroken)) return fail("lease state out of range");
    r.lease_state = static_cast<LeaseState>(state);
    r.lease_duration_seconds = static_cast<int>(in.Signed());
    r.lease_expires_ms = in.Signed();
    r.lease_broken_at_ms = in.Signed();
    r.lease_id = in.Str();
  }
  r.data_id = in.Varint();
  r.data_size = in.Varint();
  r.data_crc.reset();
  if (flags & kHasCrc) r.data_crc = in.U32();
  r.name = flags & kNameIsKey ? key : in.Str();
  const uint64_t pairs = in.Varint();
  if (in.short_() || pairs > in.left()) return fail("its head is cut short");
  if (flags & kEtagPacked) {
    const std::string_view b = in.Bytes(kPacked);
    if (!in.short_()) UnpackEtag(b, r.etag_text);
    r.etag = std::string_view(r.etag_text, kEtagChars);
  } else {
    r.etag = in.Str();
  }
  r.data_md5_packed = (flags & kMd5Packed) != 0;
  r.data_md5 = r.data_md5_packed ? in.Bytes(kPacked) : in.Str();
  // Room for every packed transaction id, so that no append moves the
  // views taken (nothing is allocated for a record without one).
  r.unpacked.clear();
  r.metadata.clear();
  for (uint64_t i = 0; i < pairs && !in.short_(); ++i) {
    const std::string_view name = in.Str();
    const uint64_t v = in.Varint();
    if (v == 1) {
      if (r.unpacked.capacity() < kUuidChars * pairs) r.unpacked.reserve(kUuidChars * pairs);
      const std::string_view b = in.Bytes(kPacked);
      const size_t at = r.unpacked.size();
      if (!in.short_()) UnpackUuid(b, r.unpacked);
      r.metadata.emplace_back(name, std::string_view(r.unpacked).substr(at));
    } else if (v % 2 == 0) {
      r.metadata.emplace_back(name, in.Bytes(v / 2));
    } else {
      return fail("a metadata value of a form unknown to this blobtable");
    }
  }
  // Bytes after the metadata are a later format's: skipped.
  if (in.short_()) return fail("its head is cut short");
  if (const char* why_not = PlaceInlineData(flags, data, r)) return fail(why_not);
  return true;
}

// A format-5 value: its head checked against its checksum (seeded with the
// key's), then read into `view` and handed over.
Status VisitRecord5(std::string_view value, std::string_view key, const mp::What& what,
                    RecordView& view, RecordSink fn) {
  if (value.size() < 6) return Status::Corruption(what.str() + ": cut short");
  const uint32_t crc = Get32(value.data() + 1);
  HeadReader sizes(value.substr(5));
  const uint64_t size = sizes.Varint();
  const size_t start = value.size() - sizes.left();
  if (sizes.short_() || size == 0 || value.size() - start < size)
    return Status::Corruption(what.str() + ": cut short");
  const std::string_view head = value.substr(start, size);
  if (Crc32(Crc32(key), head) != crc)
    return Status::Corruption(what.str() + ": its checksum does not match (the record is damaged)");
  std::string why;
  if (!ReadHead5(head, key, value.substr(start + size), view, &why))
    return Status::Corruption(what.str() + ": " + why);
  fn(view);
  return Status::OK();
}

// A format-4 value: its head checked against its checksum, then read into
// `view` and handed over.
Status VisitRecord(std::string_view value, const mp::What& what, RecordView& view, RecordSink fn) {
  if (value.size() < kFormat4Header) return Status::Corruption(what.str() + ": cut short");
  const uint32_t crc = Get32(value.data() + 1), size = Get32(value.data() + 5);
  if (value.size() - kFormat4Header < size) return Status::Corruption(what.str() + ": cut short");
  const std::string_view head = value.substr(kFormat4Header, size);
  if (Crc32(head) != crc)
    return Status::Corruption(what.str() + ": its checksum does not match (the record is damaged)");
  std::string why;
  if (!ReadHead(head, value.substr(kFormat4Header + size), view, &why))
    return Status::Corruption(what.str() + ": " + why);
  fn(view);
  return Status::OK();
}

}  // namespace

Status VisitBucket(std::string_view value, std::string_view key, RecordView& scratch,
                   RecordSink fn) {
  const mp::What what("local blob bucket", key);
  if (!value.empty() && value[0] == kFormat5Tag) return VisitRecord5(value, key, what, scratch, fn);
  if (!value.empty() && value[0] == kFormat4Tag) return VisitRecord(value, what, scratch, fn);
  bool checksummed = false;  // formats 2 and 3; format 1 has no header
  if (!value.empty() && value[0] == kFormat2Tag) {
    if (value.size() < kBucketHeader) return Status::Corruption(what.str() + ": cut short");
    const uint32_t stored = Get32(value.data() + 1);
    value.remove_prefix(kBucketHeader);
    if (Crc32(value) != stored)
      return Status::Corruption(what.str() +
                                ": its checksum does not match (the record is damaged)");
    checksummed = true;
  }
  return mp::Guard(what, [&] { ReadBucket(value, checksummed, scratch, fn); });
}

Status VisitBucket(std::string_view value, std::string_view key, RecordSink fn) {
  RecordView view;
  // The metadata's vector and the string its transaction ids are written
  // out to are the thread's spares (a read would allocate them otherwise:
  // every entity the embedded store writes carries one); a nested read
  // takes empty ones.
  struct MetadataTag;
  struct UnpackedTag;
  ThreadSpare<decltype(view.metadata), MetadataTag> kept;
  ThreadSpare<std::string, UnpackedTag> kept_text;
  view.metadata.swap(*kept);
  view.unpacked.swap(*kept_text);
  Status s = VisitBucket(value, key, view, fn);
  view.metadata.swap(*kept);
  view.unpacked.swap(*kept_text);
  return s;
}

Result<Bucket> DecodeBucket(std::string_view value, std::string_view key) {
  Bucket bucket;
  BT_RETURN_IF_ERROR(
      VisitBucket(value, key, [&](const RecordView& r) { bucket.push_back(r.ToEntry()); }));
  return bucket;
}

}  // namespace blobtable::internal
