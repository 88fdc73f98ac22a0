// SPDX-License-Identifier: Apache-2.0
#include "model/filter.h"
#include "model/entity_codec.h"
#include "util/thread_spare.h"

#include <algorithm>

#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>

#include "model/key_rules.h"
#include "util/ascii.h"

namespace blobtable::internal {
namespace {

struct Token {
  enum class Kind { kEnd, kName, kString, kNumber, kOpen, kClose, kTyped };
  Kind kind = Kind::kEnd;
  std::string text;    // kName: the name; kString, kTyped: the quoted text, unescaped
  std::string prefix;  // kTyped: datetime, guid, binary or X
  size_t pos = 0;      // 1-based
};

class Parser {
 public:
  explicit Parser(std::string_view text) : text_(text) {}

  Result<std::unique_ptr<FilterNode>> Run() {
    if (Status s = Next(); !s.ok()) return s;
    if (tok_.kind == Token::Kind::kEnd) return Error(tok_.pos, "the filter is empty");
    auto e = Or();
    if (!e.ok()) return e;
    if (tok_.kind != Token::Kind::kEnd) return Error(tok_.pos, "expected 'and', 'or' or the end");
    return e;
  }

 private:
  static Status Error(size_t pos, const std::string& what) {
    return Status::InvalidArgument("filter: at " + std::to_string(pos) + ": " + what);
  }

  bool IsWord(const char* w) const { return tok_.kind == Token::Kind::kName && tok_.text == w; }

  Result<std::unique_ptr<FilterNode>> Or() { return Chain("or", FilterNode::Kind::kOr); }
  Result<std::unique_ptr<FilterNode>> And() { return Chain("and", FilterNode::Kind::kAnd); }

  // `sub (word sub)*`, left to right.
  Result<std::unique_ptr<FilterNode>> Chain(const char* word, FilterNode::Kind kind) {
    auto sub = [&]() { return kind == FilterNode::Kind::kOr ? And() : Unary(); };
    auto left = sub();
    if (!left.ok()) return left;
    while (IsWord(word)) {
      if (Status s = Next(); !s.ok()) return s;
      auto right = sub();
      if (!right.ok()) return right;
      auto node = std::make_unique<FilterNode>();
      node->kind = kind;
      node->children.push_back(std::move(*left));
      node->children.push_back(std::move(*right));
      left = std::move(node);
    }
    return left;
  }

  Result<std::unique_ptr<FilterNode>> Unary() {
    // The parser, the evaluator and the tree's destruction recurse once a
    // level: nesting is bounded, so that a filter can never overflow the
    // stack of the thread that runs it (a language runtime's may be 1 MiB).
    const bool nests = IsWord("not") || tok_.kind == Token::Kind::kOpen;
    if (nests && ++nesting_ > kMaxFilterNesting)
      return Error(tok_.pos, "nested deeper than " + std::to_string(kMaxFilterNesting) +
                                 " levels of parentheses and not");
    Result<std::unique_ptr<FilterNode>> node = NestedOrComparison();
    if (nests) --nesting_;
    return node;
  }

  Result<std::unique_ptr<FilterNode>> NestedOrComparison() {
    if (IsWord("not")) {
      if (Status s = Next(); !s.ok()) return s;
      auto child = Unary();
      if (!child.ok()) return child;
      auto node = std::make_unique<FilterNode>();
      node->kind = FilterNode::Kind::kNot;
      node->children.push_back(std::move(*child));
      return node;
    }
    if (tok_.kind == Token::Kind::kOpen) {
      if (Status s = Next(); !s.ok()) return s;
      auto inner = Or();
      if (!inner.ok()) return inner;
      if (tok_.kind != Token::Kind::kClose) return Error(tok_.pos, "expected ')'");
      if (Status s = Next(); !s.ok()) return s;
      return inner;
    }
    return Comparison();
  }

