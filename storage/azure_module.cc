// SPDX-License-Identifier: Apache-2.0
// The Azure backend loaded on first use (a shared libblobtable): the module
// BLOBTABLE_AZURE_MODULE beside this library (storage/azure_backend.h).
#include <dlfcn.h>

#include <mutex>
#include <string>

#include "storage/azure_backend.h"

namespace blobtable::internal {
namespace {

using OpenFn = decltype(&blobtable_open_azure_v1);

struct Module {
  OpenFn open = nullptr;
  std::string error;  // why it could not be loaded
};

// The directory this library was loaded from, with its '/'; empty if
// unknown (then the dynamic linker's search path is used).
std::string OurDirectory() {
  Dl_info info;
  if (dladdr(reinterpret_cast<void*>(&OpenAzureBackend), &info) == 0 || info.dli_fname == nullptr)
    return "";
  const std::string self = info.dli_fname;
  const size_t slash = self.rfind('/');
  return slash == std::string::npos ? "" : self.substr(0, slash + 1);
}

Module Load() {
  Module m;
  const std::string path = OurDirectory() + BLOBTABLE_AZURE_MODULE;
  // Never unloaded: the stores it makes live on.
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* why = dlerror();
    m.error = "the Azure backend (" + path +
              ") could not be loaded: " + (why != nullptr ? why : "no reason given") +
              "; it is installed beside libblobtable";
    return m;
  }
  m.open = reinterpret_cast<OpenFn>(dlsym(handle, "blobtable_open_azure_v1"));
  if (m.open == nullptr) m.error = path + " has no entry point blobtable_open_azure_v1";
  return m;
}

}  // namespace

Result<std::shared_ptr<BlobStore>> OpenAzureBackend(std::string_view connection_string,
                                                    const BackendOptions& options) {
  static const Module module = Load();
  if (module.open == nullptr) return Status::IOError(module.error);
  Result<std::shared_ptr<BlobStore>> store = Status::Internal("not opened");
  module.open(connection_string, &options, &store);
  return store;
}

}  // namespace blobtable::internal
