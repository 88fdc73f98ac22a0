// SPDX-License-Identifier: Apache-2.0
#include "tools/row_source.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <set>
#include <utility>
#include <vector>

#include "tools/entity_json.h"

namespace blobtable::cli {
namespace {

using json = nlohmann::json;
constexpr std::string_view kTypeColumnSuffix = "@odata.type";

std::string OverLimit(const std::string& what, size_t max) {
  return what + " is over " + std::to_string(max) + " bytes (one entity is at most 1 MiB)";
}

bool Blank(const std::string& text) { return text.find_first_not_of(" \t\r") == std::string::npos; }

// One entity a line, in the form `get` prints.
class JsonLineRows final : public RowSource {
 public:
  explicit JsonLineRows(std::istream& in) : lines_(in, kMaxRowInputBytes) {}
  bool Next(InputRow* row) override {
    std::string text;
    do {
      if (!lines_.Next(&text)) return false;
    } while (Blank(text) && !lines_.too_long());
    row->number = lines_.number();
    row->bytes = text.size() + 1;
    if (lines_.too_long()) {
      row->entity = Status::InvalidArgument(OverLimit("the line", kMaxRowInputBytes));
      return true;
    }
    auto j = ParseJson(text, "the line", /*one_line=*/true);
    if (!j.ok())
      row->entity = j.status();
    else if (!j->is_object())
      row->entity = Status::InvalidArgument("not a JSON object");
    else
      row->entity = EntityFromJson(*j, nullptr);
    return true;
  }
  int64_t consumed() const override { return lines_.consumed(); }

 private:
  LineReader lines_;
};

// A record's cells, split from one or more lines.
struct Record {
  std::vector<std::string> cells;
  int64_t number = 0;  // its first line
  size_t bytes = 0;
  Status status;  // a quote left open, a stray quote, or over the limit
};

// Splits CSV (RFC 4180) or TSV records from lines.
class RecordReader {
 public:
  RecordReader(std::istream& in, char separator)
      : lines_(in, kMaxRowInputBytes), separator_(separator) {}

  // The next record that is not a blank line; false at the end.
  bool Next(Record* r) {
    std::string line;
    do {
      if (!lines_.Next(&line)) return false;
    } while (line.empty() && !lines_.too_long());
    *r = Record{};
    r->number = lines_.number();
    r->bytes = line.size() + 1;
    if (separator_ == '\t') {
      SplitTsv(line, r);
    } else {
      SplitCsv(line, r);
    }
    if (separator_ == '\t' && lines_.too_long())
      r->status = Status::InvalidArgument(OverLimit("the record", kMaxRowInputBytes));
    return true;
  }
  int64_t consumed() const { return lines_.consumed(); }

 private:
  void SplitTsv(const std::string& line, Record* r) {
    std::string cell;
    for (size_t i = 0; i < line.size(); ++i) {
      const char c = line[i];
      if (c == '\t') {
        r->cells.push_back(std::move(cell));
        cell.clear();
      } else if (c == '\\' && i + 1 < line.size()) {
        const char e = line[++i];
        cell += e == 't' ? '\t' : e == 'n' ? '\n' : e == 'r' ? '\r' : e;
      } else {
        cell += c;
      }
    }
    r->cells.push_back(std::move(cell));
  }

  // A record over the limit: the rest of it is read (its quotes counted,
  // an odd count meaning a quoted field still open) and dropped, so that
  // nothing inside one of its fields is ever read as a row.
  // `quotes`: how many the record's lines so far hold.
  void SkipRestOfRecord(int64_t quotes, Record* r) {
    std::string more;
    while (quotes % 2 == 1 && lines_.Next(&more)) {
      r->bytes += more.size() + 1;
      quotes += std::count(more.begin(), more.end(), '"') + lines_.skipped_quotes();
    }
    r->status = Status::InvalidArgument(OverLimit("the record", kMaxRowInputBytes) +
                                        "; it was read to its end (line " +
                                        std::to_string(lines_.number()) + ") and left out");
  }

