#include "remote/conditions.h"

#include <chrono>

#include "remote/storage_errors.h"

namespace blobtable {
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

Status CheckReadConditions(const AccessConditions& c, const BlobVersion& blob,
                           bool* not_modified) {
  *not_modified = false;
  if (c.if_match && !ETagMatches(*c.if_match, blob.etag)) return NotMet("If-Match");
  if (c.if_unmodified_since && Seconds(blob.last_modified) > Seconds(*c.if_unmodified_since))
    return NotMet("If-Unmodified-Since");
  // The read proceeds if any of If-None-Match / If-Modified-Since that is
  // present passes; 304 only when every present one fails.
  bool none_match_fails = c.if_none_match && ETagMatches(*c.if_none_match, blob.etag);
  bool modified_fails =
      c.if_modified_since && Seconds(blob.last_modified) <= Seconds(*c.if_modified_since);
  if (c.if_none_match && c.if_modified_since) *not_modified = none_match_fails && modified_fails;
  else *not_modified = none_match_fails || modified_fails;
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

long Utf8Length(std::string_view s) {
  long count = 0;
  size_t i = 0;
  while (i < s.size()) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    int len;
    uint32_t cp;
    if (c < 0x80) { len = 1; cp = c; }
    else if ((c & 0xE0) == 0xC0) { len = 2; cp = c & 0x1F; }
    else if ((c & 0xF0) == 0xE0) { len = 3; cp = c & 0x0F; }
    else if ((c & 0xF8) == 0xF0) { len = 4; cp = c & 0x07; }
    else return -1;
    if (i + len > s.size()) return -1;
    for (int k = 1; k < len; ++k) {
      unsigned char cc = static_cast<unsigned char>(s[i + k]);
      if ((cc & 0xC0) != 0x80) return -1;
      cp = (cp << 6) | (cc & 0x3F);
    }
    static constexpr uint32_t kMin[] = {0, 0, 0x80, 0x800, 0x10000};
    if (cp < kMin[len] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return -1;
    i += len;
    ++count;
  }
  return count;
}

Status ValidateBlobName(std::string_view name) {
  long chars = Utf8Length(name);
  if (chars < 0) return StorageError(400, "InvalidResourceName", "blob name is not valid UTF-8");
  if (chars == 0) return StorageError(400, "InvalidResourceName", "blob name is empty");
  if (static_cast<size_t>(chars) > kMaxBlobNameChars)
    return StorageError(400, "InvalidResourceName",
                        "blob name has " + std::to_string(chars) + " characters, limit 1024");
  if (name.find('\0') != std::string_view::npos)
    return StorageError(400, "InvalidResourceName", "blob name contains NUL");
  return Status::OK();
}

Status ValidateContainerName(std::string_view name) {
  bool ok = name.size() >= 3 && name.size() <= 63;
  for (size_t i = 0; ok && i < name.size(); ++i) {
    char c = name[i];
    bool alnum = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
    if (c == '-') ok = i > 0 && i + 1 < name.size() && name[i - 1] != '-';
    else ok = alnum;
  }
  if (ok) return Status::OK();
  return Status::FromStorage(Code::kInvalidArgument, 400, "InvalidResourceName",
                             "container name '" + std::string(name) +
                                 "' must be 3-63 lowercase letters, digits and single hyphens, "
                                 "starting and ending with a letter or digit");
}

}  // namespace blobtable
