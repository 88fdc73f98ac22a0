// SPDX-License-Identifier: Apache-2.0
// Entities: PartitionKey, RowKey, Timestamp, ETag and typed properties, as in
// Azure Table Storage, with Azure's validation rules.
//
// Thread-safety: an Entity is a plain value; distinct objects may be used
// from distinct threads.
#ifndef BLOBTABLE_ENTITY_H_
#define BLOBTABLE_ENTITY_H_

#include <chrono>
#include <concepts>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <variant>
#include <vector>

#include "blobtable/export.h"
#include "blobtable/status.h"

namespace blobtable {

// Azure's DateTime resolution: 100-nanosecond ticks.
using Ticks = std::chrono::duration<int64_t, std::ratio<1, 10'000'000>>;
// A UTC instant from 1601-01-01T00:00:00Z to 9999-12-31T23:59:59.9999999Z.
using DateTime = std::chrono::time_point<std::chrono::system_clock, Ticks>;

struct Binary {
  std::string bytes;
  bool operator==(const Binary&) const = default;
};
// A GUID in canonical form, "xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx" (hex).
struct Guid {
  std::string value;
  bool operator==(const Guid&) const = default;
};

// The eight Azure Table types, in the order of PropertyValue's alternatives.
enum class EdmType { kString, kBinary, kBoolean, kDateTime, kDouble, kGuid, kInt32, kInt64 };

using PropertyValue =
    std::variant<std::string, Binary, bool, DateTime, double, Guid, int32_t, int64_t>;

// The character types, which Entity::Set refuses (a char is not a number).
template <typename T>
inline constexpr bool IsCharType =
    std::is_same_v<T, char> || std::is_same_v<T, wchar_t> || std::is_same_v<T, char8_t> ||
    std::is_same_v<T, char16_t> || std::is_same_v<T, char32_t>;
// The types PropertyValue holds.
template <typename T>
inline constexpr bool IsPropertyType =
    std::is_same_v<T, std::string> || std::is_same_v<T, Binary> || std::is_same_v<T, bool> ||
    std::is_same_v<T, DateTime> || std::is_same_v<T, double> || std::is_same_v<T, Guid> ||
    std::is_same_v<T, int32_t> || std::is_same_v<T, int64_t>;

inline EdmType TypeOf(const PropertyValue& v) { return static_cast<EdmType>(v.index()); }
// "Edm.String", "Edm.Binary", ... as in Azure's JSON annotations.
BLOBTABLE_EXPORT std::string_view EdmTypeName(EdmType type);

// Limits (Azure Table Storage's, except where blob naming is tighter; see
// docs/data-model.md#data-model-and-limits).
inline constexpr size_t kMaxKeyBytes = 1024;   // each key, UTF-8 bytes
inline constexpr size_t kMaxProperties = 252;  // custom properties
inline constexpr size_t kMaxPropertyNameChars = 255;
inline constexpr size_t kMaxStringUtf16Units = 32768;  // 64 KiB as UTF-16
inline constexpr size_t kMaxBinaryBytes = 65536;       // 64 KiB
inline constexpr size_t kMaxEntityBytes = 1 << 20;     // 1 MiB, encoded

class BLOBTABLE_EXPORT Entity {
 public:
  Entity() = default;
  Entity(std::string partition_key, std::string row_key)
      : partition_key_(std::move(partition_key)), row_key_(std::move(row_key)) {}

  const std::string& partition_key() const { return partition_key_; }
  const std::string& row_key() const { return row_key_; }
  void set_partition_key(std::string pk) { partition_key_ = std::move(pk); }
  void set_row_key(std::string rk) { row_key_ = std::move(rk); }

  // Set by the store on every read and write; ignored on input.
  const std::string& etag() const { return etag_; }
  DateTime timestamp() const { return timestamp_; }
  void set_etag(std::string etag) { etag_ = std::move(etag); }
  void set_timestamp(DateTime t) { timestamp_ = t; }
  // Set by reads: answered from the local cache without validating it
  // (ReadPolicy: offline, or storage unreachable with stale_if_error).
  bool stale() const { return stale_; }
  void set_stale(bool stale) { stale_ = stale; }

