// SPDX-License-Identifier: Apache-2.0
#include "storage/azure/azure_parsing.h"

#include <pugixml.hpp>

#include <ctime>

#include "storage/azure/http_transport.h"
#include "storage/azure/shared_key.h"
#include "util/stored_format.h"

namespace blobtable::internal {

std::string FormatHttpDate(TimePoint t) {
  std::time_t secs = std::chrono::system_clock::to_time_t(t);
  std::tm tm{};
  gmtime_r(&secs, &tm);
  static const char* kDays[] = {"Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"};
  static const char* kMonths[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                  "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
  char buf[40];
  snprintf(buf, sizeof(buf), "%s, %02d %s %04d %02d:%02d:%02d GMT", kDays[tm.tm_wday], tm.tm_mday,
           kMonths[tm.tm_mon], tm.tm_year + 1900, tm.tm_hour, tm.tm_min, tm.tm_sec);
  return buf;
}

bool ParseHttpDate(const std::string& text, TimePoint* out) {
  std::tm tm{};
  const char* end = strptime(text.c_str(), "%a, %d %b %Y %H:%M:%S GMT", &tm);
  if (end == nullptr || *end != '\0') return false;
  // Only years a TimePoint (nanoseconds since 1970 in 64 bits) holds: the
  // fuzzer found that year 7705 overflowed the conversion.
  if (tm.tm_year < 1678 - 1900 || tm.tm_year > 2261 - 1900) return false;
  *out = std::chrono::system_clock::from_time_t(timegm(&tm));
  return true;
}

std::string Quoted(std::string etag) {
  if (etag.empty() || etag.front() != '"') etag = "\"" + etag + "\"";
  return etag;
}

LeaseState ParseLeaseState(const std::string* s) {
  if (s == nullptr) return LeaseState::kAvailable;
  if (*s == "leased") return LeaseState::kLeased;
  if (*s == "expired") return LeaseState::kExpired;
  if (*s == "breaking") return LeaseState::kBreaking;
  if (*s == "broken") return LeaseState::kBroken;
  return LeaseState::kAvailable;
}

LeaseDurationType ParseLeaseDuration(const std::string* s) {
  if (s == nullptr) return LeaseDurationType::kNone;
  if (*s == "infinite") return LeaseDurationType::kInfinite;
  if (*s == "fixed") return LeaseDurationType::kFixed;
  return LeaseDurationType::kNone;
}

namespace {

Result<BlobItem> ParseBlob(const pugi::xml_node& blob) {
  BlobItem item;
  pugi::xml_node name = blob.child("Name");
  item.name = name.child_value();
  if (std::string_view(name.attribute("Encoded").value()) == "true")
    item.name = PercentDecode(item.name);
  pugi::xml_node props = blob.child("Properties");
  item.properties.etag = Quoted(props.child_value("Etag"));
  ParseHttpDate(props.child_value("Last-Modified"), &item.properties.last_modified);
  const std::string length = props.child_value("Content-Length");
  if (!length.empty()) {
    auto n = ParseDecimal<uint64_t>(length);
    if (!n)
      return Status::Corruption("List Blobs answered Content-Length '" + length.substr(0, 40) +
                                "' for blob '" + item.name + "'");
    item.properties.content_length = *n;
  }
  item.properties.content_md5 = props.child_value("Content-MD5");
  const std::string state = props.child_value("LeaseState"),
                    status = props.child_value("LeaseStatus"),
                    duration = props.child_value("LeaseDuration");
  item.properties.lease_state = ParseLeaseState(&state);
  item.properties.lease_status = status == "locked" ? LeaseStatus::kLocked : LeaseStatus::kUnlocked;
  item.properties.lease_duration = ParseLeaseDuration(&duration);
  for (pugi::xml_node m : blob.child("Metadata").children())
    if (std::string_view(m.name()) != kWriteIdMetadata)
      item.properties.metadata[m.name()] = m.child_value();
  return item;
}

}  // namespace

Result<ListPage> ParseListBlobs(std::string_view xml, const ListOptions& o) {
  pugi::xml_document doc;
  if (!doc.load_buffer(xml.data(), xml.size()))
    return Status::Corruption("List Blobs answered with malformed XML");
  pugi::xml_node results = doc.child("EnumerationResults");
  ListPage page;
  for (pugi::xml_node blob : results.child("Blobs").children("Blob")) {
    auto item = ParseBlob(blob);
    if (!item.ok()) return item.status();
    if (item->name < o.start_from) continue;  // startFrom unknown to an older service
    page.items.push_back(std::move(*item));
  }
  page.next_marker = results.child_value("NextMarker");
  // A service that hands back the marker it was given would keep every
  // listing loop (query, recover) going forever.
  if (!o.marker.empty() && page.next_marker == o.marker)
    return Status::Corruption("List Blobs of '" + o.prefix +
                              "' answered with the marker it was given: the listing would "
                              "never end");
  return page;
}

}  // namespace blobtable::internal
