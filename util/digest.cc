#include "util/digest.h"

#include <isa-l/crc.h>
#include <openssl/evp.h>

#include "util/base64.h"

namespace blobtable {

std::string Md5Base64(std::string_view bytes) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int size = 0;
  EVP_Digest(bytes.data(), bytes.size(), digest, &size, EVP_md5(), nullptr);
  return Base64Encode(std::string_view(reinterpret_cast<const char*>(digest), size));
}

uint32_t Crc32(std::string_view bytes) {
  return crc32_gzip_refl(0, reinterpret_cast<const unsigned char*>(bytes.data()), bytes.size());
}

}  // namespace blobtable