  // Custom properties by name, in name order.
  const std::map<std::string, PropertyValue>& properties() const { return properties_; }
  std::map<std::string, PropertyValue>& mutable_properties() { return properties_; }

  // Sets a property, replacing one of the same name. Every C++ type maps to
  // one Edm type, whatever its value, so a property keeps its type:
  //   std::string, std::string_view, const char*       String
  //   Binary, std::vector<uint8_t>                      Binary
  //   bool                                              Boolean
  //   DateTime, any std::chrono::system_clock time_point  DateTime (to 100 ns,
  //                                                     rounded down)
  //   double, float                                     Double
  //   Guid                                              Guid
  //   signed integers of up to 32 bits, uint8_t, uint16_t  Int32
  //   int64_t, uint32_t, uint64_t, size_t               Int64
  // Set never throws. A value it cannot store (an unsigned value above
  // INT64_MAX, a null const char*) leaves the property unset and makes the
  // entity invalid: ValidateEntity, and so every write of it, fails
  // InvalidArgument naming the property. Set("x", nullptr) and a char do
  // not compile (say what you mean: a string, or an integer type).
  Entity& Set(std::string name, PropertyValue value) {
    properties_[std::move(name)] = std::move(value);
    return *this;
  }
  Entity& Set(std::string name, std::string value) {
    return Set(std::move(name), PropertyValue(std::move(value)));
  }
  Entity& Set(std::string name, std::string_view value) {
    return Set(std::move(name), PropertyValue(std::string(value)));
  }
  Entity& Set(std::string name, const char* value) {
    if (value == nullptr) return Unstorable(std::move(name), "a null const char*");
    return Set(std::move(name), PropertyValue(std::string(value)));
  }
  Entity& Set(std::string name, double value) { return Set(std::move(name), PropertyValue(value)); }
  Entity& Set(std::string name, const std::vector<uint8_t>& bytes) {
    return Set(std::move(name), PropertyValue(Binary{std::string(bytes.begin(), bytes.end())}));
  }
  template <typename B>
  requires std::same_as<B, bool> Entity& Set(std::string name, B value) {
    return Set(std::move(name), PropertyValue(value));
  }
  template <typename Duration>
  Entity& Set(std::string name, std::chrono::time_point<std::chrono::system_clock, Duration> t) {
    return Set(std::move(name), PropertyValue(std::chrono::floor<Ticks>(t)));
  }
  template <typename T>
  requires std::integral<T> &&
      (!std::same_as<T, bool>)&&(!IsCharType<T>)Entity& Set(std::string name, T value) {
    if constexpr (std::is_signed_v<T> && sizeof(T) <= 4) {
      return Set(std::move(name), PropertyValue(static_cast<int32_t>(value)));
    } else if constexpr (std::is_unsigned_v<T> && sizeof(T) < 4) {
      return Set(std::move(name), PropertyValue(static_cast<int32_t>(value)));
    } else if constexpr (std::is_signed_v<T>) {
      return Set(std::move(name), PropertyValue(static_cast<int64_t>(value)));
    } else {
      if (value > static_cast<uint64_t>(INT64_MAX))
        return Unstorable(std::move(name), std::to_string(value) + ", above Int64's maximum");
      return Set(std::move(name), PropertyValue(static_cast<int64_t>(value)));
    }
  }
  Entity& Set(std::string name, std::nullptr_t) = delete;
  template <typename C>
  requires IsCharType<C> Entity& Set(std::string name, C) = delete;
  // Null if absent.
  const PropertyValue* Find(std::string_view name) const {
    auto it = properties_.find(std::string(name));
    return it == properties_.end() ? nullptr : &it->second;
  }
  // Null if absent or of another type (exactly T: see GetAs for widening).
  template <typename T>
  const T* FindAs(std::string_view name) const {
    const PropertyValue* v = Find(name);
    return v == nullptr ? nullptr : std::get_if<T>(v);
  }
  // The value as T where it converts without loss: an Int32 as int64_t or
  // double, an Int32 or Int64 that is not negative as uint64_t, a Binary as
  // std::vector<uint8_t>; every other type only as itself (std::string,
  // Binary, bool, DateTime, double, Guid, int32_t, int64_t). nullopt if
  // absent or of a type that does not convert (a Double never becomes an
  // integer, an Int64 never an int32_t).
  template <typename T>
  std::optional<T> GetAs(std::string_view name) const {
    const PropertyValue* v = Find(name);
    if (v == nullptr) return std::nullopt;
    if constexpr (std::is_same_v<T, int64_t>) {
      if (auto* i = std::get_if<int32_t>(v)) return *i;
    } else if constexpr (std::is_same_v<T, double>) {
      if (auto* i = std::get_if<int32_t>(v)) return *i;
    } else if constexpr (std::is_same_v<T, uint64_t>) {
      if (auto* i = std::get_if<int32_t>(v); i != nullptr && *i >= 0) return uint64_t(*i);
      if (auto* i = std::get_if<int64_t>(v); i != nullptr && *i >= 0) return uint64_t(*i);
      return std::nullopt;
    } else if constexpr (std::is_same_v<T, std::vector<uint8_t>>) {
      if (auto* b = std::get_if<Binary>(v))
        return std::vector<uint8_t>(b->bytes.begin(), b->bytes.end());
      return std::nullopt;
    }
    if constexpr (!std::is_same_v<T, uint64_t> && !std::is_same_v<T, std::vector<uint8_t>>) {
      static_assert(IsPropertyType<T>, "GetAs<T>: T is not a property type (see GetAs)");
      if (auto* x = std::get_if<T>(v)) return *x;
    }
    return std::nullopt;
  }
  bool Remove(std::string_view name) { return properties_.erase(std::string(name)) > 0; }

