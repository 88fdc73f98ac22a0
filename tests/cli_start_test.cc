// SPDX-License-Identifier: Apache-2.0
// What a CLI call loads: on the embedded store, libblobtable without the
// HTTP stack (the Azure backend is a module loaded on first use,
// storage/azure_backend.h); a missing module is named.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "tests/shell.h"
#include "tests/test_util.h"

namespace blobtable::testing {
namespace {

const std::string kCli = BLOBTABLE_CLI_PATH;

// The lock command's child reads its parent's (the CLI's) memory map.
TEST(CliStartTest, AnEmbeddedStoreCallLoadsNoHttpStack) {
  TempDir dir;
  ShellRun maps = Shell(kCli + " --store " + Quote(dir.path() + "/db") +
                        " lock start -- sh -c 'cat /proc/$PPID/maps'");
  ASSERT_EQ(maps.code, 0) << maps.err;
  ASSERT_NE(maps.out.find("libblobtable.so"), std::string::npos) << "not the shared build?";
  for (const char* absent :
       {"libcurl", "libcpprest", "libssl.so", "libpugixml", "libblobtable_azure"})
    EXPECT_EQ(maps.out.find(absent), std::string::npos) << absent << " is loaded";
}

TEST(CliStartTest, AnAzureStoreWithoutItsModuleSaysWhichFileIsMissing) {
  TempDir dir;
  const std::filesystem::path built = std::filesystem::path(kCli).parent_path();
  std::filesystem::copy_file(built / "libblobtable.so.0", dir.path() + "/libblobtable.so.0");
  // Port 9 of the loopback: nothing is sent, the module is missing first.
  ShellRun run = Shell("LD_LIBRARY_PATH=" + Quote(dir.path()) + " " + kCli +
                       " --no-cache --store 'UseDevelopmentStorage=true;"
                       "BlobEndpoint=http://127.0.0.1:9/devstoreaccount1' get orders p r");
  EXPECT_EQ(run.code, 1);
  EXPECT_NE(run.err.find("the Azure backend (" + dir.path() + "/libblobtable_azure-"),
            std::string::npos)
      << run.err;
  EXPECT_NE(run.err.find("could not be loaded"), std::string::npos) << run.err;
}

}  // namespace
}  // namespace blobtable::testing
