// SPDX-License-Identifier: Apache-2.0
#include "model/entity_codec.h"

#include "util/macros.h"
#include "util/msgpack_util.h"

#include <cstring>

namespace blobtable::internal {
namespace {
constexpr char kMagic[] = "bt.entity";
}

Result<std::string> EncodeEntity(const Entity& e) {
  msgpack::sbuffer buf;
  msgpack::packer<msgpack::sbuffer> pk(&buf);
  pk.pack_array(6);
  pk.pack(std::string_view(kMagic));
  pk.pack(kEntityFormat);
  pk.pack(e.partition_key());
  pk.pack(e.row_key());
  pk.pack(e.timestamp().time_since_epoch().count());
  pk.pack_array(static_cast<uint32_t>(e.properties().size()));
  for (const auto& [name, value] : e.properties()) {
    pk.pack_array(3);
    pk.pack(name);
    pk.pack(static_cast<int>(value.index()));
    std::visit(
        [&](const auto& v) {
          using T = std::decay_t<decltype(v)>;
          if constexpr (std::is_same_v<T, Binary>) {
            pk.pack_bin(static_cast<uint32_t>(v.bytes.size()));
            pk.pack_bin_body(v.bytes.data(), static_cast<uint32_t>(v.bytes.size()));
          } else if constexpr (std::is_same_v<T, Guid>) {
            pk.pack(v.value);
          } else if constexpr (std::is_same_v<T, DateTime>) {
            pk.pack(v.time_since_epoch().count());
          } else if constexpr (std::is_same_v<T, double>) {
            // Always float64: msgpack-c's pack_double writes integral values
            // (12.0, -0.0) as integers, losing the type and the sign of zero.
            uint64_t bits;
            std::memcpy(&bits, &v, sizeof(bits));
            char raw[9] = {static_cast<char>(0xcb)};
            for (int i = 0; i < 8; ++i) raw[1 + i] = static_cast<char>(bits >> (56 - 8 * i));
            buf.write(raw, sizeof(raw));
          } else {
            pk.pack(v);
          }
        },
        value);
  }
  if (buf.size() > kMaxEntityBytes)
    return Status::InvalidArgument("entity (PartitionKey '" + e.partition_key().substr(0, 64) +
                                   "', RowKey '" + e.row_key().substr(0, 64) + "') is " +
                                   std::to_string(buf.size()) +
                                   " bytes encoded; the limit is 1 MiB (1048576 bytes)");
  return std::string(buf.data(), buf.size());
}

namespace {

// Walks an entity body (["bt.entity", format, pk, rk, ticks, [[name, type,
// value], ...]]) straight into an Entity. Depths: 1 the top array's items,
// 2 the properties, 3 a property's name, type and value.
class EntityWalker {
 public:
  explicit EntityWalker(Entity& e) : e_(e) {}

  void operator()(const mp::Path& p, const mp::Item& it) {
    // Elements a later format may add (after the properties, after a
    // property's value) are skipped.
    if ((p.depth >= 2 && p.index[0] != 5) || (p.depth >= 3 && p.index[2] > 2)) return;
    switch (p.depth) {
      case 0:
        if (it.kind == mp::Item::kArray && it.size < 2)
          throw mp::FormatError{"entity is not long enough"};
        if (it.kind != mp::Item::kArray && it.kind != mp::Item::kEnd)
          throw mp::FormatError{"entity is not an array"};
        size_ = it.kind == mp::Item::kArray ? it.size : size_;
        return;
      case 1: return Field(p.Last(), it);
      case 2: return Property(it);
      case 3: return PropertyItem(p.Last(), it);
      default: throw mp::FormatError{"a property value is not of its type"};
    }
  }

 private:
  void Field(uint32_t index, const mp::Item& it) {
    switch (index) {
      case 0:
        if (it.kind != mp::Item::kStr || it.bytes != kMagic)
          throw mp::FormatError{"not a blobtable entity (no 'bt.entity' header)"};
        break;
      case 1: {
        const int64_t format = it.Int("format");
        if (format != kEntityFormat)
          throw mp::FormatError{"entity format " + std::to_string(format) +
                                " is not known to this blobtable (it reads format " +
                                std::to_string(kEntityFormat) + ")"};
        if (size_ < 6) throw mp::FormatError{"entity is not long enough"};
        break;
      }
      case 2: e_.set_partition_key(std::string(it.Str("PartitionKey"))); break;
      case 3: e_.set_row_key(std::string(it.Str("RowKey"))); break;
      case 4:
        e_.set_timestamp(DateTime(Ticks(it.Int("Timestamp"))));
        if (!IsValidDateTime(e_.timestamp())) throw mp::FormatError{"Timestamp out of range"};
        break;
      case 5:
        if (it.kind != mp::Item::kArray && it.kind != mp::Item::kEnd)
          throw mp::FormatError{"properties is not an array"};
        break;
      default: break;
    }
  }
  void Property(const mp::Item& it) {
    if (it.kind == mp::Item::kEnd) {
      if (!has_value_) throw mp::FormatError{"property is not long enough"};
      if (!e_.mutable_properties().emplace(std::move(name_), std::move(value_)).second)
        throw mp::FormatError{"duplicate property"};
      return;
    }
    if (it.kind != mp::Item::kArray) throw mp::FormatError{"property is not an array"};
    has_value_ = false;
  }
  void PropertyItem(uint32_t index, const mp::Item& it) {
    if (index == 0) {
      name_ = std::string(it.Str("property name"));
    } else if (index == 1) {
      type_ = it.Int("property type");
      if (type_ < 0 || type_ > static_cast<int>(EdmType::kInt64))
        throw mp::FormatError{"property '" + name_ + "' has an unknown type"};
    } else {
      value_ = Value(it);
      has_value_ = true;
    }
  }
  PropertyValue Value(const mp::Item& v) const {
    switch (static_cast<EdmType>(type_)) {
      case EdmType::kString: return std::string(v.Str("String value"));
      case EdmType::kBinary: return Binary{std::string(v.Bin("Binary value"))};
      case EdmType::kBoolean: return v.Bool("Boolean value");
      case EdmType::kDateTime: return DateTime(Ticks(v.Int("DateTime value")));
      case EdmType::kDouble: return v.Double("Double value");
      case EdmType::kGuid: return Guid{std::string(v.Str("Guid value"))};
      case EdmType::kInt32: {
        const int64_t n = v.Int("Int32 value");
        if (n < INT32_MIN || n > INT32_MAX) throw mp::FormatError{"Int32 value out of range"};
        return static_cast<int32_t>(n);
      }
      case EdmType::kInt64: return v.Int("Int64 value");
      default: throw mp::FormatError{"property '" + name_ + "' has an unknown type"};
    }
  }

  Entity& e_;
  uint32_t size_ = 0;
  std::string name_;
  int64_t type_ = -1;
  PropertyValue value_;
  bool has_value_ = false;
};

}  // namespace

Result<Entity> DecodeEntity(std::string_view body, std::string_view blob_name) {
  const mp::What what("entity blob", blob_name);
  Entity e;
  BT_RETURN_IF_ERROR(mp::Walk(body, what, EntityWalker(e)));
  // Limits were checked when the entity was written; what a reader relies
  // on (valid UTF-8, a GUID's form, dates in range) is checked here too.
  Status valid = ValidateStoredEntity(e);
  if (!valid.ok())
    return Status::Corruption(what.str() + ": stored entity breaks the rules: " + valid.message());
  return e;
}

}  // namespace blobtable::internal
