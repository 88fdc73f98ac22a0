// SPDX-License-Identifier: Apache-2.0
#include "model/index_schema.h"

#include <algorithm>
#include <utility>

#include "model/blob_naming.h"
#include "model/key_rules.h"
#include "util/ascii.h"
#include "util/msgpack_util.h"

namespace blobtable::internal {
namespace {

constexpr char kSchemaMagic[] = "bt.schema";
constexpr int kSchemaFormat = 1;

bool IsKeyOrTimestamp(std::string_view name) {
  return name == "PartitionKey" || name == "RowKey" || name == "Timestamp";
}

Status BadSpec(const IndexSpec& spec, const std::string& why) {
  return Status::InvalidArgument("index '" + spec.name + "': " + why);
}

void PackStrings(msgpack::packer<msgpack::sbuffer>& pk, const std::vector<std::string>& v) {
  pk.pack_array(static_cast<uint32_t>(v.size()));
  for (const std::string& s : v) pk.pack(s);
}

std::vector<std::string> Strings(const msgpack::object& o, const char* field) {
  const msgpack::object* items = mp::Array(o, 0, field);
  std::vector<std::string> out;
  for (uint32_t i = 0; i < o.via.array.size; ++i) out.push_back(mp::Str(items[i], field));
  return out;
}

}  // namespace

const IndexDefinition* TableSchema::Find(std::string_view name) const {
  for (const IndexDefinition& d : indexes)
    if (AsciiLower(d.spec.name) == AsciiLower(name)) return &d;
  return nullptr;
}

IndexDefinition* TableSchema::Find(std::string_view name) {
  return const_cast<IndexDefinition*>(std::as_const(*this).Find(name));
}

bool TableSchema::Maintained() const {
  return std::any_of(indexes.begin(), indexes.end(),
                     [](const IndexDefinition& d) { return d.state != IndexState::kDropping; });
}

Status ValidateNewIndex(const IndexSpec& spec, const TableSchema& schema) {
  if (!naming::FollowsTableNameRules(spec.name))
    return BadSpec(spec, "an index name is 3-63 ASCII letters and digits, starting with a letter");
  for (const IndexDefinition& d : schema.indexes)
    if (AsciiLower(d.spec.name) == AsciiLower(spec.name))
      return BadSpec(spec, "the table has an index of that name");
  if (schema.indexes.size() >= kMaxIndexesPerTable)
    return BadSpec(spec, "a table has at most " + std::to_string(kMaxIndexesPerTable) + " indexes");
  if (spec.properties.empty() || spec.properties.size() > kMaxIndexedProperties)
    return BadSpec(
        spec, "an index orders by 1 to " + std::to_string(kMaxIndexedProperties) + " properties");
  for (size_t i = 0; i < spec.properties.size(); ++i) {
    const std::string& p = spec.properties[i];
    if (IsKeyOrTimestamp(p))
      return BadSpec(spec, p + " cannot be indexed (the table is ordered by its keys already; "
                               "Timestamp is storage's)");
    if (Status s = ValidatePropertyNameRules(p); !s.ok()) return BadSpec(spec, s.message());
    if (std::find(spec.properties.begin(), spec.properties.begin() + i, p) !=
        spec.properties.begin() + i)
      return BadSpec(spec, "property " + p + " is named twice");
  }
  for (const std::string& c : spec.covered)
    if (Status s = ValidatePropertyNameRules(c); !s.ok()) return BadSpec(spec, s.message());
  return Status::OK();
}

std::string EncodeTableSchema(const TableSchema& schema) {
  msgpack::sbuffer buf;
  msgpack::packer<msgpack::sbuffer> pk(&buf);
  pk.pack_array(3);
  pk.pack(std::string_view(kSchemaMagic));
  pk.pack(kSchemaFormat);
  pk.pack_array(static_cast<uint32_t>(schema.indexes.size()));
  for (const IndexDefinition& d : schema.indexes) {
    pk.pack_array(6);
    pk.pack(d.spec.name);
    PackStrings(pk, d.spec.properties);
    pk.pack(d.spec.unique);
    PackStrings(pk, d.spec.covered);
    pk.pack(static_cast<int>(d.state));
    pk.pack(d.built_through);
  }
  return std::string(buf.data(), buf.size());
}

Result<TableSchema> DecodeTableSchema(std::string_view bytes) {
  auto handle = mp::Unpack(bytes, "table schema");
  if (!handle.ok()) return handle.status();
  TableSchema schema;
  Status s = mp::Guard("table schema", [&] {
    const msgpack::object& top = handle->get();
    const msgpack::object* fields = mp::Array(top, 3, "schema");
    if (mp::Str(fields[0], "magic") != kSchemaMagic) throw mp::FormatError{"not a table schema"};
    if (mp::Int(fields[1], "format") != kSchemaFormat)
      throw mp::FormatError{"schema format " + std::to_string(mp::Int(fields[1], "format")) +
                            " is not one this blobtable reads"};
    const msgpack::object* list = mp::Array(fields[2], 0, "indexes");
    for (uint32_t i = 0; i < fields[2].via.array.size; ++i) {
      const msgpack::object* f = mp::Array(list[i], 6, "index");
      IndexDefinition d;
      d.spec.name = mp::Str(f[0], "name");
      d.spec.properties = Strings(f[1], "properties");
      d.spec.unique = mp::Bool(f[2], "unique");
      d.spec.covered = Strings(f[3], "covered");
      const int64_t state = mp::Int(f[4], "state");
      if (state < 0 || state > static_cast<int>(IndexState::kDropping))
        throw mp::FormatError{"index state " + std::to_string(state)};
      d.state = static_cast<IndexState>(state);
      d.built_through = mp::Str(f[5], "built through");
      schema.indexes.push_back(std::move(d));
    }
  });
  if (!s.ok()) return s;
  return schema;
}

}  // namespace blobtable::internal
