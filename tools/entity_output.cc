// SPDX-License-Identifier: Apache-2.0
#include "tools/entity_output.h"

#include <nlohmann/json.hpp>

#include <ostream>
#include <vector>

#include "tools/entity_json.h"

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

}  // namespace

std::unique_ptr<EntityOutput> MakeEntityOutput(const std::string& format, bool many,
                                               std::ostream& out,
                                               const std::vector<std::string>& selected) {
  if (format == "jsonl") return std::make_unique<JsonLines>(out);
  if (format == "json") return std::make_unique<Json>(out, many);
  return MakeColumnarOutput(format, selected, out);
}

}  // namespace blobtable::cli
