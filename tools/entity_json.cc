// SPDX-License-Identifier: Apache-2.0
#include "tools/entity_json.h"

#include "util/ascii.h"
#include "util/base64.h"

#include <charconv>
#include <cmath>
#include <cstring>
#include <limits>
#include <variant>

namespace blobtable::cli {
namespace {

using json = nlohmann::json;
constexpr std::string_view kTypeSuffix = "@odata.type";

Status Bad(const std::string& name, const std::string& why) {
  return Status::InvalidArgument("property '" + name + "': " + why);
}

Result<int64_t> IntegerOf(const json& v, const std::string& name, const char* type) {
  if (v.is_number_integer()) {
    if (v.is_number_unsigned() && v.get<uint64_t>() > static_cast<uint64_t>(INT64_MAX))
      return Bad(name, "integer out of range for " + std::string(type));
    return v.get<int64_t>();
  }
  if (v.is_string()) {
    // Exactly an optional '-' and digits, as Azure writes Int64 values.
    const std::string& s = v.get_ref<const std::string&>();
    int64_t n = 0;
    auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), n, 10);
    if (!s.empty() && ec == std::errc() && end == s.data() + s.size()) return n;
  }
  return Bad(name, std::string("expected an integer for ") + type);
}

Result<PropertyValue> Typed(const std::string& name, const json& v, std::string_view type) {
  if (type == "Edm.String") {
    if (!v.is_string()) return Bad(name, "Edm.String needs a JSON string");
    return PropertyValue(v.get<std::string>());
  }
  if (type == "Edm.Boolean") {
    if (!v.is_boolean()) return Bad(name, "Edm.Boolean needs true or false");
    return PropertyValue(v.get<bool>());
  }
  if (type == "Edm.Int32") {
    auto n = IntegerOf(v, name, "Edm.Int32");
    if (!n.ok()) return n.status();
    if (*n < INT32_MIN || *n > INT32_MAX) return Bad(name, "out of range for Edm.Int32");
    return PropertyValue(static_cast<int32_t>(*n));
  }
  if (type == "Edm.Int64") {
    auto n = IntegerOf(v, name, "Edm.Int64");
    if (!n.ok()) return n.status();
    return PropertyValue(*n);
  }
  if (type == "Edm.Double") {
    if (v.is_number()) return PropertyValue(v.get<double>());
    if (v.is_string()) {
      const std::string& s = v.get_ref<const std::string&>();
      if (s == "NaN") return PropertyValue(std::numeric_limits<double>::quiet_NaN());
      if (s == "Infinity") return PropertyValue(std::numeric_limits<double>::infinity());
      if (s == "-Infinity") return PropertyValue(-std::numeric_limits<double>::infinity());
    }
    return Bad(name, "Edm.Double needs a number, \"NaN\", \"Infinity\" or \"-Infinity\"");
  }
  if (type == "Edm.Binary") {
    if (!v.is_string()) return Bad(name, "Edm.Binary needs a base64 string");
    auto bytes = internal::Base64Decode(v.get_ref<const std::string&>());
    if (!bytes.ok()) return Bad(name, bytes.status().message());
    return PropertyValue(Binary{std::move(*bytes)});
  }
  if (type == "Edm.Guid") {
    if (!v.is_string()) return Bad(name, "Edm.Guid needs a string");
    return PropertyValue(Guid{v.get<std::string>()});
  }
  if (type == "Edm.DateTime") {
    if (!v.is_string()) return Bad(name, "Edm.DateTime needs an ISO 8601 string");
    auto t = ParseDateTime(v.get_ref<const std::string&>());
    if (!t.ok()) return Bad(name, t.status().message());
    return PropertyValue(*t);
  }
  return Bad(name, "unknown type annotation '" + std::string(type) + "'");
}

