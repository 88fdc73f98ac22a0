// SPDX-License-Identifier: Apache-2.0
// Azure Storage connection strings and the configuration they give.
//
// Accepted keys (case-insensitive): UseDevelopmentStorage, DefaultEndpointsProtocol,
// AccountName, AccountKey, BlobEndpoint, EndpointSuffix, SharedAccessSignature;
// QueueEndpoint, TableEndpoint, FileEndpoint and DevelopmentStorageProxyUri are
// ignored; blobtable's own: HttpTransport (curl|cpprest), CaFile. Anything
// else is InvalidArgument naming the key (a typo must not go unnoticed).
// Error messages never contain the AccountKey or the SharedAccessSignature.
#ifndef BLOBTABLE_STORAGE_AZURE_AZURE_CONFIG_H_
#define BLOBTABLE_STORAGE_AZURE_AZURE_CONFIG_H_

#include <string>
#include <string_view>

#include "blobtable/status.h"

namespace blobtable::internal {

// Azurite's well-known development account (public, from Azure's docs).
inline constexpr char kDevAccountName[] = "devstoreaccount1";
inline constexpr char kDevAccountKey[] =
    "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==";

struct AzureConfig {
  // Base URL of the blob service, no trailing slash: "https://acct.blob.core.windows.net",
  // or path-style "http://127.0.0.1:10000/devstoreaccount1" for Azurite.
  std::string blob_endpoint;
  std::string account_name;
  std::string account_key;  // decoded bytes; empty when a SAS is used
  std::string sas;          // the SAS query string without '?'
  std::string transport = "curl";
  std::string ca_file;
};

Result<AzureConfig> ParseConnectionString(std::string_view connection_string);

// True if some ';'-separated part of `text` is "Key=..." with a key the
// parser knows, by the parser's own rules (any case, spaces around).
bool NamesAConnectionStringKey(std::string_view text);

}  // namespace blobtable::internal

#endif  // BLOBTABLE_STORAGE_AZURE_AZURE_CONFIG_H_
