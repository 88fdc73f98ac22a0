// SPDX-License-Identifier: Apache-2.0
#include "model/blob_naming.h"

#include <array>

#include <cctype>
#include <cstring>

#include "blobtable/blob_store.h"
#include "model/key_rules.h"
#include "util/ascii.h"
#include "util/macros.h"

namespace blobtable::internal::naming {
namespace {

constexpr char kHex[] = "0123456789ABCDEF";

constexpr bool PassesThrough(unsigned char b) {
  return (b >= '1' && b <= '9') || (b >= 'A' && b <= 'Z') || (b >= 'a' && b <= 'z');
}

// The marker for an escaped byte: chosen so markers sort between the
// pass-through ranges around b.
constexpr char MarkerFor(unsigned char b) {
  if (b <= 0x30) return '0';
  if (b <= 0x40) return '@';
  if (b <= 0x60) return '_';
  return '~';
}

// Each byte's encoding, as a table: names are built on every read and
// checked on every row a query reads. With it, whether the byte is one
// ValidateKey must judge, so a read's keys are checked in the same pass.
struct Code {
  char bytes[3];
  uint8_t size;     // 1: passes through; 3: escaped
  uint8_t unplain;  // 1: not IsPlainKeyByte
};
constexpr auto kCodes = [] {
  std::array<Code, 256> t{};
  for (int b = 0; b < 256; ++b) {
    const auto u = static_cast<unsigned char>(b);
    if (PassesThrough(u))
      t[b] = {{static_cast<char>(u), 0, 0}, 1, 0};
    else
      t[b] = {{MarkerFor(u), kHex[u >> 4], kHex[u & 0xF]}, 3, !IsPlainKeyByte(u)};
  }
  return t;
}();

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;  // lowercase is not canonical
}

Status TooLong(size_t length, std::string_view what) {
  return Status::InvalidArgument(
      "PartitionKey and RowKey are too long together: the " + std::string(what) + " would be " +
      std::to_string(length) +
      " characters and Azure allows 1024 (digits 1-9 and ASCII letters count 1 character, every "
      "other byte of a key 3)");
}

}  // namespace

namespace {
// A name is built by writers of its parts, each writing at `w` and
// returning where it ended, into a string sized once for the longest form
// (three bytes a key byte) and then cut to what was written: every point
// read names its blob.
char* WriteText(char* w, std::string_view s) {
  std::memcpy(w, s.data(), s.size());
  return w + s.size();
}
// Sets `unplain` to 1 if a byte of `key` is not IsPlainKeyByte.
char* WriteEncodedKey(char* w, std::string_view key, uint8_t& unplain) {
  for (char ch : key) {  // each byte's code copied whole, the pointer moved by its size
    const Code& c = kCodes[static_cast<unsigned char>(ch)];
    std::memcpy(w, c.bytes, 3);
    w += c.size;
    unplain |= c.unplain;
  }
  return w;
}
char* WriteEncodedKey(char* w, std::string_view key) {
  uint8_t unplain = 0;
  return WriteEncodedKey(w, key, unplain);
}
template <typename Write>
void BuildInto(std::string& out, size_t room, Write write) {
  out.resize(room);
  out.resize(static_cast<size_t>(write(out.data()) - out.data()));
}
template <typename Write>
std::string Built(size_t room, Write write) {
  std::string out;
  BuildInto(out, room, write);
  return out;
}
}  // namespace

std::string EncodeKey(std::string_view key) {
  return Built(3 * key.size(), [&](char* w) { return WriteEncodedKey(w, key); });
}

Result<std::string> DecodeKey(std::string_view enc) {
  std::string out;
  out.reserve(enc.size());
  for (size_t i = 0; i < enc.size();) {
    unsigned char c = static_cast<unsigned char>(enc[i]);
    if (PassesThrough(c)) {
      out.push_back(static_cast<char>(c));
      ++i;
      continue;
    }
    if (i + 3 > enc.size()) return Status::InvalidArgument("truncated escape in encoded key");
    int hi = HexValue(enc[i + 1]), lo = HexValue(enc[i + 2]);
    if (hi < 0 || lo < 0) return Status::InvalidArgument("bad escape in encoded key");
    unsigned char b = static_cast<unsigned char>(hi * 16 + lo);
    if (PassesThrough(b) || MarkerFor(b) != static_cast<char>(c))
      return Status::InvalidArgument("non-canonical escape in encoded key");
    out.push_back(static_cast<char>(b));
    i += 3;
  }
  return out;
}

