// SPDX-License-Identifier: Apache-2.0
// The columnar formats of tools/entity_output.h: table, csv and tsv. They
// stream: the columns (and a table's widths) are settled by the first
// kSettlingRows rows, held until then, and every later row is written as
// it comes, so memory stays bounded however many rows a query returns.
#include <algorithm>
#include <clocale>
#include <cmath>
#include <cwchar>
#include <map>
#include <ostream>
#include <set>
#include <vector>

#include <locale.h>
#include <nlohmann/json.hpp>

#include "tools/entity_output.h"
#include "tools/row_source.h"
#include "util/base64.h"
#include "util/utf8.h"

namespace blobtable::cli {
namespace {

constexpr size_t kSettlingRows = 1000;
constexpr size_t kMaxCellWidth = 60;  // table: columns wider are cut, with "..."

std::string DoubleText(double d) {
  if (std::isnan(d)) return "NaN";
  if (std::isinf(d)) return d > 0 ? "Infinity" : "-Infinity";
  return nlohmann::json(d).dump();
}

std::string Text(const PropertyValue& v) {
  switch (TypeOf(v)) {
    case EdmType::kString: return std::get<std::string>(v);
    case EdmType::kBinary: return internal::Base64Encode(std::get<Binary>(v).bytes);
    case EdmType::kBoolean: return std::get<bool>(v) ? "true" : "false";
    case EdmType::kDateTime: return FormatDateTime(std::get<DateTime>(v));
    case EdmType::kDouble: return DoubleText(std::get<double>(v));
    case EdmType::kGuid: return std::get<Guid>(v).value;
    case EdmType::kInt32: return std::to_string(std::get<int32_t>(v));
    case EdmType::kInt64: return std::to_string(std::get<int64_t>(v));
  }
  return "";
}

// A row as text: column name to value.
using Row = std::map<std::string, std::string>;

// Whether `value` as Text would be read back by `import --format csv|tsv`
// as another type or value (tools/row_source.h: its rule for a cell with
// no type given), so that its row must say its type.
bool NeedsType(const PropertyValue& value, const std::string& text) {
  switch (TypeOf(value)) {
    case EdmType::kString: return !InferredCell(text).is_string() || text.empty();
    case EdmType::kBoolean:
    case EdmType::kInt32: return false;
    case EdmType::kDouble: return !InferredCell(text).is_number_float();
    default: return true;
  }
}

// `with_types`: a property whose text would not read back as itself has
// its type in NAME@odata.type (csv, tsv).
Row RowOf(const Entity& e, bool with_types) {
  Row row{{"PartitionKey", e.partition_key()}, {"RowKey", e.row_key()}};
  for (const auto& [name, value] : e.properties()) {
    std::string text = Text(value);
    if (with_types && NeedsType(value, text))
      row[name + "@odata.type"] = std::string(EdmTypeName(TypeOf(value)));
    row[name] = std::move(text);
  }
  return row;
}

// Holds the first rows, settles the columns on them (PartitionKey, RowKey,
// then every property they have, in name order; or the --select list),
// then hands every row to Write.
class Columnar : public EntityOutput {
 public:
  Columnar(std::ostream& out, std::vector<std::string> selected, bool with_types)
      : out_(out), selected_(std::move(selected)), with_types_(with_types) {}
  int64_t Add(const Entity& e) override {
    Row row = RowOf(e, with_types_);
    int64_t bytes = 0;
    for (const auto& [name, value] : row) bytes += static_cast<int64_t>(value.size());
    if (settled_) {
      Write(row);
    } else {
      held_.push_back(std::move(row));
      if (held_.size() == kSettlingRows) Settle();
    }
    return bytes;
  }
  void Finish() override {
    if (!settled_) Settle();
    out_.flush();
  }

 protected:
  virtual void Begin() = 0;  // the columns are known: the header
  virtual void Write(const Row& row) = 0;

  std::ostream& out_;
  std::vector<std::string> columns_;
  std::vector<Row> held_;  // until settled; Begin may read them

