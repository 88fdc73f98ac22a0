// SPDX-License-Identifier: Apache-2.0
// Standard base64 (RFC 4648, padded): Edm.Binary in JSON, Azure account keys
// and signatures.
#ifndef BLOBTABLE_UTIL_BASE64_H_
#define BLOBTABLE_UTIL_BASE64_H_

#include <string>
#include <string_view>

#include "blobtable/status.h"

namespace blobtable::internal {

std::string Base64Encode(std::string_view bytes);
// The same, appended to `out`.
void Base64EncodeTo(std::string_view bytes, std::string& out);
// InvalidArgument unless `text` is canonical padded base64.
Result<std::string> Base64Decode(std::string_view text);

}  // namespace blobtable::internal

#endif  // BLOBTABLE_UTIL_BASE64_H_
