// SPDX-License-Identifier: Apache-2.0
#include "model/entity_codec.h"

#include "util/macros.h"
#include "util/msgpack_util.h"

#include <algorithm>
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

PropertyValue ReadValue(const mp::Item& v, int64_t type, std::string_view name) {
  switch (static_cast<EdmType>(type)) {
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
    default: throw mp::FormatError{"property '" + std::string(name) + "' has an unknown type"};
  }
}

// Reads an entity body (["bt.entity", format, pk, rk, ticks, [[name, type,
// value], ...]]) straight into `e`, in one pass. Elements a later format may
// add (after the properties, after a property's value) are skipped.
void ReadEntity(std::string_view body, const std::vector<std::string>* only, Entity& e) {
  mp::Reader r(body);
  const uint32_t fields = r.Array("entity");
  if (fields < 2) throw mp::FormatError{"entity is not long enough"};
  const mp::Item magic = r.Next();
  if (magic.kind != mp::Item::kStr || magic.bytes != kMagic)
    throw mp::FormatError{"not a blobtable entity (no 'bt.entity' header)"};
  const int64_t format = r.Int("format");
  if (format != kEntityFormat)
    throw mp::FormatError{"entity format " + std::to_string(format) +
                          " is not known to this blobtable (it reads format " +
                          std::to_string(kEntityFormat) + ")"};
  if (fields < 6) throw mp::FormatError{"entity is not long enough"};
  e.set_partition_key(std::string(r.Str("PartitionKey")));
  e.set_row_key(std::string(r.Str("RowKey")));
  e.set_timestamp(DateTime(Ticks(r.Int("Timestamp"))));
  if (!IsValidDateTime(e.timestamp())) throw mp::FormatError{"Timestamp out of range"};
  auto& props = e.mutable_properties();
  const uint32_t count = r.Array("properties");
  for (uint32_t i = 0; i < count; ++i) {
    const uint32_t items = r.Array("property");
    if (items < 3) throw mp::FormatError{"property is not long enough"};
    const std::string_view name = r.Str("property name");
    const int64_t type = r.Int("property type");
    if (type < 0 || type > static_cast<int>(EdmType::kInt64))
      throw mp::FormatError{"property '" + std::string(name) + "' has an unknown type"};
    if (only != nullptr && !std::binary_search(only->begin(), only->end(), name)) {
      r.Skip(items - 2);
      continue;
    }
    PropertyValue value = ReadValue(r.Next(), type, name);
    r.Skip(items - 3);
    // Written in name order, so the hint is where each one goes.
    const size_t before = props.size();
    props.emplace_hint(props.end(), std::string(name), std::move(value));
    if (props.size() == before) throw mp::FormatError{"duplicate property"};
  }
  r.Skip(fields - 6);
  r.ExpectEnd();
}

Result<Entity> Decode(std::string_view body, std::string_view blob_name,
                      const std::vector<std::string>* only) {
  const mp::What what("entity blob", blob_name);
  Entity e;
  BT_RETURN_IF_ERROR(mp::Guard(what, [&] { ReadEntity(body, only, e); }));
  // Limits were checked when the entity was written; what a reader relies
  // on (valid UTF-8, a GUID's form, dates in range) is checked here too.
  Status valid = ValidateStoredEntity(e);
  if (!valid.ok())
    return Status::Corruption(what.str() + ": stored entity breaks the rules: " + valid.message());
  return e;
}
}  // namespace

Result<Entity> DecodeEntity(std::string_view body, std::string_view blob_name) {
  return Decode(body, blob_name, nullptr);
}

Result<Entity> DecodeEntityPart(std::string_view body, std::string_view blob_name,
                                const std::vector<std::string>& only) {
  return Decode(body, blob_name, &only);
}

}  // namespace blobtable::internal
