// SPDX-License-Identifier: Apache-2.0
#include "model/entity_codec.h"

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

Result<Entity> DecodeEntity(std::string_view body, std::string_view blob_name) {
  const mp::What what("entity blob", blob_name);
  auto oh = mp::Unpack(body, what);
  if (!oh.ok()) return oh.status();
  Entity e;
  Status s = mp::Guard(what, [&] {
    const msgpack::object& top = oh->get();
    const msgpack::object* f = mp::Array(top, 2, "entity");
    if (f[0].type != msgpack::type::STR || mp::Str(f[0], "magic") != kMagic)
      throw mp::FormatError{"not a blobtable entity (no 'bt.entity' header)"};
    int64_t format = mp::Int(f[1], "format");
    if (format != kEntityFormat)
      throw mp::FormatError{"entity format " + std::to_string(format) +
                            " is not known to this blobtable (it reads format " +
                            std::to_string(kEntityFormat) + ")"};
    f = mp::Array(top, 6, "entity");
    e.set_partition_key(mp::Str(f[2], "PartitionKey"));
    e.set_row_key(mp::Str(f[3], "RowKey"));
    e.set_timestamp(DateTime(Ticks(mp::Int(f[4], "Timestamp"))));
    if (!IsValidDateTime(e.timestamp())) throw mp::FormatError{"Timestamp out of range"};
    const msgpack::object& props = f[5];
    const msgpack::object* items = mp::Array(props, 0, "properties");
    for (uint32_t i = 0; i < props.via.array.size; ++i) {
      const msgpack::object* p = mp::Array(items[i], 3, "property");
      std::string name = mp::Str(p[0], "property name");
      const msgpack::object& v = p[2];
      PropertyValue value;
      int64_t type = mp::Int(p[1], "property type");
      if (type < 0 || type > static_cast<int>(EdmType::kInt64))
        throw mp::FormatError{"property '" + name + "' has an unknown type"};
      switch (static_cast<EdmType>(type)) {
        case EdmType::kString: value = mp::Str(v, "String value"); break;
        case EdmType::kBinary: value = Binary{mp::Bin(v, "Binary value")}; break;
        case EdmType::kBoolean: value = mp::Bool(v, "Boolean value"); break;
        case EdmType::kDateTime: value = DateTime(Ticks(mp::Int(v, "DateTime value"))); break;
        case EdmType::kDouble: value = mp::Double(v, "Double value"); break;
        case EdmType::kGuid: value = Guid{mp::Str(v, "Guid value")}; break;
        case EdmType::kInt32: {
          int64_t n = mp::Int(v, "Int32 value");
          if (n < INT32_MIN || n > INT32_MAX) throw mp::FormatError{"Int32 value out of range"};
          value = static_cast<int32_t>(n);
          break;
        }
        case EdmType::kInt64: value = mp::Int(v, "Int64 value"); break;
        default: throw mp::FormatError{"property '" + name + "' has an unknown type"};
      }
      if (!e.mutable_properties().emplace(std::move(name), std::move(value)).second)
        throw mp::FormatError{"duplicate property"};
    }
  });
  if (!s.ok()) return s;
  // Limits were checked when the entity was written; what a reader relies
  // on (valid UTF-8, a GUID's form, dates in range) is checked here too.
  Status valid = ValidateStoredEntity(e);
  if (!valid.ok())
    return Status::Corruption(what.str() + ": stored entity breaks the rules: " + valid.message());
  return e;
}

}  // namespace blobtable::internal