 private:
  void Settle() {
    columns_ = {"PartitionKey", "RowKey"};
    if (!selected_.empty()) {
      for (const std::string& s : selected_) {
        if (s == "PartitionKey" || s == "RowKey") continue;
        columns_.push_back(s);
        const std::string typed = s + "@odata.type";
        if (std::any_of(held_.begin(), held_.end(), [&](const Row& r) { return r.count(typed); }))
          columns_.push_back(typed);
      }
    } else {
      std::set<std::string> properties;
      for (const Row& row : held_)
        for (const auto& [name, value] : row)
          if (name != "PartitionKey" && name != "RowKey") properties.insert(name);
      columns_.insert(columns_.end(), properties.begin(), properties.end());
    }
    settled_ = true;
    Begin();
    for (const Row& row : held_) Write(row);
    held_.clear();
  }

  const std::vector<std::string> selected_;
  const bool with_types_;
  bool settled_ = false;
};

// While one lives, this thread's LC_CTYPE is C.UTF-8 (wcwidth answers for
// any code point whatever the process's locale is); Columns(cp) is what a
// code point takes in a terminal: East Asian wide characters and emoji 2,
// combining marks 0, anything wcwidth cannot say 1.
class TerminalColumns {
 public:
  TerminalColumns() : before_(utf8() != locale_t{} ? uselocale(utf8()) : locale_t{}) {}
  ~TerminalColumns() {
    if (utf8() != locale_t{}) uselocale(before_);
  }
  TerminalColumns(const TerminalColumns&) = delete;
  TerminalColumns& operator=(const TerminalColumns&) = delete;
  static size_t Columns(uint32_t cp) {
    const int w = utf8() != locale_t{} ? wcwidth(static_cast<wchar_t>(cp)) : 1;
    return w < 0 ? 1 : static_cast<size_t>(w);
  }

 private:
  static locale_t utf8() {
    static const locale_t locale = newlocale(LC_CTYPE_MASK, "C.UTF-8", locale_t{});
    return locale;
  }
  locale_t before_;
};

// Calls fn(end, columns) for each code point of `text` (`end`: where the
// next starts; a byte that is not UTF-8 counts as one code point of one
// column) until fn returns false.
template <typename Fn>
void ForEachCodePoint(const std::string& text, Fn&& fn) {
  TerminalColumns in_utf8;
  size_t pos = 0;
  uint32_t cp = 0;
  while (pos < text.size()) {
    const size_t start = pos;
    const bool valid = internal::NextCodePoint(text, &pos, &cp);
    if (!valid) pos = start + 1;
    if (!fn(pos, valid ? TerminalColumns::Columns(cp) : size_t{1})) return;
  }
}

size_t DisplayWidth(const std::string& text) {
  size_t width = 0;
  ForEachCodePoint(text, [&](size_t, size_t columns) { return width += columns, true; });
  return width;
}

// A table cell: control characters escaped, cut to kMaxCellWidth columns.
std::string Cell(const std::string& text) {
  std::string shown;
  for (const char ch : text) {
    const unsigned char c = static_cast<unsigned char>(ch);
    shown += c == '\n'                 ? std::string("\\n")
             : c == '\t'               ? std::string("\\t")
             : (c < 0x20 || c == 0x7F) ? std::string("?")
                                       : std::string(1, ch);
  }
  if (DisplayWidth(shown) <= kMaxCellWidth) return shown;
  size_t kept = 0, width = 0;
  ForEachCodePoint(shown, [&](size_t end, size_t columns) {
    if (width + columns > kMaxCellWidth - 3) return false;
    width += columns;
    kept = end;
    return true;
  });
  return shown.substr(0, kept) + "...";
}

// Aligned columns, two spaces apart. A later row's wider cell pushes the
// rest of its own line right; a property the columns lack is shown at the
// line's end as name=value (nothing is hidden).
class TextTable final : public Columnar {
 public:
  TextTable(std::ostream& out, std::vector<std::string> selected)
      : Columnar(out, std::move(selected), /*with_types=*/false) {}