  // A quoted field may go on over the next lines; they join with the line
  // break that ended each ("\n" or "\r\n").
  void SplitCsv(std::string line, Record* r) {
    int64_t quotes = std::count(line.begin(), line.end(), '"') + lines_.skipped_quotes();
    if (lines_.too_long()) return SkipRestOfRecord(quotes, r);
    std::string cell;
    bool quoted = false, was_quoted = false;
    for (size_t i = 0;; ++i) {
      if (i == line.size()) {
        if (!quoted) break;
        const bool cr = lines_.had_cr();
        if (!lines_.Next(&line)) {
          r->status = Status::InvalidArgument(
              "a quoted field is not closed before the end of the input (lines " +
              std::to_string(r->number) + " to " + std::to_string(lines_.number()) +
              " were read as this record)");
          return;
        }
        r->bytes += line.size() + 1;
        quotes += std::count(line.begin(), line.end(), '"') + lines_.skipped_quotes();
        if (r->bytes > kMaxRowInputBytes || lines_.too_long()) return SkipRestOfRecord(quotes, r);
        cell += cr ? "\r\n" : "\n";
        i = static_cast<size_t>(-1);
        continue;
      }
      const char c = line[i];
      if (quoted) {
        if (c != '"') {
          cell += c;
        } else if (i + 1 < line.size() && line[i + 1] == '"') {
          cell += '"';
          ++i;
        } else {
          quoted = false;
        }
      } else if (c == separator_) {
        r->cells.push_back(std::move(cell));
        cell.clear();
        was_quoted = false;
      } else if (c == '"' && cell.empty() && !was_quoted) {
        quoted = was_quoted = true;
      } else if (c == '"' || was_quoted) {
        r->status = Status::InvalidArgument(
            "cell " + std::to_string(r->cells.size() + 1) +
            ": a quote inside an unquoted cell, or text after a closing quote (a cell with a "
            "quote is quoted whole, its quotes doubled)");
        return;
      } else {
        cell += c;
      }
    }
    r->cells.push_back(std::move(cell));
  }

  LineReader lines_;
  const char separator_;
};

// A column of the header: a property (or a key), or the types of one.
struct HeaderColumn {
  std::string name;
  int types_of = -1;  // a NAME@odata.type column: its property's column
  int typed_by = -1;  // a property's NAME@odata.type column, if any
};

class DelimitedRows final : public RowSource {
 public:
  DelimitedRows(std::istream& in, char separator, ColumnTypes types)
      : records_(in, separator), types_(std::move(types)) {}

  // The header, read when the source is made.
  Status ReadHeader() {
    Record header;
    if (!records_.Next(&header)) return Status::OK();  // no input: no rows
    auto fail = [&](const std::string& why) {
      return Status::InvalidArgument("line " + std::to_string(header.number) +
                                     " (the header): " + why);
    };
    if (!header.status.ok()) return fail(header.status.message());
    std::set<std::string> seen;
    for (std::string& name : header.cells) {
      if (!seen.insert(name).second) return fail("column '" + name + "' is named twice");
      columns_.push_back(HeaderColumn{std::move(name)});
    }
    for (const char* key : {"PartitionKey", "RowKey"})
      if (!seen.count(key))
        return fail(std::string("no ") + key + " column (the header names the columns)");
    for (size_t i = 0; i < columns_.size(); ++i) {
      const std::string& name = columns_[i].name;
      if (name.size() <= kTypeColumnSuffix.size() || !name.ends_with(kTypeColumnSuffix)) continue;
      const std::string of = name.substr(0, name.size() - kTypeColumnSuffix.size());
      for (size_t p = 0; p < columns_.size(); ++p)
        if (columns_[p].name == of) {
          columns_[i].types_of = static_cast<int>(p);
          columns_[p].typed_by = static_cast<int>(i);
        }
      if (columns_[i].types_of < 0)
        return fail("column '" + name + "' types no column '" + of + "'");
    }
    for (const auto& [name, type] : types_)
      if (!seen.count(name)) return fail("--types names '" + name + "', which is not a column");
    return Status::OK();
  }

  bool Next(InputRow* row) override {
    Record r;
    if (!records_.Next(&r)) return false;
    row->number = r.number;
    row->bytes = r.bytes;
    row->entity = r.status.ok() ? EntityOf(r.cells) : Result<Entity>(r.status);
    return true;
  }
  int64_t consumed() const override { return records_.consumed(); }

 private:
  Result<Entity> EntityOf(const std::vector<std::string>& cells) {
    if (cells.size() != columns_.size())
      return Status::InvalidArgument(std::to_string(cells.size()) + " cells; the header has " +
                                     std::to_string(columns_.size()));
    json j = json::object();
    for (size_t i = 0; i < columns_.size(); ++i) {
      const HeaderColumn& c = columns_[i];
      if (c.types_of >= 0) continue;
      Status s = AddCell(j, c, cells[i], c.typed_by >= 0 ? cells[c.typed_by] : "");
      if (!s.ok())
        return Status::InvalidArgument("column " + std::to_string(i + 1) + " (" + c.name +
                                       "): " + s.message());
    }
    return EntityFromJson(j, nullptr);
  }