  Result<std::unique_ptr<FilterNode>> Comparison() {
    // Each comparison adds a level to the and/or chain's tree: bounded too.
    if (++comparisons_ > kMaxFilterComparisons)
      return Error(tok_.pos, "more than " + std::to_string(kMaxFilterComparisons) + " comparisons");
    const Token left = tok_;
    if (left.kind == Token::Kind::kEnd) return Error(left.pos, "expected a comparison");
    if (Status s = Next(); !s.ok()) return s;
    std::optional<CompareOp> op = OpOf(tok_);
    if (!op) return Error(tok_.pos, "expected eq, ne, gt, ge, lt or le");
    if (Status s = Next(); !s.ok()) return s;
    const Token right = tok_;
    if (right.kind == Token::Kind::kEnd) return Error(right.pos, "expected a value");
    if (Status s = Next(); !s.ok()) return s;
    auto node = std::make_unique<FilterNode>();
    const bool left_is_property = IsProperty(left), right_is_property = IsProperty(right);
    if (left_is_property == right_is_property)
      return Error(left.pos, "a comparison needs a property on one side and a value on the other");
    const Token& property = left_is_property ? left : right;
    const Token& value = left_is_property ? right : left;
    auto literal = Literal(value);
    if (!literal.ok()) return literal.status();
    node->property = property.text;
    node->op = left_is_property ? *op : Flip(*op);
    node->literal = std::move(*literal);
    return node;
  }

  static bool IsProperty(const Token& t) {
    return t.kind == Token::Kind::kName && t.text != "true" && t.text != "false";
  }

  static std::optional<CompareOp> OpOf(const Token& t) {
    if (t.kind != Token::Kind::kName) return std::nullopt;
    static const std::pair<const char*, CompareOp> kOps[] = {
        {"eq", CompareOp::kEq}, {"ne", CompareOp::kNe}, {"gt", CompareOp::kGt},
        {"ge", CompareOp::kGe}, {"lt", CompareOp::kLt}, {"le", CompareOp::kLe}};
    for (const auto& [name, op] : kOps)
      if (t.text == name) return op;
    return std::nullopt;
  }

  static CompareOp Flip(CompareOp op) {
    switch (op) {
      case CompareOp::kGt: return CompareOp::kLt;
      case CompareOp::kGe: return CompareOp::kLe;
      case CompareOp::kLt: return CompareOp::kGt;
      case CompareOp::kLe: return CompareOp::kGe;
      default: return op;
    }
  }

  static Result<PropertyValue> Literal(const Token& t) {
    switch (t.kind) {
      case Token::Kind::kString: return PropertyValue(t.text);
      case Token::Kind::kNumber: return Number(t);
      case Token::Kind::kTyped: return Typed(t);
      case Token::Kind::kName:
        if (t.text == "true" || t.text == "false") return PropertyValue(t.text == "true");
        break;
      default: break;
    }
    return Error(t.pos, "expected a value");
  }

  static Result<PropertyValue> Number(const Token& t) {
    std::string s = t.text;
    const bool int64 = !s.empty() && (s.back() == 'L' || s.back() == 'l');
    if (int64) s.pop_back();
    const bool real = s.find_first_of(".eE") != std::string::npos;
    if (int64 && real) return Error(t.pos, "'" + t.text + "' is not a number");
    errno = 0;
    char* end = nullptr;
    if (real) {
      const double d = std::strtod(s.c_str(), &end);
      // ERANGE with a value that is not 0 is a subnormal: a Double (the
      // store keeps them, and `get` prints them); past the range, or so
      // small it would be 0, is not.
      const bool underflow = errno == ERANGE && (d == 0 || std::isinf(d));
      if (end != s.c_str() + s.size() || underflow || !std::isfinite(d))
        return Error(t.pos, "'" + t.text + "' is not a Double");
      return PropertyValue(d);
    }
    const long long v = std::strtoll(s.c_str(), &end, 10);
    if (s.empty() || end != s.c_str() + s.size() || errno == ERANGE)
      return Error(t.pos, "'" + t.text + "' is not an integer in range");
    if (int64) return PropertyValue(int64_t{v});
    if (v < std::numeric_limits<int32_t>::min() || v > std::numeric_limits<int32_t>::max())
      return Error(t.pos,
                   "'" + t.text + "' is out of Int32's range (write " + t.text + "L for an Int64)");
    return PropertyValue(static_cast<int32_t>(v));
  }

