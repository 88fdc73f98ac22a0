// SPDX-License-Identifier: Apache-2.0
// Linked into every test program: before any test runs, XDG_CACHE_HOME
// points into a fresh temporary directory (removed at exit), so that a store
// opened with the default cache directory, in the program or in a CLI it
// starts, never writes to the user's own ~/.cache.
#include <stdlib.h>

#include <filesystem>
#include <string>

namespace {

struct IsolatedCacheHome {
  IsolatedCacheHome() {
    std::string tmpl =
        (std::filesystem::temp_directory_path() / "blobtable-test-cache-XXXXXX").string();
    if (mkdtemp(tmpl.data()) == nullptr) return;
    dir = tmpl;
    setenv("XDG_CACHE_HOME", dir.c_str(), 1);
  }
  ~IsolatedCacheHome() {
    std::error_code ec;
    if (!dir.empty()) std::filesystem::remove_all(dir, ec);
  }
  std::string dir;
};

const IsolatedCacheHome isolated;

}  // namespace
