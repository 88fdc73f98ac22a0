// SPDX-License-Identifier: Apache-2.0
#include <iostream>

#include "tools/cli.h"

int main(int argc, char** argv) {
  std::ios::sync_with_stdio(false);
  return blobtable::cli::Run(argc, argv, std::cin, std::cout, std::cerr);
}