  static Result<PropertyValue> Typed(const Token& t) {
    if (t.prefix == "datetime") {
      auto d = ParseDateTime(t.text);
      if (!d.ok()) return Error(t.pos, "datetime'" + t.text + "' is not an ISO 8601 UTC time");
      return PropertyValue(*d);
    }
    if (t.prefix == "guid") {
      if (!IsGuid(t.text)) return Error(t.pos, "guid'" + t.text + "' is not a GUID");
      return PropertyValue(Guid{t.text});
    }
    std::string bytes;  // binary or X: hexadecimal, two digits a byte
    if (t.text.size() % 2 != 0) return Error(t.pos, "a binary literal needs two digits a byte");
    for (size_t i = 0; i < t.text.size(); i += 2) {
      const int hi = HexDigit(t.text[i]), lo = HexDigit(t.text[i + 1]);
      if (hi < 0 || lo < 0) return Error(t.pos, "'" + t.text + "' is not hexadecimal");
      bytes.push_back(static_cast<char>(hi * 16 + lo));
    }
    return PropertyValue(Binary{std::move(bytes)});
  }

  static int HexDigit(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  }

  // Reads the quoted text starting at text_[at] == '\''; `at` ends past it.
  Status Quoted(size_t& at, std::string& out) {
    const size_t start = at + 1;
    for (++at; at < text_.size(); ++at) {
      if (text_[at] != '\'') {
        out.push_back(text_[at]);
      } else if (at + 1 < text_.size() && text_[at + 1] == '\'') {
        out.push_back('\'');
        ++at;
      } else {
        ++at;
        return Status::OK();
      }
    }
    return Error(start, "a quote is not closed");
  }

  Status Next() {
    size_t at = pos_;
    while (at < text_.size() && std::isspace(static_cast<unsigned char>(text_[at]))) ++at;
    tok_ = Token{};
    tok_.pos = at + 1;
    if (at >= text_.size()) {
      pos_ = at;
      return Status::OK();
    }
    const char c = text_[at];
    if (c == '(' || c == ')') {
      tok_.kind = c == '(' ? Token::Kind::kOpen : Token::Kind::kClose;
      pos_ = at + 1;
      return Status::OK();
    }
    if (c == '\'') {
      tok_.kind = Token::Kind::kString;
      Status s = Quoted(at, tok_.text);
      pos_ = at;
      return s;
    }
    if (std::isdigit(static_cast<unsigned char>(c)) || c == '-' || c == '+' || c == '.') {
      size_t end = at + 1;
      while (end < text_.size() &&
             (std::isalnum(static_cast<unsigned char>(text_[end])) || text_[end] == '.' ||
              ((text_[end] == '-' || text_[end] == '+') &&
               (text_[end - 1] == 'e' || text_[end - 1] == 'E'))))
        ++end;
      tok_.kind = Token::Kind::kNumber;
      tok_.text = std::string(text_.substr(at, end - at));
      pos_ = end;
      return Status::OK();
    }
    if (NameStart(c)) {
      size_t end = at + 1;
      while (end < text_.size() && (NameStart(text_[end]) || std::isdigit(Byte(text_[end])))) ++end;
      std::string word(text_.substr(at, end - at));
      if (end < text_.size() && text_[end] == '\'' &&
          (word == "datetime" || word == "guid" || word == "binary" || word == "X")) {
        tok_.kind = Token::Kind::kTyped;
        tok_.prefix = std::move(word);
        Status s = Quoted(end, tok_.text);
        pos_ = end;
        return s;
      }
      tok_.kind = Token::Kind::kName;
      tok_.text = std::move(word);
      pos_ = end;
      return Status::OK();
    }
    return Error(at + 1, std::string("unexpected '") + c + "'");
  }

  static unsigned char Byte(char c) { return static_cast<unsigned char>(c); }
  // A property name's letters, as the data model counts them: ASCII letters,
  // `_` and every byte of a non-ASCII character (docs/data-model.md).
  static bool NameStart(char c) { return std::isalpha(Byte(c)) || c == '_' || Byte(c) >= 0x80; }

