// SPDX-License-Identifier: Apache-2.0
// The CLI's --help, wrapped to the terminal: option and command descriptions
// broken at spaces to fit beside their names, the descriptions and footers
// to the width (examples and other indented lines kept whole, to be copied).
#ifndef BLOBTABLE_TOOLS_HELP_FORMAT_H_
#define BLOBTABLE_TOOLS_HELP_FORMAT_H_

#include <cstddef>
#include <memory>
#include <string>

#include <CLI/CLI.hpp>

namespace blobtable::cli {

// `text` with each line longer than `width` broken at spaces (a word
// longer than the width stays whole on a line of its own).
std::string Wrap(const std::string& text, size_t width);

// The width help is wrapped to: $COLUMNS if set, else the terminal's on
// stdout, else 80; never under 40 nor over 100 (long lines read badly).
size_t HelpWidth();

class WrappingFormatter final : public CLI::Formatter {
 public:
  explicit WrappingFormatter(size_t width) : width_(width) {}
  std::string make_option_desc(const CLI::Option* option) const override;
  std::string make_subcommand(const CLI::App* sub) const override;
  std::string make_description(const CLI::App* app) const override;
  std::string make_footer(const CLI::App* app) const override;

 private:
  size_t Beside() const;  // the width left beside a name column
  size_t width_;
};

}  // namespace blobtable::cli

#endif  // BLOBTABLE_TOOLS_HELP_FORMAT_H_