 private:
  void Begin() override {
    for (const std::string& c : columns_) {
      size_t w = DisplayWidth(c);
      for (const Row& row : held_)
        if (auto it = row.find(c); it != row.end()) w = std::max(w, DisplayWidth(Cell(it->second)));
      widths_.push_back(w);
    }
    Line(columns_, "");
  }
  void Write(const Row& row) override {
    std::vector<std::string> cells;
    for (const std::string& c : columns_) {
      auto it = row.find(c);
      cells.push_back(it == row.end() ? "" : Cell(it->second));
    }
    std::string extra;
    for (const auto& [name, value] : row)
      if (std::find(columns_.begin(), columns_.end(), name) == columns_.end())
        extra += "  " + name + "=" + Cell(value);
    Line(cells, extra);
  }
  void Line(const std::vector<std::string>& cells, const std::string& extra) {
    std::string text;
    for (size_t i = 0; i < cells.size(); ++i) {
      text += cells[i];
      const size_t w = DisplayWidth(cells[i]);
      if (i + 1 < cells.size()) text += std::string(widths_[i] > w ? widths_[i] - w + 2 : 2, ' ');
    }
    text += extra;
    text.erase(text.find_last_not_of(' ') + 1);  // empty cells at the end
    out_ << text << "\n";
  }
  std::vector<size_t> widths_;
};

// csv (RFC 4180 quoting, LF line ends) or tsv (tab, newline, carriage
// return and backslash escaped as \t \n \r \\). A header line of column
// names, then a line a row; a property whose text would not read back as
// itself (an Int64, a DateTime, a string "42") has a column NAME@odata.type
// with each row's type of it, so `import --format csv|tsv` reads back the
// same entities.
class Delimited final : public Columnar {
 public:
  Delimited(std::ostream& out, std::vector<std::string> selected, char separator)
      : Columnar(out, std::move(selected), /*with_types=*/true), separator_(separator) {}

  Status status() const override { return status_; }

 private:
  void Begin() override { Line(columns_); }
  void Write(const Row& row) override {
    std::vector<std::string> cells;
    for (const std::string& c : columns_) {
      auto it = row.find(c);
      cells.push_back(it == row.end() ? "" : it->second);
    }
    if (!status_.ok()) return;
    for (const auto& [name, value] : row)
      if (std::find(columns_.begin(), columns_.end(), name) == columns_.end()) {
        // Never a row with a value or its type left out: stop before it.
        if (name.ends_with("@odata.type")) {
          status_ = Status::InvalidArgument(
              "the entity (PartitionKey '" + row.at("PartitionKey") + "', RowKey '" +
              row.at("RowKey") + "') has " + name.substr(0, name.size() - 11) + " as " +
              row.at(name) + ", which would read back as another type, and the first " +
              std::to_string(kSettlingRows) + " rows settled no column " + name +
              ": use --format jsonl");
          return;
        }
        status_ = Status::InvalidArgument(
            "the entity (PartitionKey '" + row.at("PartitionKey") + "', RowKey '" +
            row.at("RowKey") + "') has property " + name + ", which is not among the columns " +
            "(settled by the first " + std::to_string(kSettlingRows) + " rows): give --select " +
            "with every column wanted, or use --format jsonl");
        return;
      }
    Line(cells);
  }
  void Line(const std::vector<std::string>& cells) {
    std::string text;
    for (size_t i = 0; i < cells.size(); ++i) {
      if (i > 0) text += separator_;
      text += separator_ == ',' ? Quoted(cells[i]) : Escaped(cells[i]);
    }
    out_ << text << "\n";
  }
  static std::string Quoted(const std::string& v) {
    if (v.find_first_of(",\"\r\n") == std::string::npos) return v;
    std::string q = "\"";
    for (char c : v) q += c == '"' ? std::string("\"\"") : std::string(1, c);
    return q + "\"";
  }
  static std::string Escaped(const std::string& v) {
    std::string e;
    for (char c : v)
      e += c == '\t'   ? std::string("\\t")
           : c == '\n' ? std::string("\\n")
           : c == '\r' ? std::string("\\r")
           : c == '\\' ? std::string("\\\\")
                       : std::string(1, c);
    return e;
  }
  const char separator_;
  Status status_;
};

}  // namespace

std::unique_ptr<EntityOutput> MakeColumnarOutput(const std::string& format,
                                                 const std::vector<std::string>& selected,
                                                 std::ostream& out) {
  if (format == "table") return std::make_unique<TextTable>(out, selected);
  if (format == "csv") return std::make_unique<Delimited>(out, selected, ',');
  if (format == "tsv") return std::make_unique<Delimited>(out, selected, '\t');
  return nullptr;
}

}  // namespace blobtable::cli
