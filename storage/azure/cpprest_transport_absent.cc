// SPDX-License-Identifier: Apache-2.0
// A build without cpprestsdk (BLOBTABLE_WITH_CPPREST off): curl is the one
// transport, and asking for cpprest is refused when the store is opened
// (storage/azure/open_azure.cc).
#include "storage/azure/http_transport.h"

namespace blobtable::internal {

std::unique_ptr<HttpTransport> MakeCpprestTransport(const TransportOptions&) { return nullptr; }

}  // namespace blobtable::internal