bool FollowsTableNameRules(std::string_view name) {
  bool ok =
      name.size() >= 3 && name.size() <= 63 && std::isalpha(static_cast<unsigned char>(name[0]));
  for (char c : name) ok = ok && std::isalnum(static_cast<unsigned char>(c)) && (c & 0x80) == 0;
  return ok;
}

Status ValidateTableName(std::string_view table) {
  if (!FollowsTableNameRules(table))
    return Status::InvalidArgument(
        "table name '" + std::string(table) +
        "' must be 3-63 ASCII letters and digits, starting with a letter");
  if (AsciiLower(table) == "tables")
    return Status::InvalidArgument("table name 'tables' is reserved");
  return Status::OK();
}

namespace {
// The prefixes: their room, and their writers (see WriteText).
size_t TablePrefixRoom(std::string_view table) {
  return std::string_view(kTablePrefix).size() + table.size() + 1;
}
char* WriteTablePrefix(char* w, std::string_view table) {
  w = WriteText(w, kTablePrefix);
  for (char c : table) *w++ = AsciiLower(c);
  *w++ = '/';
  return w;
}
size_t PartitionPrefixRoom(std::string_view table, std::string_view pk) {
  return TablePrefixRoom(table) + std::string_view(kEntitySegment).size() + 1 + 3 * pk.size() + 1;
}
char* WritePartitionPrefix(char* w, std::string_view table, std::string_view pk, uint8_t& unplain) {
  w = WriteTablePrefix(w, table);
  w = WriteText(w, kEntitySegment);
  *w++ = '-';
  w = WriteEncodedKey(w, pk, unplain);
  *w++ = '/';
  return w;
}
char* WritePartitionPrefix(char* w, std::string_view table, std::string_view pk) {
  uint8_t unplain = 0;
  return WritePartitionPrefix(w, table, pk, unplain);
}
}  // namespace

std::string TablePrefix(std::string_view table) {
  return Built(TablePrefixRoom(table), [&](char* w) { return WriteTablePrefix(w, table); });
}
std::string EntityPrefix(std::string_view table) { return TablePrefix(table) + kEntitySegment; }
std::string PartitionPrefix(std::string_view table, std::string_view pk) {
  return Built(PartitionPrefixRoom(table, pk),
               [&](char* w) { return WritePartitionPrefix(w, table, pk); });
}

std::string AllTablesPrefix() { return kTablePrefix; }

std::string AfterTable(std::string_view table) {
  // '0' is the least character a table name may hold, and sorts right after
  // '/': "t/<table>0" is past every "t/<table>/..." and at or before every
  // longer table name's "t/<table>0...".
  return TablePrefix(table).substr(0, TablePrefix(table).size() - 1) + "0";
}

std::optional<TableOfBlob> TableOf(std::string_view name) {
  if (name.substr(0, 2) != kTablePrefix) return std::nullopt;
  const size_t slash = name.find('/', 2);
  if (slash == std::string_view::npos || slash == 2) return std::nullopt;
  return TableOfBlob{std::string(name.substr(2, slash - 2)),
                     name.substr(slash + 1, 2) == kEntitySegment};
}

namespace {
// True if `name` lies under some table's `segment` ("e/", "l/").
bool IsUnderTableSegment(std::string_view name, std::string_view segment) {
  if (name.substr(0, 2) != kTablePrefix) return false;
  const size_t slash = name.find('/', 2);  // table names hold no '/'
  return slash != std::string_view::npos && slash > 2 && name.substr(slash + 1, 2) == segment;
}
}  // namespace

bool IsEntityBlobName(std::string_view name) { return IsUnderTableSegment(name, kEntitySegment); }

