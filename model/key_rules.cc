// SPDX-License-Identifier: Apache-2.0
// Validation of keys, property names and values (Azure Table rules).
#include <array>
#include <cctype>

#include "blobtable/entity.h"
#include "blobtable/entity_view.h"
#include "model/entity_codec.h"
#include "util/macros.h"
#include "model/key_rules.h"
#include "util/utf8.h"

namespace blobtable {
namespace {

std::string QuoteForMessage(std::string_view s) { return internal::QuotedForMessage(s); }

// 1601-01-01T00:00:00Z and 9999-12-31T23:59:59.9999999Z as Unix-epoch ticks.
constexpr int64_t kMinDateTicks = -116444736000000000LL;
constexpr int64_t kMaxDateTicks = 2534023007999999999LL;

Status ValidatePropertyName(std::string_view name) {
  long chars = internal::Utf8Length(name);
  if (chars <= 0 || static_cast<size_t>(chars) > kMaxPropertyNameChars)
    return Status::InvalidArgument("property name " + QuoteForMessage(name) +
                                   " must be 1 to 255 characters of valid UTF-8");
  // C# identifier rules: a letter or '_' first, then letters, digits or '_'.
  // Non-ASCII code points count as letters (no Unicode tables here).
  size_t pos = 0;
  uint32_t cp;
  bool first = true;
  while (pos < name.size()) {
    internal::NextCodePoint(name, &pos, &cp);
    bool letter = cp >= 0x80 || std::isalpha(static_cast<int>(cp)) || cp == '_';
    bool digit = cp < 0x80 && std::isdigit(static_cast<int>(cp));
    if (!(letter || (!first && digit)))
      return Status::InvalidArgument(
          "property name " + QuoteForMessage(name) +
          " must start with a letter or '_' and hold only letters, digits and '_'");
    first = false;
  }
  if (name == "PartitionKey" || name == "RowKey" || name == "Timestamp" || name == "ETag")
    return Status::InvalidArgument("property name " + QuoteForMessage(name) + " is reserved");
  return Status::OK();
}

Status ValidateValue(std::string_view name, const PropertyValue& value) {
  auto bad = [&](const std::string& why) {
    return Status::InvalidArgument("property " + QuoteForMessage(name) + " (" +
                                   std::string(EdmTypeName(TypeOf(value))) + "): " + why);
  };
  if (const auto* s = std::get_if<std::string>(&value)) {
    long units = internal::Utf16Length(*s);
    if (units < 0) return bad("not valid UTF-8");
    if (static_cast<size_t>(units) > kMaxStringUtf16Units)
      return bad("string of " + std::to_string(units) +
                 " UTF-16 code units exceeds the limit of 32768 (64 KiB)");
  } else if (const auto* b = std::get_if<Binary>(&value)) {
    if (b->bytes.size() > kMaxBinaryBytes)
      return bad("binary of " + std::to_string(b->bytes.size()) +
                 " bytes exceeds the limit of 65536 (64 KiB)");
  } else if (const auto* d = std::get_if<DateTime>(&value)) {
    if (!IsValidDateTime(*d))
      return bad("outside 1601-01-01T00:00:00Z .. 9999-12-31T23:59:59.9999999Z");
  } else if (const auto* g = std::get_if<Guid>(&value)) {
    if (!internal::IsGuid(g->value))
      return bad("not a GUID of the form xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx");
  }
  return Status::OK();
}

}  // namespace

bool IsValidDateTime(DateTime t) {
  int64_t ticks = t.time_since_epoch().count();
  return ticks >= kMinDateTicks && ticks <= kMaxDateTicks;
}

Status ValidateKey(std::string_view key, std::string_view which) {
  if (key.size() > kMaxKeyBytes)
    return Status::InvalidArgument(std::string(which) + " " + QuoteForMessage(key) + " is " +
                                   std::to_string(key.size()) +
                                   " bytes long; the limit is 1024 bytes of UTF-8");
  auto forbidden = [&](uint32_t cp, size_t at) {
    char buf[16];
    snprintf(buf, sizeof(buf), "U+%04X", cp);
    return Status::InvalidArgument(std::string(which) + " " + QuoteForMessage(key) +
                                   " contains a forbidden character (" + buf + " at byte " +
                                   std::to_string(at) +
                                   "); keys may not contain / \\ # ? or control characters");
  };
  // What each ASCII byte is: allowed, forbidden, or (0x80 and up) the
  // start of a longer character. Keys are checked on every read.
  enum : uint8_t { kAllowed, kForbidden, kMultiByte };
  static constexpr auto kByteKind = [] {
    std::array<uint8_t, 256> t{};
    for (int b = 0; b < 256; ++b) {
      const auto u = static_cast<unsigned char>(b);
      t[b] = internal::IsPlainKeyByte(u)       ? kAllowed
             : internal::IsForbiddenKeyByte(u) ? kForbidden
                                               : kMultiByte;
    }
    return t;
  }();
  size_t pos = 0;
  uint32_t cp;
  while (pos < key.size()) {
    const size_t at = pos;
    const auto b = static_cast<unsigned char>(key[pos]);
    const uint8_t kind = kByteKind[b];
    if (kind == kAllowed) {  // ASCII, most keys: a byte is a character
      ++pos;
      continue;
    }
    if (kind == kForbidden) return forbidden(b, at);
    if (!internal::NextCodePoint(key, &pos, &cp))
      return Status::InvalidArgument(std::string(which) + " " + QuoteForMessage(key) +
                                     " is not valid UTF-8 (at byte " + std::to_string(at) + ")");
    if (cp >= 0x7F && cp <= 0x9F) return forbidden(cp, at);
  }
  return Status::OK();
}

Result<std::string> internal::OwnETag(const Entity& entity, std::string_view call) {
  if (entity.etag().empty())
    return Status::InvalidArgument(std::string(call) +
                                   " needs the entity's ETag (from a read or write); give one, "
                                   "or \"*\", as its if_match argument");
  return entity.etag();
}

Status ValidateEntity(const Entity& entity) {
  Status s = ValidateKey(entity.partition_key(), "PartitionKey");
  if (s.ok()) s = ValidateKey(entity.row_key(), "RowKey");
  if (!s.ok()) return s;
  if (!entity.set_error().empty()) return Status::InvalidArgument(entity.set_error());
  if (entity.properties().size() > kMaxProperties)
    return Status::InvalidArgument("entity has " + std::to_string(entity.properties().size()) +
                                   " properties; the limit is 252");
  for (const auto& [name, value] : entity.properties()) {
    if (!(s = ValidatePropertyName(name)).ok()) return s;
    if (!(s = ValidateValue(name, value)).ok()) return s;
  }
  return Status::OK();
}

namespace internal {

std::string QuotedForMessage(std::string_view s) {
  bool cut = false;
  const std::string shown = EscapedForMessage(s, 64, &cut);
  return "'" + shown + (cut ? "..." : "") + "'";
}

}  // namespace internal
}  // namespace blobtable

