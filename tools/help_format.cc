// SPDX-License-Identifier: Apache-2.0
#include "tools/help_format.h"

#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <sstream>

namespace blobtable::cli {
namespace {

// One line of text broken at spaces into lines of at most `width`.
void WrapLine(const std::string& line, size_t width, std::string& out) {
  std::istringstream words(line);
  std::string word, current;
  const size_t indent = line.find_first_not_of(' ');
  const std::string lead(indent == std::string::npos ? 0 : indent, ' ');
  current = lead;
  while (words >> word) {
    if (current.size() > lead.size() && current.size() + 1 + word.size() > width) {
      out += current + "\n";
      current = lead;
    }
    current += (current.size() > lead.size() ? " " : "") + word;
  }
  out += current;
}

}  // namespace

std::string Wrap(const std::string& text, size_t width) {
  std::string out;
  size_t start = 0;
  while (start <= text.size()) {
    const size_t end = std::min(text.find('\n', start), text.size());
    const std::string line = text.substr(start, end - start);
    if (line.size() <= width)
      out += line;
    else
      WrapLine(line, width, out);
    if (end == text.size()) break;
    out += "\n";
    start = end + 1;
  }
  return out;
}

size_t HelpWidth() {
  size_t width = 80;
  if (const char* columns = std::getenv("COLUMNS"); columns != nullptr && std::atoi(columns) > 0) {
    width = static_cast<size_t>(std::atoi(columns));
  } else {
    struct winsize ws = {};
    if (isatty(STDOUT_FILENO) && ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0)
      width = ws.ws_col;
  }
  return std::clamp<size_t>(width, 40, 100);
}

size_t WrappingFormatter::Beside() const {
  return width_ > get_column_width() + 20 ? width_ - get_column_width() : 20;
}

std::string WrappingFormatter::make_option_desc(const CLI::Option* option) const {
  return Wrap(CLI::Formatter::make_option_desc(option), Beside());
}

std::string WrappingFormatter::make_subcommand(const CLI::App* sub) const {
  std::stringstream out;
  CLI::detail::format_help(out, sub->get_display_name(), Wrap(sub->get_description(), Beside()),
                           get_column_width());
  return out.str();
}

std::string WrappingFormatter::make_description(const CLI::App* app) const {
  return Wrap(CLI::Formatter::make_description(app), width_);
}

// Indented lines (an example, a list of options) are kept whole.
std::string WrappingFormatter::make_footer(const CLI::App* app) const {
  std::string footer = CLI::Formatter::make_footer(app), out;
  std::istringstream lines(footer);
  bool first = true;
  for (std::string line; std::getline(lines, line); first = false)
    out += (first ? "" : "\n") + (line.starts_with("  ") ? line : Wrap(line, width_));
  return out + (footer.ends_with('\n') ? "\n" : "");
}

}  // namespace blobtable::cli
