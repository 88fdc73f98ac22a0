// SPDX-License-Identifier: Apache-2.0
// A build without cpprestsdk (BLOBTABLE_WITH_CPPREST off): curl is the one
// transport, and asking for cpprest is refused when the store is opened
// (storage/open_blob_store.cc).
#include "blobtable/storage_options.h"
#include "storage/azure/http_transport.h"

namespace blobtable {
namespace internal {

std::unique_ptr<HttpTransport> MakeCpprestTransport(const TransportOptions&) { return nullptr; }

}  // namespace internal

const std::vector<std::string>& HttpTransportNames() {
  static const std::vector<std::string> names{"curl"};
  return names;
}

}  // namespace blobtable
