// SPDX-License-Identifier: Apache-2.0
#include "model/index_naming.h"

#include "blobtable/blob_store.h"
#include "model/blob_naming.h"
#include "model/index_key.h"
#include "util/ascii.h"
#include "util/digest.h"
#include "util/stored_format.h"

namespace blobtable::internal::naming {
namespace {

constexpr char kLowerHex[] = "0123456789abcdef";

// "-<key(v)>/" for each value.
void AppendValues(std::string& out, const std::vector<PropertyValue>& values) {
  for (const PropertyValue& v : values) out += "-" + EncodeKey(index_key::KeyOf(v)) + "/";
}

// 32 hex digits of the SHA-256 of the keys (the PartitionKey's length
// first, so that no two pairs of keys hash the same bytes).
std::string KeysHash(std::string_view pk, std::string_view rk) {
  const std::string digest =
      Sha256(std::to_string(pk.size()) + ":" + std::string(pk) + std::string(rk));
  std::string hex;
  for (size_t i = 0; i < 16; ++i) {
    const auto b = static_cast<unsigned char>(digest[i]);
    hex += kLowerHex[b >> 4];
    hex += kLowerHex[b & 15];
  }
  return hex;
}

Status ValuesTooLong(size_t length) {
  return Status::InvalidArgument(
      "the indexed values are too long for an index entry: its name would be " +
      std::to_string(length) +
      " characters and Azure allows 1024 (a value's first 112 bytes count, each 1 character "
      "if a digit 1-9 or an ASCII letter, else 3; longer values add 48)");
}

}  // namespace

Status ValidateIndexName(std::string_view index) {
  if (FollowsTableNameRules(index)) return Status::OK();
  return Status::InvalidArgument("index name '" + std::string(index) +
                                 "' must be 3-63 ASCII letters and digits, starting with a letter");
}

std::string IndexPrefix(std::string_view table, std::string_view index) {
  return TablePrefix(table) + kIndexSegment + AsciiLower(index) + "/";
}

std::string IndexValuesPrefix(std::string_view table, std::string_view index,
                              const std::vector<PropertyValue>& values) {
  std::string out = IndexPrefix(table, index);
  AppendValues(out, values);
  return out;
}

Result<std::string> IndexEntryName(std::string_view table, std::string_view index,
                                   const std::vector<PropertyValue>& values, bool unique,
                                   std::string_view pk, std::string_view rk, bool* keys_hashed) {
  std::string name = IndexValuesPrefix(table, index, values);
  if (keys_hashed != nullptr) *keys_hashed = false;
  if (unique) {
    name.pop_back();  // the values alone: no '/' after the last
    if (name.size() > kMaxBlobNameChars) return ValuesTooLong(name.size());
    return name;
  }
  const std::string by_keys = name + "-" + EncodeKey(pk) + "/-" + EncodeKey(rk);
  if (by_keys.size() <= kMaxBlobNameChars) return by_keys;
  name += "#" + KeysHash(pk, rk);
  if (name.size() > kMaxBlobNameChars) return ValuesTooLong(name.size());
  if (keys_hashed != nullptr) *keys_hashed = true;
  return name;
}

std::string IndexScanFrom(std::string_view table, std::string_view index,
                          const std::vector<PropertyValue>& equal,
                          const std::optional<PropertyValue>& lower) {
  std::string from = IndexValuesPrefix(table, index, equal);
  if (lower) from += "-" + EncodeKey(index_key::ScanLowerBound(*lower));
  return from;
}

std::string IndexScanTo(std::string_view table, std::string_view index,
                        const std::vector<PropertyValue>& equal,
                        const std::optional<PropertyValue>& upper) {
  std::string to = IndexValuesPrefix(table, index, equal);
  const std::string bound = upper ? index_key::ScanUpperBound(*upper) : "";
  if (!bound.empty()) return to + "-" + EncodeKey(bound);
  // The prefix with its last '/' raised to '0' (the next character): past
  // every name that continues the prefix, and at or before any other value's
  // (whose escaped characters are '0' or above).
  to.back() = '0';
  return to;
}

Result<std::optional<std::pair<std::string, std::string>>> EntityOfIndexEntry(
    std::string_view table, std::string_view index, size_t value_count, std::string_view name) {
  const std::string prefix = IndexPrefix(table, index);
  if (name.substr(0, prefix.size()) != prefix)
    return Status::InvalidArgument("not an entry of index " + std::string(index));
  std::string_view rest = name.substr(prefix.size());
  for (size_t i = 0; i < value_count; ++i) {
    const size_t slash = rest.find('/');
    if (rest.empty() || rest[0] != '-' || slash == std::string_view::npos)
      return Status::InvalidArgument("malformed index entry name");
    rest.remove_prefix(slash + 1);
  }
  if (rest.starts_with('#')) return std::optional<std::pair<std::string, std::string>>();
  const size_t slash = rest.find('/');
  if (rest.size() < 2 || rest[0] != '-' || slash == std::string_view::npos ||
      rest.substr(slash + 1, 1) != "-")
    return Status::InvalidArgument("malformed index entry name");
  auto pk = DecodeKey(rest.substr(1, slash - 1));
  if (!pk.ok()) return pk.status();
  auto rk = DecodeKey(rest.substr(slash + 2));
  if (!rk.ok()) return rk.status();
  return std::optional<std::pair<std::string, std::string>>(
      std::make_pair(std::move(*pk), std::move(*rk)));
}

}  // namespace blobtable::internal::naming