  std::string_view text_;
  int nesting_ = 0;      // parentheses and nots open around the token
  int comparisons_ = 0;  // comparisons parsed
  size_t pos_ = 0;
  Token tok_;
};

template <typename T>
bool Ordered(const T& a, CompareOp op, const T& b) {
  switch (op) {
    case CompareOp::kEq: return a == b;
    case CompareOp::kNe: return !(a == b);
    case CompareOp::kGt: return b < a;
    case CompareOp::kGe: return !(a < b);
    case CompareOp::kLt: return a < b;
    case CompareOp::kLe: return !(b < a);
  }
  return false;
}

// `v op b` for a value read where it lies (no copy of it) and a literal of
// the same type; false for different types. CompareValues is this too.
bool CompareView(const PropertyView& v, CompareOp op, const PropertyValue& b) {
  if (v.type() != TypeOf(b)) return false;
  switch (v.type()) {
    case EdmType::kString: return Ordered(v.text(), op, std::string_view(std::get<std::string>(b)));
    case EdmType::kBinary:
      return Ordered(v.bytes(), op, std::string_view(std::get<Binary>(b).bytes));
    case EdmType::kBoolean: return Ordered(v.boolean(), op, std::get<bool>(b));
    case EdmType::kDateTime: return Ordered(v.date_time(), op, std::get<DateTime>(b));
    case EdmType::kDouble: {
      const double x = v.number(), y = std::get<double>(b);
      if (std::isnan(x) || std::isnan(y)) return false;
      return Ordered(x, op, y);
    }
    case EdmType::kGuid:
      return Ordered(AsciiLower(v.text()), op, AsciiLower(std::get<Guid>(b).value));
    case EdmType::kInt32:
      return Ordered(static_cast<int32_t>(v.integer()), op, std::get<int32_t>(b));
    case EdmType::kInt64: return Ordered(v.integer(), op, std::get<int64_t>(b));
  }
  return false;
}

bool Evaluate(const FilterNode& n, const EntityView& e) {
  switch (n.kind) {
    case FilterNode::Kind::kNot: return !Evaluate(*n.children[0], e);
    case FilterNode::Kind::kAnd: return Evaluate(*n.children[0], e) && Evaluate(*n.children[1], e);
    case FilterNode::Kind::kOr: return Evaluate(*n.children[0], e) || Evaluate(*n.children[1], e);
    case FilterNode::Kind::kCompare: break;
  }
  // Every value is compared where it lies (no copy a row).
  if (n.property == "PartitionKey" || n.property == "RowKey") {
    const std::string* s = std::get_if<std::string>(&n.literal);
    if (s == nullptr) return false;
    return Ordered(n.property == "PartitionKey" ? e.partition_key() : e.row_key(), n.op,
                   std::string_view(*s));
  }
  if (n.property == "Timestamp")
    return CompareValues(PropertyValue(e.timestamp()), n.op, n.literal);
  const PropertyView* v = e.Find(n.property);
  return v != nullptr && CompareView(*v, n.op, n.literal);
}

std::string Hex(std::string_view bytes) {
  static const char kDigits[] = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : bytes) {
    out.push_back(kDigits[c >> 4]);
    out.push_back(kDigits[c & 15]);
  }
  return out;
}

std::string ODataQuote(std::string_view s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("''") : std::string(1, c);
  return out + "'";
}

std::string LiteralText(const PropertyValue& v) {
  switch (TypeOf(v)) {
    case EdmType::kString: return ODataQuote(std::get<std::string>(v));
    case EdmType::kBinary: return "X'" + Hex(std::get<Binary>(v).bytes) + "'";
    case EdmType::kBoolean: return std::get<bool>(v) ? "true" : "false";
    case EdmType::kDateTime: return "datetime'" + FormatDateTime(std::get<DateTime>(v)) + "'";
    case EdmType::kDouble: {
      char buf[40];
      std::snprintf(buf, sizeof buf, "%.17g", std::get<double>(v));
      std::string s = buf;
      if (s.find_first_of(".eE") == std::string::npos) s += ".0";
      return s;
    }
    case EdmType::kGuid: return "guid'" + std::get<Guid>(v).value + "'";
    case EdmType::kInt32: return std::to_string(std::get<int32_t>(v));
    case EdmType::kInt64: return std::to_string(std::get<int64_t>(v)) + "L";
  }
  return "";
}

const char* OpText(CompareOp op) {
  static const char* kText[] = {"eq", "ne", "gt", "ge", "lt", "le"};
  return kText[static_cast<int>(op)];
}

std::string Text(const FilterNode& n) {
  switch (n.kind) {
    case FilterNode::Kind::kNot: return "(not " + Text(*n.children[0]) + ")";
    case FilterNode::Kind::kAnd:
      return "(" + Text(*n.children[0]) + " and " + Text(*n.children[1]) + ")";
    case FilterNode::Kind::kOr:
      return "(" + Text(*n.children[0]) + " or " + Text(*n.children[1]) + ")";
    case FilterNode::Kind::kCompare: break;
  }
  return "(" + n.property + " " + OpText(n.op) + " " + LiteralText(n.literal) + ")";
}

void Narrow(const FilterNode& n, FilterKeyRange& r) {
  if (n.kind == FilterNode::Kind::kAnd) {
    Narrow(*n.children[0], r);
    Narrow(*n.children[1], r);
    return;
  }
  if (n.kind != FilterNode::Kind::kCompare) return;
  const std::string* v = std::get_if<std::string>(&n.literal);
  if (v == nullptr) {
    // A key compared with a value of another type matches nothing.
    if (n.property == "PartitionKey" || n.property == "RowKey") r.empty = true;
    return;
  }
  if (n.property == "PartitionKey" && n.op == CompareOp::kEq) {
    if (r.partition_key && *r.partition_key != *v) r.empty = true;
    r.partition_key = *v;
  } else if (n.property == "RowKey") {
    const bool from = n.op == CompareOp::kEq || n.op == CompareOp::kGe || n.op == CompareOp::kGt;
    const bool to = n.op == CompareOp::kEq || n.op == CompareOp::kLe || n.op == CompareOp::kLt;
    if (from && (!r.row_key_from || *r.row_key_from < *v)) r.row_key_from = *v;
    if (to && (!r.row_key_to || *v < *r.row_key_to)) r.row_key_to = *v;
  }
  if (r.row_key_from && r.row_key_to && *r.row_key_to < *r.row_key_from) r.empty = true;
}

}  // namespace