Result<PropertyValue> Untyped(const std::string& name, const json& v) {
  if (v.is_string()) return PropertyValue(v.get<std::string>());
  if (v.is_boolean()) return PropertyValue(v.get<bool>());
  if (v.is_number_integer()) {
    bool fits = v.is_number_unsigned()
                    ? v.get<uint64_t>() <= INT32_MAX
                    : v.get<int64_t>() >= INT32_MIN && v.get<int64_t>() <= INT32_MAX;
    if (!fits)
      return Bad(name, "integer " + v.dump() + " does not fit Edm.Int32; add \"" + name +
                           "@odata.type\": \"Edm.Int64\"");
    return PropertyValue(static_cast<int32_t>(v.get<int64_t>()));
  }
  if (v.is_number_float()) return PropertyValue(v.get<double>());
  if (v.is_null()) return Bad(name, "null values cannot be stored (omit the property)");
  return Bad(name, "objects and arrays cannot be stored as properties");
}

}  // namespace

Result<Entity> EntityFromJson(const json& j, std::string* etag) {
  if (!j.is_object()) return Status::InvalidArgument("an entity must be a JSON object");
  Entity e;
  auto key = [&](const char* field, void (Entity::*set)(std::string)) -> Status {
    auto it = j.find(field);
    if (it == j.end() || !it->is_string())
      return Status::InvalidArgument(std::string("entity needs a string \"") + field + "\"");
    (e.*set)(it->get<std::string>());
    return Status::OK();
  };
  Status s = key("PartitionKey", &Entity::set_partition_key);
  if (s.ok()) s = key("RowKey", &Entity::set_row_key);
  if (!s.ok()) return s;
  if (etag != nullptr) {
    auto it = j.find("odata.etag");
    *etag = it != j.end() && it->is_string() ? it->get<std::string>() : "";
  }
  for (const auto& [name, value] : j.items()) {
    if (name == "PartitionKey" || name == "RowKey" || name == "Timestamp" ||
        name.rfind("odata.", 0) == 0)
      continue;
    if (name.size() > kTypeSuffix.size() &&
        name.compare(name.size() - kTypeSuffix.size(), kTypeSuffix.size(), kTypeSuffix) == 0) {
      std::string prop = name.substr(0, name.size() - kTypeSuffix.size());
      if (prop != "Timestamp" && !j.contains(prop))
        return Status::InvalidArgument("annotation '" + name + "' has no property '" + prop + "'");
      if (!value.is_string())
        return Status::InvalidArgument("annotation '" + name + "' must be a string");
      continue;
    }
    auto type = j.find(name + std::string(kTypeSuffix));
    auto v = type != j.end() && type->is_string()
                 ? Typed(name, value, type->get_ref<const std::string&>())
                 : Untyped(name, value);
    if (!v.ok()) return v.status();
    e.Set(name, std::move(*v));
  }
  return e;
}

nlohmann::ordered_json EntityToJson(const Entity& e) {
  nlohmann::ordered_json j = nlohmann::ordered_json::object();
  if (!e.etag().empty()) j["odata.etag"] = e.etag();
  j["PartitionKey"] = e.partition_key();
  j["RowKey"] = e.row_key();
  // An entity answered by a covered index query has none (its entry was
  // written with it, before storage stamped it): nothing is printed then,
  // rather than 1970.
  if (e.timestamp() != TimePoint{}) {
    j["Timestamp@odata.type"] = "Edm.DateTime";
    j["Timestamp"] = FormatDateTime(e.timestamp());
  }
  for (const auto& property : e.properties()) {
    // Not a structured binding: C++20 lets a lambda capture one, but
    // clang 14 (the fuzz build's compiler) does not.
    const std::string& name = property.first;
    const PropertyValue& value = property.second;
    std::string annotation = name + std::string(kTypeSuffix);
    std::visit(
        [&](const auto& v) {
          using T = std::decay_t<decltype(v)>;
          if constexpr (std::is_same_v<T, std::string> || std::is_same_v<T, bool> ||
                        std::is_same_v<T, int32_t>) {
            j[name] = v;
          } else if constexpr (std::is_same_v<T, double>) {
            // Always annotated, as the Table service's full metadata does: an
            // integral Double printed as 121.0 comes back from many JSON tools
            // (jq 1.6) as 121, which alone would read as an Int32.
            j[annotation] = "Edm.Double";
            if (std::isfinite(v))
              j[name] = v;
            else
              j[name] = std::isnan(v) ? "NaN" : (v > 0 ? "Infinity" : "-Infinity");
          } else if constexpr (std::is_same_v<T, int64_t>) {
            j[annotation] = "Edm.Int64";
            j[name] = std::to_string(v);
          } else if constexpr (std::is_same_v<T, Binary>) {
            j[annotation] = "Edm.Binary";
            j[name] = internal::Base64Encode(v.bytes);
          } else if constexpr (std::is_same_v<T, Guid>) {
            j[annotation] = "Edm.Guid";
            j[name] = v.value;
          } else if constexpr (std::is_same_v<T, DateTime>) {
            j[annotation] = "Edm.DateTime";
            j[name] = FormatDateTime(v);
          }
        },
        value);
  }
  return j;
}

