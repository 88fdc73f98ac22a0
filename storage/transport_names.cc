// SPDX-License-Identifier: Apache-2.0
// The HTTP transports this build has (blobtable/storage_options.h): known
// without loading the Azure backend (storage/azure_backend.h).
#include "blobtable/storage_options.h"

namespace blobtable {

const std::vector<std::string>& HttpTransportNames() {
#ifdef BLOBTABLE_WITH_CPPREST
  static const std::vector<std::string> names{"curl", "cpprest"};
#else
  static const std::vector<std::string> names{"curl"};
#endif
  return names;
}

}  // namespace blobtable
