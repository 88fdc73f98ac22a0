// Digests blobtable compares with what storage reports.
#ifndef BLOBTABLE_UTIL_DIGEST_H_
#define BLOBTABLE_UTIL_DIGEST_H_

#include <string>
#include <string_view>

namespace blobtable {

// The MD5 of `bytes` in base64, as Azure reports a blob's Content-MD5
// ("1B2M2Y8AsgTpgAmY7PhCfg==" for no bytes).
std::string Md5Base64(std::string_view bytes);

}  // namespace blobtable

#endif  // BLOBTABLE_UTIL_DIGEST_H_
