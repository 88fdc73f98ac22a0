// SPDX-License-Identifier: Apache-2.0
#include "storage/conditions.h"

#include <chrono>

#include "util/utf8.h"
#include "storage/storage_errors.h"

namespace blobtable::internal {

bool HasConditions(const AccessConditions& c) {
  return c.if_match || c.if_none_match || c.if_modified_since || c.if_unmodified_since;
}
namespace {

// HTTP dates carry whole seconds: compare at that resolution.
std::chrono::sys_seconds Seconds(TimePoint t) {
  return std::chrono::floor<std::chrono::seconds>(t);
}

bool ETagMatches(std::string_view condition, std::string_view etag) {
  return condition == kAnyETag || condition == etag;
}

Status NotMet(std::string_view which) {
  return StorageError(412, "ConditionNotMet",
                      "the condition specified using HTTP conditional header(s) is not met (" +
                          std::string(which) + ")");
}

}  // namespace

Status CheckReadConditions(const AccessConditions& c, const BlobVersion& blob, bool* not_modified) {
  *not_modified = false;
  // "*" cannot select a representation to compare: Azure refuses it on reads.
  if (c.if_none_match && *c.if_none_match == kAnyETag)
    return StorageError(400, "UnsatisfiableCondition",
                        "If-None-Match \"*\" is not supported on reads");
  if (c.if_match && !ETagMatches(*c.if_match, blob.etag)) return NotMet("If-Match");
  if (c.if_unmodified_since && Seconds(blob.last_modified) > Seconds(*c.if_unmodified_since))
    return NotMet("If-Unmodified-Since");
  // The read proceeds if any of If-None-Match / If-Modified-Since that is
  // present passes; 304 only when every present one fails.
  bool none_match_fails = c.if_none_match && ETagMatches(*c.if_none_match, blob.etag);
  bool modified_fails =
      c.if_modified_since && Seconds(blob.last_modified) <= Seconds(*c.if_modified_since);
  if (c.if_none_match && c.if_modified_since)
    *not_modified = none_match_fails && modified_fails;
  else
    *not_modified = none_match_fails || modified_fails;
  return Status::OK();
}

Status CheckWriteConditions(const AccessConditions& c, const BlobVersion* blob, bool is_put) {
  if (blob == nullptr) {
    // Conditions that need an existing blob fail; If-None-Match passes.
    if (c.if_match) return NotMet("If-Match");
    if (c.if_unmodified_since) return NotMet("If-Unmodified-Since");
    if (c.if_modified_since) return NotMet("If-Modified-Since");
    return Status::OK();
  }
  if (c.if_match && !ETagMatches(*c.if_match, blob->etag)) return NotMet("If-Match");
  if (c.if_unmodified_since && Seconds(blob->last_modified) > Seconds(*c.if_unmodified_since))
    return NotMet("If-Unmodified-Since");
  if (c.if_none_match && ETagMatches(*c.if_none_match, blob->etag)) {
    if (is_put && *c.if_none_match == kAnyETag)
      return StorageError(409, "BlobAlreadyExists", "the specified blob already exists");
    return NotMet("If-None-Match");
  }
  if (c.if_modified_since && Seconds(blob->last_modified) <= Seconds(*c.if_modified_since))
    return NotMet("If-Modified-Since");
  return Status::OK();
}

Status ValidateBlobName(std::string_view name) {
  auto bad = [&](const std::string& why) {
    return StorageError(400, "InvalidResourceName", "blob name " + why);
  };
  long chars = Utf8Length(name);
  if (chars < 0) return bad("is not valid UTF-8");
  if (chars == 0) return bad("is empty");
  if (static_cast<size_t>(chars) > kMaxBlobNameChars)
    return bad("has " + std::to_string(chars) + " characters, limit 1024");
  for (size_t i = 0; i < name.size(); ++i) {
    const auto b = static_cast<unsigned char>(name[i]);
    const auto next = i + 1 < name.size() ? static_cast<unsigned char>(name[i + 1]) : 0;
    const auto third = i + 2 < name.size() ? static_cast<unsigned char>(name[i + 2]) : 0;
    if (b < 0x20 || b == 0x7f || (b == 0xc2 && next >= 0x80 && next <= 0x9f))
      return bad("contains a control character (at byte " + std::to_string(i) + ")");
    if (b == 0xef && next == 0xbf && (third == 0xbe || third == 0xbf))
      return bad("contains U+FFFE or U+FFFF (at byte " + std::to_string(i) + ")");
  }
  size_t start = 0;
  for (;;) {
    size_t slash = name.find('/', start);
    std::string_view segment = name.substr(
        start, slash == std::string_view::npos ? std::string_view::npos : slash - start);
    if (segment.empty()) return bad("has an empty segment (a leading, trailing or double '/')");
    if (segment == "." || segment == "..")
      return bad("has a '" + std::string(segment) + "' segment");
    if (slash == std::string_view::npos) break;
    start = slash + 1;
  }
  if (name.back() == '.') return bad("ends with '.' (a service may drop it)");
  return Status::OK();
}

Status ValidateMetadata(const Metadata& metadata) {
  size_t total = 0;
  for (const auto& [name, value] : metadata) {
    bool ok = !name.empty() && !(name[0] >= '0' && name[0] <= '9');
    for (char c : name)
      ok = ok &&
           ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_');
    if (!ok)
      return StorageError(400, "InvalidMetadata",
                          "metadata name '" + name + "' is not a C# identifier");
    for (char c : value)
      if (c < 0x20 || c > 0x7e)
        return StorageError(400, "InvalidMetadata",
                            "metadata value of '" + name + "' is not printable ASCII");
    if (!value.empty() && (value.front() == ' ' || value.back() == ' '))
      return StorageError(400, "InvalidMetadata",
                          "metadata value of '" + name + "' starts or ends with a space");
    total += name.size() + value.size();
  }
  if (total > kMaxMetadataBytes)
    return StorageError(400, "MetadataTooLarge", "metadata exceeds 8 KiB");
  return Status::OK();
}

Status ValidateContainerName(std::string_view name) {
  bool ok = name.size() >= 3 && name.size() <= 63;
  for (size_t i = 0; ok && i < name.size(); ++i) {
    char c = name[i];
    bool alnum = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
    if (c == '-')
      ok = i > 0 && i + 1 < name.size() && name[i - 1] != '-';
    else
      ok = alnum;
  }
  if (ok) return Status::OK();
  return Status::FromStorage(Code::kInvalidArgument, 400, "InvalidResourceName",
                             "container name '" + std::string(name) +
                                 "' must be 3-63 lowercase letters, digits and single hyphens, "
                                 "starting and ending with a letter or digit");
}

}  // namespace blobtable::internal