Result<nlohmann::json> ParseJson(std::string_view text, std::string_view what, bool one_line) {
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    // "[json.exception.parse_error.101] parse error at line 1, column 9: ..."
    std::string_view why = e.what();
    if (const size_t tag_end = why.find("] "); why.starts_with("[json.") && tag_end != why.npos)
      why.remove_prefix(tag_end + 2);
    std::string message(why);
    if (const size_t at = message.find(" at line 1, column "); one_line && at != message.npos)
      message.replace(at, 19, " at column ");
    return Status::InvalidArgument(std::string(what) + " is not valid JSON: " + message);
  } catch (const std::exception& e) {
    return Status::InvalidArgument(std::string(what) + " is not valid JSON: " + e.what());
  }
}

std::string EdmTypeNamed(std::string_view given) {
  const std::string wanted = internal::AsciiLower(given);
  if (wanted == "bool") return "Edm.Boolean";
  for (size_t t = 0; t < std::variant_size_v<PropertyValue>; ++t) {
    const std::string_view type = EdmTypeName(static_cast<EdmType>(t));
    if (wanted == internal::AsciiLower(type) || wanted == internal::AsciiLower(type.substr(4)))
      return std::string(type);
  }
  return "";
}

Status AddTypedProperty(nlohmann::json& j, const std::string& name, const std::string& type,
                        const std::string& value) {
  const bool not_finite = value == "NaN" || value == "Infinity" || value == "-Infinity";
  if (type == "Edm.Int32" || (type == "Edm.Double" && !not_finite) || type == "Edm.Boolean") {
    // The JSON number or literal: EntityFromJson checks range and form.
    json parsed = json::parse(value, nullptr, /*allow_exceptions=*/false);
    if (!(parsed.is_number() || parsed.is_boolean()))
      return Status::InvalidArgument("property '" + name + "': '" + value + "' is not an " + type +
                                     " value");
    j[name] = std::move(parsed);
  } else {
    j[name] = value;
  }
  j[name + "@odata.type"] = type;
  return Status::OK();
}

Status AddPropertyArg(nlohmann::json& j, const std::string& arg, std::string_view command) {
  const std::string who(command);
  const size_t eq = arg.find('=');
  if (eq == std::string::npos || eq == 0)
    return Status::InvalidArgument(who + ": '" + arg + "' is not NAME=VALUE or NAME:TYPE=VALUE");
  std::string name = arg.substr(0, eq), type = "Edm.String";
  const std::string value = arg.substr(eq + 1);
  if (const size_t colon = name.find(':'); colon != std::string::npos) {
    type = EdmTypeNamed(std::string_view(name).substr(colon + 1));
    if (type.empty())
      return Status::InvalidArgument(who + ": unknown type '" + name.substr(colon + 1) + "' in '" +
                                     arg +
                                     "' (Edm.Int32, Edm.Int64, Edm.Double, Edm.Boolean, "
                                     "Edm.DateTime, Edm.Guid, Edm.Binary, Edm.String)");
    name.resize(colon);
  }
  if (name == "PartitionKey" || name == "RowKey" || name == "Timestamp" || name == "ETag" ||
      name.starts_with("odata."))
    return Status::InvalidArgument(who + ": property name '" + name +
                                   "' is reserved (the keys come first, as PK RK; the store sets "
                                   "Timestamp and the ETag on every write: docs/data-model.md)");
  if (j.contains(name)) return Status::InvalidArgument(who + ": property " + name + " given twice");
  Status s = AddTypedProperty(j, name, type, value);
  if (!s.ok()) return Status::InvalidArgument(who + ": " + s.message());
  return s;
}

}  // namespace blobtable::cli
