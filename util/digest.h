// SPDX-License-Identifier: Apache-2.0
// Digests blobtable compares with what storage reports.
#ifndef BLOBTABLE_UTIL_DIGEST_H_
#define BLOBTABLE_UTIL_DIGEST_H_

#include <cstdint>
#include <string>
#include <string_view>

namespace blobtable::internal {

// The MD5 of `bytes` in base64, as Azure reports a blob's Content-MD5
// ("1B2M2Y8AsgTpgAmY7PhCfg==" for no bytes).
std::string Md5Base64(std::string_view bytes);

// The CRC-32 of `bytes` (IEEE 802.3, reflected: the CRC of gzip and zlib's
// crc32()). ISA-L's carry-less-multiply implementation, about 8x zlib's on
// a kilobyte; the values are zlib's, so stored checksums keep matching.
uint32_t Crc32(std::string_view bytes);
// The CRC-32 of the bytes whose CRC-32 is `crc` followed by `more`.
uint32_t Crc32(uint32_t crc, std::string_view more);

// The SHA-256 of `bytes`: 32 raw bytes.
std::string Sha256(std::string_view bytes);

}  // namespace blobtable::internal

#endif  // BLOBTABLE_UTIL_DIGEST_H_