  Status AddCell(json& j, const HeaderColumn& c, const std::string& cell,
                 const std::string& type_cell) {
    if (c.name == "PartitionKey" || c.name == "RowKey") {
      j[c.name] = cell;
      return Status::OK();
    }
    std::string type = type_cell;
    if (type.empty())
      if (auto it = types_.find(c.name); it != types_.end()) type = it->second;
    if (!type.empty()) {
      const std::string edm = EdmTypeNamed(type);
      if (edm.empty()) return Status::InvalidArgument("unknown type '" + type + "'");
      return AddTypedProperty(j, c.name, edm, cell);
    }
    if (cell.empty()) return Status::OK();  // no property
    j[c.name] = InferredCell(cell);
    if (j[c.name].is_number_integer() &&
        (j[c.name].get<int64_t>() < INT32_MIN || j[c.name].get<int64_t>() > INT32_MAX ||
         (j[c.name].is_number_unsigned() && j[c.name].get<uint64_t>() > INT32_MAX)))
      return Status::InvalidArgument("integer " + cell +
                                     " does not fit Edm.Int32: give its type (a column " + c.name +
                                     "@odata.type, or --types " + c.name + ":Edm.Int64)");
    return Status::OK();
  }

  RecordReader records_;
  const ColumnTypes types_;
  std::vector<HeaderColumn> columns_;
};

}  // namespace

nlohmann::json InferredCell(const std::string& cell) {
  if (cell == "true") return true;
  if (cell == "false") return false;
  const char c = cell.empty() ? ' ' : cell.front();
  if (c == '-' || (c >= '0' && c <= '9')) {
    json n = json::parse(cell, nullptr, /*allow_exceptions=*/false);
    if (n.is_number() && cell.find_first_of(" \t\r\n") == std::string::npos) return n;
  }
  return cell;
}

Result<std::string> ReadInput(std::istream& in, size_t max, const std::string& what) {
  std::string text;
  char buf[1 << 16];
  while (in.read(buf, sizeof buf) || in.gcount() > 0) {
    if (text.size() + static_cast<size_t>(in.gcount()) > max)
      return Status::InvalidArgument(what + " is over " + std::to_string(max) +
                                     " bytes; nothing was written");
    text.append(buf, static_cast<size_t>(in.gcount()));
  }
  return text;
}

bool LineReader::Next(std::string* line) {
  line->clear();
  too_long_ = had_cr_ = false;
  skipped_quotes_ = 0;
  bool any = false, last_cr = false;
  for (int c; (c = in_.sbumpc()) != std::char_traits<char>::eof();) {
    any = true;
    ++consumed_;
    if (c == '\n') break;
    last_cr = c == '\r';
    if (line->size() < max_) {
      line->push_back(static_cast<char>(c));
    } else {
      too_long_ = true;
      skipped_quotes_ += c == '"';
    }
  }
  if (!any) return false;
  if (!line->empty() && line->back() == '\r' && !too_long_) {
    line->pop_back();
    had_cr_ = true;
  } else if (too_long_ && last_cr) {
    had_cr_ = true;
  }
  // A UTF-8 byte order mark (as spreadsheets save text) is not data.
  if (number_ == 0 && line->starts_with("\xEF\xBB\xBF")) line->erase(0, 3);
  ++number_;
  return true;
}

Result<ColumnTypes> ParseColumnTypes(const std::string& text) {
  ColumnTypes types;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find(',', start);
    if (end == std::string::npos) end = text.size();
    const std::string part = text.substr(start, end - start);
    const size_t colon = part.find(':');
    const std::string type = colon == std::string::npos ? "" : EdmTypeNamed(part.substr(colon + 1));
    if (colon == 0 || type.empty())
      return Status::InvalidArgument(
          "--types: '" + part +
          "' is not NAME:TYPE (Edm.Int32, Edm.Int64, Edm.Double, "
          "Edm.Boolean, Edm.DateTime, Edm.Guid, Edm.Binary, Edm.String)");
    types[part.substr(0, colon)] = type;
    start = end + 1;
  }
  return types;
}

Result<std::unique_ptr<RowSource>> MakeRowSource(const std::string& format, ColumnTypes types,
                                                 std::istream& in) {
  if (format == "jsonl") {
    if (!types.empty())
      return Status::InvalidArgument("--types is for csv and tsv (JSON lines say their types)");
    return std::unique_ptr<RowSource>(std::make_unique<JsonLineRows>(in));
  }
  if (format != "csv" && format != "tsv")
    return Status::InvalidArgument("unknown --format '" + format + "' (jsonl, csv, tsv)");
  auto source = std::make_unique<DelimitedRows>(in, format == "csv" ? ',' : '\t', std::move(types));
  Status header = source->ReadHeader();
  if (!header.ok()) return header;
  return std::unique_ptr<RowSource>(std::move(source));
}

}  // namespace blobtable::cli
