// SPDX-License-Identifier: Apache-2.0
// Azure Storage Shared Key authorization (Blob service, version 2009-09-19
// and later): the string to sign and the signature.
#ifndef BLOBTABLE_STORAGE_AZURE_SHARED_KEY_H_
#define BLOBTABLE_STORAGE_AZURE_SHARED_KEY_H_

#include <string>
#include <string_view>

#include "storage/azure/http_transport.h"

namespace blobtable::internal {

// VERB, the eleven standard headers (Content-Length empty when 0), the
// canonicalized x-ms-* headers, then "/account/path" and the sorted,
// lowercased, decoded query parameters.
std::string SharedKeyStringToSign(const HttpRequest& request, std::string_view account);

// Base64(HMAC-SHA256(key, string_to_sign)); `key` is the decoded account key.
std::string SharedKeySignature(std::string_view key, std::string_view string_to_sign);

// Adds "Authorization: SharedKey account:signature". Call last: the request's
// headers and URL must be final.
void SignWithSharedKey(HttpRequest& request, std::string_view account, std::string_view key);

// Orders canonicalized x-ms-* header names as the service does.
std::string HeaderSortKey(std::string_view lower_name);

// Percent-decoding; '+' is kept as is (Azure query values are RFC 3986).
std::string PercentDecode(std::string_view s);
// Percent-encodes all but unreserved characters (and '/' if keep_slash).
std::string PercentEncode(std::string_view s, bool keep_slash);

}  // namespace blobtable::internal

#endif  // BLOBTABLE_STORAGE_AZURE_SHARED_KEY_H_
