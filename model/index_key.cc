// SPDX-License-Identifier: Apache-2.0
#include "model/index_key.h"

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>

#include "util/digest.h"

namespace blobtable::internal::index_key {
namespace {

void AppendBigEndian(std::string& out, uint64_t v) {
  for (int shift = 56; shift >= 0; shift -= 8) out += static_cast<char>((v >> shift) & 0xFF);
}

// Two's complement with the sign bit flipped: unsigned order is signed order.
void AppendSigned(std::string& out, int64_t v) {
  AppendBigEndian(out, static_cast<uint64_t>(v) ^ (uint64_t{1} << 63));
}

// IEEE 754 bits arranged so that unsigned order is numeric order: negative
// numbers have every bit flipped, others only the sign bit. -0.0 is taken
// as 0.0 and every NaN as the one quiet NaN, which then sorts above
// +Infinity.
void AppendDouble(std::string& out, double d) {
  if (d == 0) d = 0.0;  // -0.0 == 0.0
  if (std::isnan(d)) d = std::numeric_limits<double>::quiet_NaN();
  uint64_t bits = std::bit_cast<uint64_t>(d);
  if (std::isnan(d)) bits = 0x7FF8000000000000ull;  // whatever sign the NaN had
  bits = (bits >> 63) != 0 ? ~bits : bits | (uint64_t{1} << 63);
  AppendBigEndian(out, bits);
}

std::string Lowercase(std::string text) {
  for (char& c : text)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  return text;
}

}  // namespace

std::string OrderedBytes(const PropertyValue& value) {
  std::string out;
  switch (TypeOf(value)) {
    case EdmType::kBoolean:
      out += static_cast<char>(kBooleanTag);
      out += static_cast<char>(std::get<bool>(value) ? 1 : 0);
      break;
    case EdmType::kInt32:
      out += static_cast<char>(kIntegerTag);
      AppendSigned(out, std::get<int32_t>(value));
      break;
    case EdmType::kInt64:
      out += static_cast<char>(kIntegerTag);
      AppendSigned(out, std::get<int64_t>(value));
      break;
    case EdmType::kDouble:
      out += static_cast<char>(kDoubleTag);
      AppendDouble(out, std::get<double>(value));
      break;
    case EdmType::kDateTime:
      out += static_cast<char>(kDateTimeTag);
      AppendSigned(out, std::get<DateTime>(value).time_since_epoch().count());
      break;
    case EdmType::kGuid:
      out += static_cast<char>(kGuidTag);
      out += Lowercase(std::get<Guid>(value).value);
      break;
    case EdmType::kString:
      out += static_cast<char>(kStringTag);
      out += std::get<std::string>(value);
      break;
    case EdmType::kBinary:
      out += static_cast<char>(kBinaryTag);
      out += std::get<Binary>(value).bytes;
      break;
  }
  return out;
}

int Compare(const PropertyValue& a, const PropertyValue& b) {
  return OrderedBytes(a).compare(OrderedBytes(b));
}

bool IsCut(const PropertyValue& value) { return OrderedBytes(value).size() > 1 + kKeptBytes; }

std::string KeyOf(const PropertyValue& value) {
  std::string bytes = OrderedBytes(value);
  if (bytes.size() <= 1 + kKeptBytes) return bytes;
  const std::string hash = Sha256(bytes);
  bytes.resize(1 + kKeptBytes);
  return bytes + hash.substr(0, kHashBytes);
}

std::string ScanLowerBound(const PropertyValue& lower) {
  std::string bytes = OrderedBytes(lower);
  if (bytes.size() > 1 + kKeptBytes) bytes.resize(1 + kKeptBytes);
  return bytes;
}

std::string ScanUpperBound(const PropertyValue& upper) {
  // The least string above every one that starts with the kept prefix.
  std::string bytes = ScanLowerBound(upper);
  while (!bytes.empty() && static_cast<unsigned char>(bytes.back()) == 0xFF) bytes.pop_back();
  if (!bytes.empty())
    bytes.back() = static_cast<char>(static_cast<unsigned char>(bytes.back()) + 1);
  return bytes;
}

}  // namespace blobtable::internal::index_key
