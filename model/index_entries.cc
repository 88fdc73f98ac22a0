// SPDX-License-Identifier: Apache-2.0
#include "model/index_entries.h"

#include <algorithm>
#include <cstdio>

#include "model/index_key.h"
#include "model/index_naming.h"

namespace blobtable::internal {
namespace {

std::string ValueText(const PropertyValue& v) {
  struct Text {
    std::string operator()(const std::string& s) const {
      return "'" + s.substr(0, 64) + (s.size() > 64 ? "...'" : "'");
    }
    std::string operator()(const Binary& b) const {
      return "binary of " + std::to_string(b.bytes.size()) + " bytes";
    }
    std::string operator()(bool b) const { return b ? "true" : "false"; }
    std::string operator()(DateTime t) const { return FormatDateTime(t); }
    std::string operator()(double d) const {
      char buf[32];
      std::snprintf(buf, sizeof buf, "%.17g", d);
      return buf;
    }
    std::string operator()(const Guid& g) const { return g.value; }
    std::string operator()(int32_t i) const { return std::to_string(i); }
    std::string operator()(int64_t i) const { return std::to_string(i); }
  };
  return std::visit(Text{}, v);
}

}  // namespace

std::optional<std::vector<PropertyValue>> IndexedValues(const IndexSpec& spec,
                                                        const Entity& entity) {
  std::vector<PropertyValue> values;
  values.reserve(spec.properties.size());
  for (const std::string& p : spec.properties) {
    const PropertyValue* v = entity.Find(p);
    if (v == nullptr) return std::nullopt;
    values.push_back(*v);
  }
  return values;
}

Result<std::optional<Entity>> EntryOf(std::string_view table, const IndexSpec& spec,
                                      const Entity& entity) {
  auto values = IndexedValues(spec, entity);
  if (!values) return std::optional<Entity>();
  auto keys = naming::IndexEntryKeysOf(table, spec.name, *values, spec.unique,
                                       entity.partition_key(), entity.row_key());
  if (!keys.ok()) return keys.status().WithContext("index " + spec.name);
  Entity entry(std::move(keys->partition_key), std::move(keys->row_key));
  for (size_t i = 0; i < spec.properties.size(); ++i) entry.Set(spec.properties[i], (*values)[i]);
  for (const std::string& c : spec.covered)
    if (const PropertyValue* v = entity.Find(c)) entry.Set(c, *v);
  entry.Set(kEntryPartitionKey, entity.partition_key());
  entry.Set(kEntryRowKey, entity.row_key());
  return std::optional<Entity>(std::move(entry));
}

Result<naming::EntityKey> EntityOfEntry(const Entity& entry) {
  const PropertyValue* pk = entry.Find(kEntryPartitionKey);
  const PropertyValue* rk = entry.Find(kEntryRowKey);
  if (pk == nullptr || rk == nullptr || !std::holds_alternative<std::string>(*pk) ||
      !std::holds_alternative<std::string>(*rk))
    return Status::Corruption("an index entry that names no entity");
  return naming::EntityKey{std::get<std::string>(*pk), std::get<std::string>(*rk)};
}

Entity EntityFromEntry(const Entity& entry, const naming::EntityKey& keys) {
  Entity e(keys.partition_key, keys.row_key);
  for (const auto& [name, value] : entry.properties())
    if (name != kEntryPartitionKey && name != kEntryRowKey) e.Set(name, value);
  return e;
}

Status ValidateIndexQuery(const IndexSpec& spec, const IndexQuery& query) {
  const size_t ranged = (query.from || query.to) ? 1 : 0;
  if (query.equal.size() + ranged > spec.properties.size())
    return Status::InvalidArgument(
        "index " + spec.name + " orders by " + std::to_string(spec.properties.size()) +
        " properties; the query names " + std::to_string(query.equal.size()) + " equal values" +
        (ranged ? " and a range after them" : ""));
  if (query.from && query.to && index_key::Compare(*query.from, *query.to) > 0)
    return Status::InvalidArgument("index " + spec.name +
                                   ": the range's lower end is above its upper end");
  return Status::OK();
}

bool MatchesIndexQuery(const IndexQuery& query, const std::vector<PropertyValue>& values) {
  for (size_t i = 0; i < query.equal.size(); ++i)
    if (index_key::Compare(values[i], query.equal[i]) != 0) return false;
  const size_t next = query.equal.size();
  if (query.from && index_key::Compare(values[next], *query.from) < 0) return false;
  if (query.to && index_key::Compare(values[next], *query.to) > 0) return false;
  return true;
}

bool SameIndexValues(const std::vector<PropertyValue>& a, const std::vector<PropertyValue>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (index_key::Compare(a[i], b[i]) != 0) return false;
  return true;
}

std::string DescribeIndexValues(const IndexSpec& spec, const std::vector<PropertyValue>& values) {
  std::string out = "index " + spec.name + " (";
  for (size_t i = 0; i < values.size() && i < spec.properties.size(); ++i) {
    if (i > 0) out += ", ";
    out += spec.properties[i] + " = " + ValueText(values[i]);
  }
  return out + ")";
}

}  // namespace blobtable::internal