bool IsLockBlobName(std::string_view name) { return IsUnderTableSegment(name, kLockSegment); }

Result<bool> WriteEntityBlobName(std::string_view table, std::string_view pk, std::string_view rk,
                                 std::string& out) {
  // PartitionPrefix(table, pk) + "-" + EncodeKey(rk), in one allocation.
  uint8_t unplain = 0;
  BuildInto(out, PartitionPrefixRoom(table, pk) + 1 + 3 * rk.size(), [&](char* w) {
    w = WritePartitionPrefix(w, table, pk, unplain);
    *w++ = '-';
    return WriteEncodedKey(w, rk, unplain);
  });
  if (out.size() > kMaxBlobNameChars) return TooLong(out.size(), "entity blob name");
  return unplain == 0;
}

Result<std::string> EntityBlobName(std::string_view table, std::string_view pk,
                                   std::string_view rk) {
  std::string name;
  BT_RETURN_IF_ERROR(WriteEntityBlobName(table, pk, rk, name).status());
  return name;
}

Result<std::string> LockBlobName(std::string_view table, std::string_view pk) {
  std::string name = TablePrefix(table) + kLockSegment + "-" + EncodeKey(pk);
  if (name.size() > kMaxBlobNameChars) return TooLong(name.size(), "lock blob name");
  return name;
}

std::string LockStripeBlobName(std::string_view lock, int stripe) {
  std::string name(lock);
  if (stripe != 0) name += "/" + std::to_string(stripe);
  return name;
}

Result<EntityKey> ParseEntityBlobName(std::string_view table, std::string_view name) {
  std::string prefix = EntityPrefix(table);
  auto bad = [&] {
    return Status::InvalidArgument("'" + std::string(name) + "' is not an entity blob of table " +
                                   std::string(table));
  };
  if (name.substr(0, prefix.size()) != prefix) return bad();
  std::string_view rest = name.substr(prefix.size());
  size_t slash = rest.find('/');
  if (rest.size() < 3 || rest[0] != '-' || slash == std::string_view::npos ||
      slash + 1 >= rest.size() || rest[slash + 1] != '-')
    return bad();
  auto pk = DecodeKey(rest.substr(1, slash - 1));
  auto rk = DecodeKey(rest.substr(slash + 2));
  if (!pk.ok() || !rk.ok()) return bad();
  return EntityKey{std::move(*pk), std::move(*rk)};
}

namespace {
// Takes the encoding of `key` off the front of `rest`: false if it is not
// there.
bool ConsumeEncodedKey(std::string_view& rest, std::string_view key) {
  const char* r = rest.data();
  const char* const end = r + rest.size();
  for (char ch : key) {
    const Code& c = kCodes[static_cast<unsigned char>(ch)];
    if (end - r < c.size || r[0] != c.bytes[0] ||
        (c.size == 3 && (r[1] != c.bytes[1] || r[2] != c.bytes[2])))
      return false;
    r += c.size;
  }
  rest.remove_prefix(static_cast<size_t>(r - rest.data()));
  return true;
}
}  // namespace

namespace {
// Takes `prefix`, '-' and the encoding of `key` off the front of `rest`:
// false if they are not there.
bool ConsumeKeyAfter(std::string_view& rest, std::string_view prefix, std::string_view key) {
  if (!rest.starts_with(prefix) || rest.size() == prefix.size() || rest[prefix.size()] != '-')
    return false;
  rest.remove_prefix(prefix.size() + 1);
  return ConsumeEncodedKey(rest, key);
}
}  // namespace

bool IsEntityBlobNameOf(std::string_view name, std::string_view entity_prefix, std::string_view pk,
                        std::string_view rk) {
  return ConsumeKeyAfter(name, entity_prefix, pk) && ConsumeKeyAfter(name, "/", rk) && name.empty();
}

bool IsRowBlobNameOf(std::string_view name, std::string_view partition_prefix,
                     std::string_view rk) {
  return ConsumeKeyAfter(name, partition_prefix, rk) && name.empty();
}

}  // namespace blobtable::internal::naming
