// SPDX-License-Identifier: Apache-2.0
#include "tools/filter_notes.h"

#include <cctype>
#include <optional>
#include <set>

#include "util/ascii.h"

namespace blobtable::cli {
namespace {

// A token of a filter: a word (a property, an operator, and, or, not), a
// literal with its type, or punctuation.
struct Token {
  std::string text;
  std::optional<EdmType> literal;  // set for a literal
};

// The filter's tokens; nullopt if it cannot tell them apart (an unclosed
// quote): then no note.
std::optional<std::vector<Token>> Tokens(const std::string& f) {
  std::vector<Token> tokens;
  size_t i = 0;
  auto quoted = [&](size_t at) -> std::optional<size_t> {  // the end of '...' at `at`
    for (size_t j = at + 1; j < f.size(); ++j)
      if (f[j] == '\'') {
        if (j + 1 < f.size() && f[j + 1] == '\'') {
          ++j;
          continue;
        }
        return j + 1;
      }
    return std::nullopt;
  };
  while (i < f.size()) {
    const unsigned char c = static_cast<unsigned char>(f[i]);
    if (std::isspace(c)) {
      ++i;
    } else if (c == '\'') {
      auto end = quoted(i);
      if (!end) return std::nullopt;
      tokens.push_back({f.substr(i, *end - i), EdmType::kString});
      i = *end;
    } else if (std::isdigit(c) || c == '-' || c == '+' || c == '.') {
      size_t end = i + 1;
      while (end < f.size() &&
             (std::isalnum(static_cast<unsigned char>(f[end])) || f[end] == '.' ||
              ((f[end] == '-' || f[end] == '+') && (f[end - 1] == 'e' || f[end - 1] == 'E'))))
        ++end;
      const std::string text = f.substr(i, end - i);
      const char last = text.back();
      const EdmType type = last == 'L' || last == 'l'                       ? EdmType::kInt64
                           : text.find_first_of(".eE") != std::string::npos ? EdmType::kDouble
                                                                            : EdmType::kInt32;
      tokens.push_back({text, type});
      i = end;
    } else if (std::isalpha(c) || c == '_') {
      size_t end = i + 1;
      while (end < f.size() && (std::isalnum(static_cast<unsigned char>(f[end])) || f[end] == '_'))
        ++end;
      std::string word = f.substr(i, end - i);
      std::optional<EdmType> type;
      if (word == "true" || word == "false") type = EdmType::kBoolean;
      if (end < f.size() && f[end] == '\'') {
        auto close = quoted(end);
        if (!close) return std::nullopt;
        type = word == "datetime" ? EdmType::kDateTime
               : word == "guid"   ? EdmType::kGuid
                                  : EdmType::kBinary;
        word = f.substr(i, *close - i);
        end = *close;
      }
      tokens.push_back({word, type});
      i = end;
    } else {
      tokens.push_back({std::string(1, static_cast<char>(c)), std::nullopt});
      ++i;
    }
  }
  return tokens;
}

bool IsComparison(const Token& t) {
  static const std::set<std::string> kOps = {"eq", "ne", "gt", "ge", "lt", "le"};
  return !t.literal && kOps.count(internal::AsciiLower(t.text)) > 0;
}

bool IsProperty(const Token& t) {
  return !t.literal && !t.text.empty() &&
         (std::isalpha(static_cast<unsigned char>(t.text[0])) || t.text[0] == '_') &&
         !IsComparison(t) && t.text != "and" && t.text != "or" && t.text != "not";
}

// How to write `literal` as a literal of `type`, where there is a plain way.
std::string Rewritten(const Token& literal, EdmType type) {
  const std::string& t = literal.text;
  const EdmType from = *literal.literal;
  const bool integral = from == EdmType::kInt32 || from == EdmType::kInt64;
  const std::string digits = from == EdmType::kInt64 ? t.substr(0, t.size() - 1) : t;
  if (type == EdmType::kDouble && integral) return digits + ".0";
  if (type == EdmType::kInt64 && from == EdmType::kInt32) return t + "L";
  if (type == EdmType::kInt32 && from == EdmType::kInt64) return digits;
  if (type == EdmType::kString && from != EdmType::kString) return "'" + t + "'";
  if (from == EdmType::kString && t.size() >= 2) {
    // Unquoted, only if what the quotes hold is a literal of that type.
    const std::string inner = t.substr(1, t.size() - 2);
    auto tokens = Tokens(inner + (type == EdmType::kInt64 ? "L" : ""));
    if (tokens && tokens->size() == 1 && (*tokens)[0].literal == type) return (*tokens)[0].text;
  }
  return "";
}

std::string TypeName(EdmType t) { return std::string(EdmTypeName(t)); }

// The note for `property` compared with `literal`, if the rows say it can
// match none of them.
std::optional<std::string> Miss(const std::string& property, const Token& literal,
                                const std::vector<Entity>& rows) {
  // The system properties: the keys are strings, Timestamp a DateTime.
  for (const std::string system : {"PartitionKey", "RowKey", "Timestamp"}) {
    if (internal::AsciiLower(property) != internal::AsciiLower(system)) continue;
    if (property != system)
      return "no row has a property '" + property + "'; the system property is '" + system +
             "': property names are case-sensitive";
    const EdmType type = system == "Timestamp" ? EdmType::kDateTime : EdmType::kString;
    if (*literal.literal == type) return std::nullopt;
    std::string note = system + " is " + TypeName(type) + ", and " + literal.text + " is an " +
                       TypeName(*literal.literal) + " literal";
    if (std::string fix = Rewritten(literal, type); !fix.empty()) note += "; write " + fix;
    return note;
  }
  std::set<EdmType> types;
  std::set<std::string> other_case;
  for (const Entity& e : rows) {
    if (const PropertyValue* v = e.Find(property)) types.insert(TypeOf(*v));
    for (const auto& [name, value] : e.properties())
      if (name != property && internal::AsciiLower(name) == internal::AsciiLower(property))
        other_case.insert(name);
  }
  if (types.empty() && !other_case.empty())
    return "no row read has a property '" + property + "', and some have '" + *other_case.begin() +
           "': property names are case-sensitive";
  if (types.empty() || types.count(*literal.literal)) return std::nullopt;
  std::string note = "'" + property + "' is " + TypeName(*types.begin());
  for (auto it = std::next(types.begin()); it != types.end(); ++it) note += " or " + TypeName(*it);
  note += " in the rows read, and " + literal.text + " is an " + TypeName(*literal.literal) +
          " literal: a comparison matches only a value of its literal's type";
  if (types.size() == 1)
    if (std::string fix = Rewritten(literal, *types.begin()); !fix.empty())
      note += "; write " + fix;
  return note;
}

}  // namespace

std::vector<std::string> FilterMisses(const std::string& filter, const std::vector<Entity>& rows) {
  std::vector<std::string> notes;
  auto tokens = Tokens(filter);
  if (!tokens || rows.empty()) return notes;
  for (size_t i = 1; i + 1 < tokens->size(); ++i) {
    if (!IsComparison((*tokens)[i])) continue;
    const Token& left = (*tokens)[i - 1];
    const Token& right = (*tokens)[i + 1];
    std::optional<std::string> note;
    if (IsProperty(left) && right.literal) note = Miss(left.text, right, rows);
    if (IsProperty(right) && left.literal) note = Miss(right.text, left, rows);
    if (note) notes.push_back(*note);
  }
  return notes;
}

}  // namespace blobtable::cli