bool CompareValues(const PropertyValue& a, CompareOp op, const PropertyValue& b) {
  return CompareView(PropertyView({}, a), op, b);
}

Result<Filter> Filter::Parse(std::string_view text) {
  auto root = Parser(text).Run();
  if (!root.ok()) return root.status();
  return Filter(std::shared_ptr<const FilterNode>(std::move(*root)));
}

bool Filter::Matches(const EntityView& entity) const { return Evaluate(*root_, entity); }

bool Filter::Matches(const Entity& entity) const {
  struct PropsTag;  // one allocation a thread, not a call
  ThreadSpare<std::vector<PropertyView>, PropsTag> props;
  return Matches(ViewOf(entity, *props));
}

namespace {
void CollectProperties(const FilterNode& n, std::vector<std::string>& out) {
  if (n.kind == FilterNode::Kind::kCompare) {
    if (n.property != "PartitionKey" && n.property != "RowKey" && n.property != "Timestamp")
      out.push_back(n.property);
    return;
  }
  for (const auto& child : n.children) CollectProperties(*child, out);
}
}  // namespace

std::vector<std::string> Filter::Properties() const {
  std::vector<std::string> out;
  CollectProperties(*root_, out);
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

FilterKeyRange Filter::KeyRange() const {
  FilterKeyRange r;
  Narrow(*root_, r);
  return r;
}

std::string Filter::ToString() const { return Text(*root_); }

}  // namespace blobtable::internal
