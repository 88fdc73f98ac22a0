// SPDX-License-Identifier: Apache-2.0
// How a secondary index orders values (issue 34): the bytes an index entry
// is keyed by, such that byte order is the index's order.
//
// The order across types is fixed: Boolean (false < true) < integers (Int32
// and Int64 together, by value) < Double < DateTime < Guid < String < Binary.
// Within a type:
//   Boolean   false < true
//   integers  by value: Int32 5 and Int64 5 are the same key (an equality
//             finds both; JSON input makes small numbers Int32, large Int64)
//   Double    -Infinity < ... < -0.0 == 0.0 < ... < +Infinity < NaN; -0.0
//             is 0.0, and every NaN is one NaN (so `eq` finds what `==`
//             would not: an index is about where a value sorts)
//   DateTime  by instant
//   Guid      by its canonical lowercase text
//   String    by UTF-8 bytes (= code point order; no collation, no case
//             folding, as the Table service compares)
//   Binary    by bytes
// The bytes: a tag byte for the type, then the value (integers, doubles and
// instants as 8 big-endian bytes with the sign bit arranged to sort; text
// and binary as themselves).
//
// Values longer than kKeptBytes (strings, binary) are kept as their first
// kKeptBytes bytes and 16 bytes of their SHA-256: equal values still have
// equal keys and different values different keys (a unique index stays
// exact), but among long values that share their first kKeptBytes bytes the
// order is the hash's. A range is therefore scanned over kept prefixes
// (ScanLowerBound/ScanUpperBound) and each entity checked against the
// condition with its whole value.
#ifndef BLOBTABLE_MODEL_INDEX_KEY_H_
#define BLOBTABLE_MODEL_INDEX_KEY_H_

#include <cstddef>
#include <string>

#include "blobtable/entity.h"

namespace blobtable::internal::index_key {

inline constexpr size_t kKeptBytes = 112;  // of a value's bytes, before the hash
inline constexpr size_t kHashBytes = 16;   // of its SHA-256
inline constexpr size_t kMaxKeyBytes = 1 + kKeptBytes + kHashBytes;  // tag, kept, hash

// Tag bytes, in the order across types.
inline constexpr unsigned char kBooleanTag = 0x10;
inline constexpr unsigned char kIntegerTag = 0x20;
inline constexpr unsigned char kDoubleTag = 0x30;
inline constexpr unsigned char kDateTimeTag = 0x40;
inline constexpr unsigned char kGuidTag = 0x50;
inline constexpr unsigned char kStringTag = 0x60;
inline constexpr unsigned char kBinaryTag = 0x70;

// The whole order-preserving bytes of `value`: memcmp order of two results
// is the order above (Compare).
std::string OrderedBytes(const PropertyValue& value);

// <0, 0, >0 as `a` sorts before, with, after `b` in the order above.
int Compare(const PropertyValue& a, const PropertyValue& b);

// The key an index entry holds for `value`: OrderedBytes, or for one longer
// than 1 + kKeptBytes, its first 1 + kKeptBytes bytes and kHashBytes of the
// SHA-256 of the whole. Never longer than kMaxKeyBytes.
std::string KeyOf(const PropertyValue& value);
// Whether KeyOf(value) is cut (then order among such keys is the hash's).
bool IsCut(const PropertyValue& value);

// Keys of every value v with lower <= v (in the order above) are >=
// ScanLowerBound(lower); keys of every v <= upper are < ScanUpperBound(upper)
// (empty: no bound). Between them may lie keys of values outside [lower,
// upper]: a scan checks each whole value.
std::string ScanLowerBound(const PropertyValue& lower);
std::string ScanUpperBound(const PropertyValue& upper);

}  // namespace blobtable::internal::index_key

#endif  // BLOBTABLE_MODEL_INDEX_KEY_H_
