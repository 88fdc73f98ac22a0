// SPDX-License-Identifier: Apache-2.0
#include "util/digest.h"

#include <isa-l/crc.h>
#include <openssl/evp.h>

#include "util/base64.h"

namespace blobtable::internal {

std::string Md5Base64(std::string_view bytes) {
  // Fetched once: OpenSSL 3 looks the algorithm up again on every call given
  // EVP_md5(), which cost more than hashing a kilobyte (every local write
  // hashes its data).
  static EVP_MD* const md5 = EVP_MD_fetch(nullptr, "MD5", nullptr);
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int size = 0;
  EVP_Digest(bytes.data(), bytes.size(), digest, &size, md5 != nullptr ? md5 : EVP_md5(), nullptr);
  return Base64Encode(std::string_view(reinterpret_cast<const char*>(digest), size));
}

std::string Sha256(std::string_view bytes) {
  static EVP_MD* const sha256 = EVP_MD_fetch(nullptr, "SHA256", nullptr);  // as Md5Base64
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int size = 0;
  EVP_Digest(bytes.data(), bytes.size(), digest, &size, sha256 != nullptr ? sha256 : EVP_sha256(),
             nullptr);
  return std::string(reinterpret_cast<const char*>(digest), size);
}

uint32_t Crc32(std::string_view bytes) { return Crc32(0, bytes); }

uint32_t Crc32(uint32_t crc, std::string_view more) {
  return crc32_gzip_refl(crc, reinterpret_cast<const unsigned char*>(more.data()), more.size());
}

}  // namespace blobtable::internal
