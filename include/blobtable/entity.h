// Entities: PartitionKey, RowKey, Timestamp, ETag and typed properties, as in
// Azure Table Storage, with Azure's validation rules.
//
// Thread-safety: an Entity is a plain value; distinct objects may be used
// from distinct threads.
#ifndef BLOBTABLE_ENTITY_H_
#define BLOBTABLE_ENTITY_H_

#include <chrono>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <variant>

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

inline EdmType TypeOf(const PropertyValue& v) { return static_cast<EdmType>(v.index()); }
// "Edm.String", "Edm.Binary", ... as in Azure's JSON annotations.
BLOBTABLE_EXPORT std::string_view EdmTypeName(EdmType type);

// Limits (Azure Table Storage's, except where blob naming is tighter; see
// README "Limits").
inline constexpr size_t kMaxKeyBytes = 1024;           // each key, UTF-8 bytes
inline constexpr size_t kMaxProperties = 252;          // custom properties
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

  Entity& Set(std::string name, PropertyValue value) {
    properties_[std::move(name)] = std::move(value);
    return *this;
  }
  // Null if absent.
  const PropertyValue* Find(std::string_view name) const {
    auto it = properties_.find(std::string(name));
    return it == properties_.end() ? nullptr : &it->second;
  }
  // Null if absent or of another type.
  template <typename T>
  const T* FindAs(std::string_view name) const {
    const PropertyValue* v = Find(name);
    return v == nullptr ? nullptr : std::get_if<T>(v);
  }
  bool Remove(std::string_view name) { return properties_.erase(std::string(name)) > 0; }

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
// within 1601-9999; GUIDs in canonical form. (The 1 MiB size limit is checked
// when the entity is encoded.)
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
