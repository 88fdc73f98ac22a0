// SPDX-License-Identifier: Apache-2.0
#include "model/inline_body.h"

#include "util/base64.h"
#include "util/digest.h"
#include "util/stored_format.h"

namespace blobtable::internal {

bool AddInlineBody(Metadata& metadata, std::string_view body, size_t max_body) {
  metadata.erase(kInlineBodyMetadata);
  if (body.size() > max_body) return false;
  size_t total = 0;
  for (const auto& [name, value] : metadata) total += name.size() + value.size();
  std::string copy = Base64Encode(body);
  if (total + sizeof(kInlineBodyMetadata) - 1 + copy.size() > kMaxMetadataBytes - kMetadataReserve)
    return false;
  metadata[kInlineBodyMetadata] = std::move(copy);
  return true;
}

std::optional<std::string> InlineBody(const BlobProperties& p) {
  auto it = p.metadata.find(kInlineBodyMetadata);
  if (it == p.metadata.end() || p.content_md5.empty()) return std::nullopt;
  auto body = Base64Decode(it->second);
  if (!body.ok() || Md5Base64(*body) != p.content_md5) return std::nullopt;
  return std::move(*body);
}

}  // namespace blobtable::internal
