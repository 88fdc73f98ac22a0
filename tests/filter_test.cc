// SPDX-License-Identifier: Apache-2.0
// Filters ($filter, model/filter.h): parsing, errors with their position,
// Azure Tables' typing rules, the key range a filter narrows a query to, and
// a property-based check of parser and evaluator against a straightforward
// reference on random entities and random expressions.
#include "model/filter.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <limits>
#include <memory>
#include <random>

namespace blobtable {
namespace {
using namespace internal;

DateTime At(int64_t seconds) {
  return DateTime(std::chrono::duration_cast<Ticks>(std::chrono::seconds(1'700'000'000 + seconds)));
}

Entity Sample() {
  Entity e("pk1", "rk5");
  e.Set("name", std::string("O'Brien"))
      .Set("n", int32_t{5})
      .Set("big", int64_t{1} << 40)
      .Set("price", 2.5)
      .Set("ok", true)
      .Set("when", At(0))
      .Set("id", Guid{"0f8fad5b-d9cb-469f-a165-70867728950e"})
      .Set("raw", Binary{std::string("\x0a\x0b", 2)});
  e.set_timestamp(At(10));
  return e;
}

bool Match(const std::string& filter, const Entity& e = Sample()) {
  auto f = Filter::Parse(filter);
  EXPECT_TRUE(f.ok()) << filter << ": " << f.status().ToString();
  return f.ok() && f->Matches(e);
}

TEST(FilterTest, EveryLiteralTypeMatchesItsOwnType) {
  EXPECT_TRUE(Match("name eq 'O''Brien'"));
  EXPECT_TRUE(Match("n eq 5"));
  EXPECT_TRUE(Match("big eq 1099511627776L"));
  EXPECT_TRUE(Match("price eq 2.5"));
  EXPECT_TRUE(Match("price lt 2.5e1"));
  EXPECT_TRUE(Match("ok eq true"));
  EXPECT_TRUE(Match("when eq datetime'2023-11-14T22:13:20Z'"));
  EXPECT_TRUE(Match("id eq guid'0F8FAD5B-D9CB-469F-A165-70867728950E'"));
  EXPECT_TRUE(Match("raw eq X'0A0B'"));
  EXPECT_TRUE(Match("raw eq binary'0a0b'"));
  EXPECT_TRUE(Match("PartitionKey eq 'pk1' and RowKey ge 'rk' and RowKey lt 'rk6'"));
  EXPECT_TRUE(Match("Timestamp gt datetime'2023-11-14T22:13:20Z'"));
  EXPECT_TRUE(Match("5 eq n"));
  EXPECT_TRUE(Match("3 lt n")) << "a value on the left is the same comparison turned round";
}

// A property name the data model takes (non-ASCII characters count as
// letters) is one a filter can name; it failed "unexpected '\xc3'".
TEST(FilterTest, AnyNameTheDataModelTakesCanBeNamed) {
  Entity e("pk1", "rk5");
  e.Set("\xc3\xa9x", int32_t{5}).Set("_n\xc3\xa9_2", int32_t{6}).Set("\xe6\x97\xa5", true);
  ASSERT_TRUE(ValidateEntity(e).ok());
  EXPECT_TRUE(Match("\xc3\xa9x eq 5", e));
  EXPECT_TRUE(Match("_n\xc3\xa9_2 eq 6 and \xe6\x97\xa5 eq true", e));
  EXPECT_FALSE(Match("\xc3\xa9 eq 5", e)) << "a name is matched whole";
  auto f = Filter::Parse("\xc3\xa9x eq 5");
  ASSERT_TRUE(f.ok());
  EXPECT_EQ(f->Properties(), std::vector<std::string>{"\xc3\xa9x"});
}

// Azure compares only values of one type: Int32 is not Int64, nor Double.
TEST(FilterTest, AComparisonWithAnotherTypeOrAMissingPropertyIsFalse) {
  EXPECT_FALSE(Match("n eq 5L"));
  EXPECT_FALSE(Match("n eq 5.0"));
  EXPECT_FALSE(Match("big eq 1099511627776.0"));
  EXPECT_FALSE(Match("name eq 5"));
  EXPECT_FALSE(Match("missing eq 5"));
  EXPECT_FALSE(Match("missing ne 5")) << "ne is a comparison too";
  EXPECT_FALSE(Match("PartitionKey eq 1"));
  // not, and, or combine those results as plain booleans.
  EXPECT_TRUE(Match("not (missing eq 5)"));
  EXPECT_TRUE(Match("not (n eq 5L)"));
  EXPECT_TRUE(Match("missing eq 5 or n eq 5"));
  EXPECT_FALSE(Match("missing eq 5 and n eq 5"));
}

TEST(FilterTest, PrecedenceIsNotThenAndThenOr) {
  EXPECT_TRUE(Match("n eq 1 and n eq 2 or n eq 5"));  // (false and false) or true
  EXPECT_FALSE(Match("n eq 1 and (n eq 2 or n eq 5)"));
  EXPECT_FALSE(Match("not n eq 5 or n eq 1"));  // (not true) or false
  EXPECT_TRUE(Match("not not n eq 5"));
  EXPECT_TRUE(Match("((n ge 5) and (n le 5))"));
}

TEST(FilterTest, OrderingFollowsEachType) {
  EXPECT_TRUE(Match("name gt 'O'"));
  EXPECT_TRUE(Match("name lt 'o'")) << "ordinal: upper case before lower";
  EXPECT_TRUE(Match("ok gt false"));
  EXPECT_TRUE(Match("raw lt X'0A0C'"));
  EXPECT_TRUE(Match("raw gt X'0A'"));
  EXPECT_TRUE(Match("when lt datetime'2023-11-14T22:13:21Z'"));
  EXPECT_TRUE(Match("big gt 2147483648L"));
  Entity nan("p", "r");
  nan.Set("x", std::numeric_limits<double>::quiet_NaN());
  EXPECT_FALSE(Match("x eq 1.0", nan));
  EXPECT_FALSE(Match("x ne 1.0", nan)) << "NaN compares false with anything";
}

// A subnormal Double is a literal like any other (the store keeps them and
// `get` prints them: 5e-324 was refused); one past the range, or so small
// it would be 0, is not a Double.
TEST(FilterTest, SubnormalDoublesAreLiteralsAndValuesOutOfRangeAreNot) {
  Entity tiny("p", "r");
  tiny.Set("d", 5e-324);
  EXPECT_TRUE(Match("d eq 5e-324", tiny));
  EXPECT_TRUE(Match("d lt 2.2250738585072014e-308", tiny));
  EXPECT_TRUE(Match("d gt 0.0", tiny));
  for (const char* bad : {"d eq 1e-400", "d eq 1e309", "d eq 1e99999"})
    EXPECT_EQ(Filter::Parse(bad).status().code(), Code::kInvalidArgument) << bad;
}

TEST(FilterTest, PropertiesAreThoseItReadsBesidesTheKeysSortedOnce) {
  auto f = Filter::Parse(
      "b eq 1 and (not (a gt 2L) or PartitionKey eq 'x') and b lt 5 or Timestamp ge "
      "datetime'2026-01-01T00:00:00Z' or RowKey eq 'r'");
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  EXPECT_EQ(f->Properties(), (std::vector<std::string>{"a", "b"}));
}

TEST(FilterTest, AMalformedFilterSaysWhereAndWhy) {
  struct Case {
    const char* filter;
    const char* position;
    const char* what;
  } cases[] = {
      {"", "at 1", "empty"},
      {"n eq", "at 5", "expected a value"},
      {"n eq 5 and", "at 11", "expected a comparison"},
      {"n equals 5", "at 3", "expected eq, ne"},
      {"(n eq 5", "at 8", "expected ')'"},
      {"n eq 'abc", "at 6", "quote is not closed"},
      {"n eq 5 n eq 6", "at 8", "expected 'and', 'or'"},
      {"n eq 3000000000", "at 6", "out of Int32's range"},
      {"n eq 99999999999999999999L", "at 6", "not an integer"},
      {"n eq 1.5L", "at 6", "not a number"},
      {"raw eq X'0A0'", "at 8", "two digits"},
      {"raw eq X'0G'", "at 8", "not hexadecimal"},
      {"id eq guid'nope'", "at 7", "not a GUID"},
      {"when eq datetime'yesterday'", "at 9", "ISO 8601"},
      {"n eq m", "at 1", "a property on one side"},
      {"5 eq 5", "at 1", "a property on one side"},
      {"n eq 5 & m eq 6", "at 8", "unexpected '&'"},
  };
  for (const Case& c : cases) {
    auto f = Filter::Parse(c.filter);
    ASSERT_FALSE(f.ok()) << c.filter;
    EXPECT_EQ(f.status().code(), Code::kInvalidArgument) << c.filter;
    EXPECT_NE(f.status().message().find(c.position), std::string::npos)
        << c.filter << ": " << f.status().ToString();
    EXPECT_NE(f.status().message().find(c.what), std::string::npos)
        << c.filter << ": " << f.status().ToString();
  }
}

// Parsing, evaluating and destroying a filter recurse a level a nesting or
// comparison: bounded, a filter of any size is refused, never a crash (a
// 20 KB one of nested parentheses overflowed the stack: review of issue 58).
TEST(FilterTest, NestingAndComparisonsAreBoundedAndMoreIsRefused) {
  auto nested = [](int levels, const std::string& open, const std::string& close) {
    std::string f;
    for (int i = 0; i < levels; ++i) f += open;
    f += "n eq 1";
    for (int i = 0; i < levels; ++i) f += close;
    return f;
  };
  auto chain = [](int comparisons) {
    std::string f = "n eq 0";
    for (int i = 1; i < comparisons; ++i)
      f += (i % 2 ? " and n ne " : " or n eq ") + std::to_string(i);
    return f;
  };
  EXPECT_TRUE(Filter::Parse(nested(kMaxFilterNesting, "(", ")")).ok());
  EXPECT_TRUE(Filter::Parse(nested(kMaxFilterNesting, "not ", "")).ok());
  EXPECT_TRUE(Filter::Parse(chain(kMaxFilterComparisons)).ok());
  // Levels that close again do not add up.
  std::string siblings;
  for (int i = 0; i < 10; ++i) siblings += (i ? " and " : "") + nested(kMaxFilterNesting, "(", ")");
  EXPECT_TRUE(Filter::Parse(siblings).ok());
  for (const std::string& f :
       {nested(kMaxFilterNesting + 1, "(", ")"), nested(20000, "(", ")"), nested(20000, "not ", ""),
        nested(kMaxFilterNesting, "(not ", ")")}) {
    auto parsed = Filter::Parse(f);
    ASSERT_FALSE(parsed.ok());
    EXPECT_NE(parsed.status().message().find("nested deeper than 64"), std::string::npos)
        << parsed.status().ToString();
  }
  auto many = Filter::Parse(chain(kMaxFilterComparisons + 1));
  ASSERT_FALSE(many.ok());
  EXPECT_NE(many.status().message().find("more than 100 comparisons"), std::string::npos);
}

TEST(FilterTest, TheTopLevelConjunctionNarrowsTheKeyRange) {
  auto r = Filter::Parse("PartitionKey eq 'x' and RowKey ge 'a' and RowKey lt 'm' and n eq 5");
  ASSERT_TRUE(r.ok());
  FilterKeyRange k = r->KeyRange();
  EXPECT_EQ(k.partition_key, "x");
  EXPECT_EQ(k.row_key_from, "a");
  EXPECT_EQ(k.row_key_to, "m");
  EXPECT_FALSE(k.empty);

  k = Filter::Parse("PartitionKey eq 'x' or RowKey eq 'a'")->KeyRange();
  EXPECT_FALSE(k.partition_key) << "a disjunction narrows nothing";
  EXPECT_FALSE(k.row_key_from);
  k = Filter::Parse("RowKey eq 'b' and (PartitionKey eq 'x')")->KeyRange();
  EXPECT_EQ(k.partition_key, "x");
  EXPECT_EQ(k.row_key_from, "b");
  EXPECT_EQ(k.row_key_to, "b");
  EXPECT_TRUE(Filter::Parse("PartitionKey eq 'x' and PartitionKey eq 'y'")->KeyRange().empty);
  EXPECT_TRUE(Filter::Parse("RowKey gt 'm' and RowKey lt 'a'")->KeyRange().empty);
  EXPECT_TRUE(Filter::Parse("RowKey eq 5")->KeyRange().empty);
  EXPECT_FALSE(Filter::Parse("not (PartitionKey eq 'x')")->KeyRange().partition_key);
}

TEST(FilterTest, ToStringParsesBackToTheSameFilter) {
  for (const char* text : {"name eq 'it''s'", "n ge -3 and not (big lt 7L)",
                           "price eq 0.10000000000000001 or raw eq X'00FF'",
                           "when le datetime'2023-11-14T22:13:20.1234567Z'",
                           "id ne guid'0f8fad5b-d9cb-469f-a165-70867728950e' and ok eq false"}) {
    auto f = Filter::Parse(text);
    ASSERT_TRUE(f.ok()) << text << ": " << f.status().ToString();
    auto again = Filter::Parse(f->ToString());
    ASSERT_TRUE(again.ok()) << f->ToString();
    EXPECT_EQ(again->ToString(), f->ToString());
  }
}

// --- The property-based check ----------------------------------------------

// A reference expression, printed as filter text and evaluated here without
// the library's evaluator.
struct Ref {
  enum Kind { kCompare, kNot, kAnd, kOr } kind = kCompare;
  std::string property;
  int op = 0;  // eq ne gt ge lt le
  PropertyValue literal;
  std::unique_ptr<Ref> a, b;
};

const char* kNames[] = {"a", "b", "c", "PartitionKey", "RowKey"};

PropertyValue RandomValue(std::mt19937_64& rng) {
  static const std::string kStrings[] = {"", "x", "y", "O'k", "xy", "\xc3\xa9"};
  switch (rng() % 8) {
    case 0: return kStrings[rng() % 6];
    case 1: return Binary{std::string(rng() % 3, static_cast<char>(rng() % 3))};
    case 2: return rng() % 2 == 0;
    case 3: return At(static_cast<int64_t>(rng() % 3));
    case 4: {
      static const double kDoubles[] = {-1.5, 0.0, 2.5, 1e300,
                                        std::numeric_limits<double>::quiet_NaN()};
      return kDoubles[rng() % 5];
    }
    case 5: {
      static const char* kGuids[] = {"00000000-0000-0000-0000-000000000001",
                                     "00000000-0000-0000-0000-00000000000A",
                                     "00000000-0000-0000-0000-00000000000a"};
      return Guid{kGuids[rng() % 3]};
    }
    case 6: return static_cast<int32_t>(rng() % 5) - 2;
    default: return static_cast<int64_t>(rng() % 5) - 2;
  }
}

std::unique_ptr<Ref> RandomRef(std::mt19937_64& rng, int depth) {
  auto r = std::make_unique<Ref>();
  const int pick = depth == 0 ? 0 : static_cast<int>(rng() % 4);
  if (pick == 0) {
    r->property = kNames[rng() % 5];
    r->op = static_cast<int>(rng() % 6);
    r->literal = RandomValue(rng);
    if (std::holds_alternative<double>(r->literal) && std::isnan(std::get<double>(r->literal)))
      r->literal = 1.0;  // NaN has no literal
    return r;
  }
  r->kind = static_cast<Ref::Kind>(pick);
  r->a = RandomRef(rng, depth - 1);
  if (pick != Ref::kNot) r->b = RandomRef(rng, depth - 1);
  return r;
}

std::string Hex(const std::string& bytes) {
  std::string out;
  char buf[3];
  for (unsigned char c : bytes) {
    std::snprintf(buf, sizeof buf, "%02x", c);
    out += buf;
  }
  return out;
}

std::string LiteralOf(const PropertyValue& v, std::mt19937_64& rng) {
  if (auto* s = std::get_if<std::string>(&v)) {
    std::string out = "'";
    for (char c : *s) out += c == '\'' ? "''" : std::string(1, c);
    return out + "'";
  }
  if (auto* b = std::get_if<Binary>(&v))
    return (rng() % 2 ? "X'" : "binary'") + Hex(b->bytes) + "'";
  if (auto* b = std::get_if<bool>(&v)) return *b ? "true" : "false";
  if (auto* d = std::get_if<DateTime>(&v)) return "datetime'" + FormatDateTime(*d) + "'";
  if (auto* d = std::get_if<double>(&v)) {
    char buf[40];
    std::snprintf(buf, sizeof buf, "%.17g", *d);
    std::string s = buf;
    return s.find_first_of(".e") == std::string::npos ? s + ".0" : s;
  }
  if (auto* g = std::get_if<Guid>(&v)) return "guid'" + g->value + "'";
  if (auto* i = std::get_if<int32_t>(&v)) return std::to_string(*i);
  return std::to_string(std::get<int64_t>(v)) + "L";
}

std::string TextOf(const Ref& r, std::mt19937_64& rng) {
  static const char* kOps[] = {"eq", "ne", "gt", "ge", "lt", "le"};
  static const char* kFlipped[] = {"eq", "ne", "lt", "le", "gt", "ge"};
  switch (r.kind) {
    case Ref::kNot: return "not (" + TextOf(*r.a, rng) + ")";
    case Ref::kAnd: return "(" + TextOf(*r.a, rng) + ") and (" + TextOf(*r.b, rng) + ")";
    case Ref::kOr: return "(" + TextOf(*r.a, rng) + ")  or(" + TextOf(*r.b, rng) + ")";
    case Ref::kCompare: break;
  }
  if (rng() % 4 == 0)  // the value first, the operator turned round
    return LiteralOf(r.literal, rng) + " " + kFlipped[r.op] + " " + r.property;
  return r.property + " " + kOps[r.op] + " " + LiteralOf(r.literal, rng);
}

// -1, 0, 1; nullopt when the two cannot be ordered (other types, NaN).
std::optional<int> ThreeWay(const PropertyValue& x, const PropertyValue& y) {
  if (x.index() != y.index()) return std::nullopt;
  auto sign = [](auto a, auto b) { return a < b ? -1 : (b < a ? 1 : 0); };
  if (auto* s = std::get_if<std::string>(&x)) return sign(*s, std::get<std::string>(y));
  if (auto* b = std::get_if<Binary>(&x)) return sign(b->bytes, std::get<Binary>(y).bytes);
  if (auto* b = std::get_if<bool>(&x)) return sign(int{*b}, int{std::get<bool>(y)});
  if (auto* d = std::get_if<DateTime>(&x))
    return sign(d->time_since_epoch().count(), std::get<DateTime>(y).time_since_epoch().count());
  if (auto* d = std::get_if<double>(&x)) {
    const double e = std::get<double>(y);
    if (std::isnan(*d) || std::isnan(e)) return std::nullopt;
    return sign(*d, e);
  }
  if (auto* g = std::get_if<Guid>(&x)) {
    std::string p = g->value, q = std::get<Guid>(y).value;
    for (char& c : p) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    for (char& c : q) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return sign(p, q);
  }
  if (auto* i = std::get_if<int32_t>(&x)) return sign(*i, std::get<int32_t>(y));
  return sign(std::get<int64_t>(x), std::get<int64_t>(y));
}

bool Reference(const Ref& r, const Entity& e) {
  switch (r.kind) {
    case Ref::kNot: return !Reference(*r.a, e);
    case Ref::kAnd: return Reference(*r.a, e) && Reference(*r.b, e);
    case Ref::kOr: return Reference(*r.a, e) || Reference(*r.b, e);
    case Ref::kCompare: break;
  }
  std::optional<PropertyValue> v;
  if (r.property == "PartitionKey")
    v = e.partition_key();
  else if (r.property == "RowKey")
    v = e.row_key();
  else if (const PropertyValue* p = e.Find(r.property))
    v = *p;
  if (!v) return false;
  const std::optional<int> c = ThreeWay(*v, r.literal);
  if (!c) return false;
  const bool results[] = {*c == 0, *c != 0, *c > 0, *c >= 0, *c < 0, *c <= 0};
  return results[r.op];
}

Entity RandomEntity(std::mt19937_64& rng) {
  static const char* kKeys[] = {"", "x", "y", "xy"};
  Entity e(kKeys[rng() % 4], kKeys[rng() % 4]);
  for (const char* name : {"a", "b", "c"})
    if (rng() % 4 != 0) e.Set(name, RandomValue(rng));
  return e;
}

TEST(FilterTest, AgreesWithAStraightforwardReferenceOnRandomInput) {
  std::mt19937_64 rng(20261125);
  int matched = 0;
  for (int i = 0; i < 20000; ++i) {
    const auto ref = RandomRef(rng, static_cast<int>(rng() % 4));
    const std::string text = TextOf(*ref, rng);
    auto f = Filter::Parse(text);
    ASSERT_TRUE(f.ok()) << text << ": " << f.status().ToString();
    for (int j = 0; j < 5; ++j) {
      const Entity e = RandomEntity(rng);
      const bool expected = Reference(*ref, e);
      ASSERT_EQ(f->Matches(e), expected)
          << text << " on " << e.partition_key() << "/" << e.row_key();
      matched += expected;
    }
  }
  // Both outcomes are common: the check is not vacuous.
  EXPECT_GT(matched, 5000);
  EXPECT_LT(matched, 95000);
}

}  // namespace
}  // namespace blobtable