  // Why a Set failed (the first such call), empty if none did; ValidateEntity
  // reports it.
  const std::string& set_error() const { return set_error_; }

  // Keys and properties compare; ETag and Timestamp do not.
  bool SameContent(const Entity& other) const {
    return partition_key_ == other.partition_key_ && row_key_ == other.row_key_ &&
           properties_ == other.properties_;
  }

 private:
  std::string partition_key_;
  std::string row_key_;
  std::string etag_;
  DateTime timestamp_{};
  bool stale_ = false;
  std::map<std::string, PropertyValue> properties_;
  std::string set_error_;

  Entity& Unstorable(std::string name, const std::string& what) {
    properties_.erase(name);
    if (set_error_.empty())
      set_error_ = "property '" + name + "': Set was given " + what + ", which no Edm type holds";
    return *this;
  }
};

// InvalidArgument naming the key if it is not a valid PartitionKey or RowKey:
// not UTF-8, longer than kMaxKeyBytes, or containing / \ # ? or a control
// character (U+0000-U+001F, U+007F-U+009F). `which` is "PartitionKey" or
// "RowKey", used in the message.
BLOBTABLE_EXPORT Status ValidateKey(std::string_view key, std::string_view which);

// InvalidArgument naming the offending key or property if the entity breaks a
// rule: keys as above; at most kMaxProperties properties; names of 1-255
// characters starting with a letter or '_' followed by letters, digits or
// '_', and not PartitionKey, RowKey, Timestamp or ETag; strings valid UTF-8
// within kMaxStringUtf16Units; binaries within kMaxBinaryBytes; DateTimes
// within 1601-9999; GUIDs in canonical form; no failed Set (set_error()).
// (The 1 MiB size limit is checked when the entity is encoded.)
BLOBTABLE_EXPORT Status ValidateEntity(const Entity& entity);

// True if `t` is within 1601-01-01T00:00:00Z .. 9999-12-31T23:59:59.9999999Z.
BLOBTABLE_EXPORT bool IsValidDateTime(DateTime t);

// ISO 8601 / OData form, "2024-05-01T12:00:00.0000000Z" (7 fraction digits).
BLOBTABLE_EXPORT std::string FormatDateTime(DateTime t);
// Parses "YYYY-MM-DDTHH:MM:SS[.fraction](Z|+HH:MM|-HH:MM)"; InvalidArgument
// if malformed or out of range.
BLOBTABLE_EXPORT Result<DateTime> ParseDateTime(std::string_view text);

}  // namespace blobtable

#endif  // BLOBTABLE_ENTITY_H_
