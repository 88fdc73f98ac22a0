// SPDX-License-Identifier: Apache-2.0
#include "model/entity_codec.h"
#include "model/key_rules.h"

#include "util/macros.h"
#include "util/msgpack_util.h"
#include "util/thread_spare.h"

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
    return Status::InvalidArgument("entity (PartitionKey " + QuotedForMessage(e.partition_key()) +
                                   ", RowKey " + QuotedForMessage(e.row_key()) + ") is " +
                                   std::to_string(buf.size()) +
                                   " bytes encoded; the limit is 1 MiB (1048576 bytes)");
  return std::string(buf.data(), buf.size());
}

namespace {

PropertyView ReadValue(mp::Reader& r, int64_t type, std::string_view name) {
  switch (static_cast<EdmType>(type)) {
    case EdmType::kString: return {name, EdmType::kString, r.Str("String value"), 0, 0};
    case EdmType::kBinary: return {name, EdmType::kBinary, r.Bin("Binary value"), 0, 0};
    default: break;
  }
  const mp::Item v = r.Next();
  switch (static_cast<EdmType>(type)) {
    case EdmType::kBoolean: return {name, EdmType::kBoolean, {}, v.Bool("Boolean value"), 0};
    case EdmType::kDateTime: return {name, EdmType::kDateTime, {}, v.Int("DateTime value"), 0};
    case EdmType::kDouble: return {name, EdmType::kDouble, {}, 0, v.Double("Double value")};
    case EdmType::kGuid: return {name, EdmType::kGuid, v.Str("Guid value"), 0, 0};
    case EdmType::kInt32: {
      const int64_t n = v.Int("Int32 value");
      if (n < INT32_MIN || n > INT32_MAX) throw mp::FormatError{"Int32 value out of range"};
      return {name, EdmType::kInt32, {}, n, 0};
    }
    case EdmType::kInt64: return {name, EdmType::kInt64, {}, v.Int("Int64 value"), 0};
    default: throw mp::FormatError{"property '" + std::string(name) + "' has an unknown type"};
  }
}

// Whether `name` is one of `only` (a filter's few names: compared by
// length first, most names differ in it).
bool Wanted(const std::vector<std::string>& only, std::string_view name) {
  for (const std::string& o : only)
    if (o.size() == name.size() && std::memcmp(o.data(), name.data(), name.size()) == 0)
      return true;
  return false;
}

struct EntityHead {
  std::string_view partition_key, row_key;
  DateTime timestamp{};
};

// Reads an entity body (["bt.entity", format, pk, rk, ticks, [[name, type,
// value], ...]]) in one pass, into views of `body`: its keys and Timestamp
// into `head`, its properties (those `only` names, if not null) into
// `props`, sorted by name. Elements a later format may add (after the
// properties, after a property's value) are skipped.
void ReadEntity(std::string_view body, const std::vector<std::string>* only, EntityHead& head,
                std::vector<PropertyView>& props) {
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
  head.partition_key = r.Str("PartitionKey");
  head.row_key = r.Str("RowKey");
  head.timestamp = DateTime(Ticks(r.Int("Timestamp")));
  if (!IsValidDateTime(head.timestamp)) throw mp::FormatError{"Timestamp out of range"};
  props.clear();
  bool sorted = true;  // written in name order; another writer's order is sorted here
  const uint32_t count = r.Array("properties");
  for (uint32_t i = 0; i < count; ++i) {
    const uint32_t items = r.Array("property");
    if (items < 3) throw mp::FormatError{"property is not long enough"};
    const std::string_view name = r.Str("property name");
    const int64_t type = r.Int("property type");
    if (type < 0 || type > static_cast<int>(EdmType::kInt64))
      throw mp::FormatError{"property '" + std::string(name) + "' has an unknown type"};
    if (only != nullptr && !Wanted(*only, name)) {
      r.Skip(items - 2);
      continue;
    }
    if (!props.empty() && name <= props.back().name()) {
      if (name == props.back().name()) throw mp::FormatError{"duplicate property"};
      sorted = false;
    }
    props.push_back(ReadValue(r, type, name));
    r.Skip(items - 3);
  }
  r.Skip(fields - 6);
  r.ExpectEnd();
  if (sorted) return;
  auto by_name = [](const PropertyView& a, const PropertyView& b) { return a.name() < b.name(); };
  std::sort(props.begin(), props.end(), by_name);
  if (std::adjacent_find(props.begin(), props.end(), [](const auto& a, const auto& b) {
        return a.name() == b.name();
      }) != props.end())
    throw mp::FormatError{"duplicate property"};
}

// Reads `body` into views and checks what every read entity must be.
Result<EntityView> Read(std::string_view body, std::string_view blob_name,
                        const std::vector<std::string>* only, std::string_view etag,
                        std::vector<PropertyView>& props) {
  const mp::What what("entity blob", blob_name);
  EntityHead head;
  BT_RETURN_IF_ERROR(mp::Guard(what, [&] { ReadEntity(body, only, head, props); }));
  // Limits were checked when the entity was written; what a reader relies
  // on (valid UTF-8, a GUID's form, dates in range) is checked here too.
  EntityView view(head.partition_key, head.row_key, head.timestamp, etag, props);
  Status valid = ValidateStoredView(view);
  if (!valid.ok())
    return Status::Corruption(what.str() + ": stored entity breaks the rules: " + valid.message());
  return view;
}

}  // namespace

Status DecodeEntityInto(std::string_view body, std::string_view blob_name, Entity& out) {
  struct PropsTag;  // one allocation a thread, not a read
  ThreadSpare<std::vector<PropertyView>, PropsTag> props;
  auto view = Read(body, blob_name, nullptr, {}, *props);
  if (!view.ok()) return view.status();
  CopyViewInto(*view, out);
  return Status::OK();
}

Result<Entity> DecodeEntity(std::string_view body, std::string_view blob_name) {
  Result<Entity> out{Entity()};  // returned by name on every path: built once, never moved
  if (Status s = DecodeEntityInto(body, blob_name, *out); !s.ok()) out = std::move(s);
  return out;
}

Result<EntityView> DecodeEntityView(std::string_view body, std::string_view blob_name,
                                    std::string_view etag, std::vector<PropertyView>& props) {
  return Read(body, blob_name, nullptr, etag, props);
}

Result<EntityView> DecodeEntityViewPart(std::string_view body, std::string_view blob_name,
                                        const std::vector<std::string>& only,
                                        std::vector<PropertyView>& props) {
  return Read(body, blob_name, &only, {}, props);
}

void CopyViewInto(const EntityView& view, Entity& out) {
  out.set_partition_key(std::string(view.partition_key()));
  out.set_row_key(std::string(view.row_key()));
  out.set_timestamp(view.timestamp());
  out.set_etag(std::string(view.etag()));
  out.set_stale(view.stale());
  auto& stored = out.mutable_properties();
  for (const PropertyView& p : view.properties())
    stored.emplace_hint(stored.end(), std::string(p.name()), p.ToValue());
}

EntityView ViewOf(const Entity& e, std::vector<PropertyView>& props) {
  props.clear();
  for (const auto& [name, value] : e.properties()) props.emplace_back(name, value);
  EntityView view(e.partition_key(), e.row_key(), e.timestamp(), e.etag(), props);
  view.set_stale(e.stale());
  return view;
}

}  // namespace blobtable::internal