namespace blobtable::internal {

Status ValidatePropertyNameRules(std::string_view name) {
  return blobtable::ValidatePropertyName(name);
}

namespace {

Status Bad(std::string_view what, std::string_view name) {
  return Status::InvalidArgument(std::string(what) + " " + QuoteForMessage(name));
}

Status ValidateStoredKeys(std::string_view partition_key, std::string_view row_key) {
  if (!IsValidUtf8(partition_key)) return Bad("PartitionKey not UTF-8:", partition_key);
  if (!IsValidUtf8(row_key)) return Bad("RowKey not UTF-8:", row_key);
  return Status::OK();
}

Status ValidateStoredProperty(const PropertyView& p) {
  if (!IsValidUtf8(p.name())) return Bad("property name not UTF-8:", p.name());
  switch (p.type()) {
    case EdmType::kString:
      if (!IsValidUtf8(p.text())) return Bad("String value not UTF-8: property", p.name());
      break;
    case EdmType::kDateTime:
      if (!IsValidDateTime(p.date_time()))
        return Bad("DateTime value out of range: property", p.name());
      break;
    case EdmType::kGuid:
      if (!IsGuid(p.text())) return Bad("Guid value not a GUID: property", p.name());
      break;
    default: break;
  }
  return Status::OK();
}

}  // namespace

Status ValidateStoredEntity(const Entity& entity) {
  BT_RETURN_IF_ERROR(ValidateStoredKeys(entity.partition_key(), entity.row_key()));
  for (const auto& [name, value] : entity.properties())
    BT_RETURN_IF_ERROR(ValidateStoredProperty(PropertyView(name, value)));
  return Status::OK();
}

Status ValidateStoredView(const EntityView& entity) {
  BT_RETURN_IF_ERROR(ValidateStoredKeys(entity.partition_key(), entity.row_key()));
  for (const PropertyView& p : entity.properties()) BT_RETURN_IF_ERROR(ValidateStoredProperty(p));
  return Status::OK();
}

bool IsGuid(std::string_view g) {
  if (g.size() != 36) return false;
  for (size_t i = 0; i < g.size(); ++i) {
    bool dash = i == 8 || i == 13 || i == 18 || i == 23;
    if (dash ? g[i] != '-' : !isxdigit(static_cast<unsigned char>(g[i]))) return false;
  }
  return true;
}

}  // namespace blobtable::internal
