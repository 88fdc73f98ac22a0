// SPDX-License-Identifier: Apache-2.0
#include "tools/entity_output.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <map>
#include <ostream>
#include <set>
#include <vector>

#include "tools/entity_json.h"
#include "util/base64.h"

namespace blobtable::cli {
namespace {

class JsonLines final : public EntityOutput {
 public:
  explicit JsonLines(std::ostream& out) : out_(out) {}
  int64_t Add(const Entity& e) override {
    const std::string line = EntityToJson(e).dump();
    out_ << line << "\n";
    return static_cast<int64_t>(line.size()) + 1;
  }
  void Finish() override {}

 private:
  std::ostream& out_;
};

// `get`: the object indented; `query`: an array, an element a line.
class Json final : public EntityOutput {
 public:
  Json(std::ostream& out, bool many) : out_(out), many_(many) {}
  int64_t Add(const Entity& e) override {
    const std::string text = many_ ? EntityToJson(e).dump() : EntityToJson(e).dump(2);
    const char* before = !many_ ? "" : count_ == 0 ? "[\n  " : ",\n  ";
    out_ << before << text;
    if (!many_) out_ << "\n";
    ++count_;
    return static_cast<int64_t>(text.size()) + 4;
  }
  void Finish() override {
    if (!many_) return;
    out_ << (count_ == 0 ? "[]\n" : "\n]\n");
  }

 private:
  std::ostream& out_;
  const bool many_;
  int64_t count_ = 0;
};

constexpr size_t kMaxCell = 60;

// Code points in UTF-8 text (its width in a terminal, near enough).
size_t Width(const std::string& s) {
  return static_cast<size_t>(
      std::count_if(s.begin(), s.end(), [](char c) { return (c & 0xC0) != 0x80; }));
}

// A cell: at most kMaxCell code points, control characters escaped.
std::string Cell(const std::string& text) {
  std::string out;
  size_t width = 0;
  const bool cut = Width(text) > kMaxCell;
  for (const char ch : text) {
    const unsigned char c = static_cast<unsigned char>(ch);
    if ((c & 0xC0) != 0x80 && cut && ++width > kMaxCell - 3) return out + "...";
    if (c == '\n')
      out += "\\n";
    else if (c == '\t')
      out += "\\t";
    else if (c < 0x20 || c == 0x7F)
      out += "?";
    else
      out += ch;
  }
  return out;
}

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

class TextTable final : public EntityOutput {
 public:
  explicit TextTable(std::ostream& out) : out_(out) {}
  int64_t Add(const Entity& e) override {
    std::map<std::string, std::string> row;
    row["PartitionKey"] = Cell(e.partition_key());
    row["RowKey"] = Cell(e.row_key());
    int64_t bytes = static_cast<int64_t>(e.partition_key().size() + e.row_key().size());
    for (const auto& [name, value] : e.properties()) {
      row[name] = Cell(Text(value));
      properties_.insert(name);
      bytes += static_cast<int64_t>(row[name].size());
    }
    rows_.push_back(std::move(row));
    return bytes;
  }
  void Finish() override {
    std::vector<std::string> columns = {"PartitionKey", "RowKey"};
    columns.insert(columns.end(), properties_.begin(), properties_.end());
    std::vector<size_t> widths;
    for (const std::string& c : columns) {
      size_t w = Width(c);
      for (auto& row : rows_) w = std::max(w, Width(row[c]));
      widths.push_back(w);
    }
    auto line = [&](auto&& cell) {
      std::string text;
      for (size_t i = 0; i < columns.size(); ++i) {
        const std::string value = cell(columns[i]);
        text += value;
        if (i + 1 < columns.size()) text += std::string(widths[i] - Width(value) + 2, ' ');
      }
      text.erase(text.find_last_not_of(' ') + 1);  // empty cells at the end
      out_ << text << "\n";
    };
    line([](const std::string& c) { return c; });
    for (auto& row : rows_) line([&](const std::string& c) { return row[c]; });
  }

 private:
  std::ostream& out_;
  std::set<std::string> properties_;
  std::vector<std::map<std::string, std::string>> rows_;
};

}  // namespace

std::unique_ptr<EntityOutput> MakeEntityOutput(const std::string& format, bool many,
                                               std::ostream& out) {
  if (format == "jsonl") return std::make_unique<JsonLines>(out);
  if (format == "json") return std::make_unique<Json>(out, many);
  if (format == "table") return std::make_unique<TextTable>(out);
  return nullptr;
}

}  // namespace blobtable::cli
