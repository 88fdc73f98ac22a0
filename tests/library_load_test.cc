// SPDX-License-Identifier: Apache-2.0
// The shared library opens with dlopen, as a language binding or a plugin
// opens it. Its thread-local storage uses the initial-exec model on the hot
// read path (util/thread_spare.h), which marks the library as needing
// static TLS: glibc then places all of it in the small room it keeps for
// libraries opened late (512 bytes by default), and refuses to load it
// ("cannot allocate memory in static TLS block") if it does not fit, as it
// did while a 2.5 KB random generator lived there.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <string_view>

namespace {

TEST(LibraryLoad, TheSharedLibraryOpensWithDlopen) {
  if (std::string_view(BLOBTABLE_LIBRARY_TYPE) != "SHARED_LIBRARY")
    GTEST_SKIP() << "built as a static library";
  void* lib = dlopen(BLOBTABLE_LIBRARY_PATH, RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(lib, nullptr) << dlerror();
  EXPECT_EQ(dlclose(lib), 0) << dlerror();
}

}  // namespace
