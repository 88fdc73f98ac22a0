// SPDX-License-Identifier: Apache-2.0
// Entity validation, DateTime text form, and the msgpack codec.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "blobtable/entity.h"
#include "blobtable/entity_view.h"
#include "model/entity_codec.h"
#include "util/msgpack_util.h"
#include "util/utf8.h"

namespace blobtable {
namespace {
using namespace internal;

// An entity body packed by hand, as another writer could store one: the
// header of `format` with `timestamp`, then [name, type tag, string value]
// triples.
struct RawProperty {
  std::string name;
  int64_t type;
  std::string value;
};
std::string RawEntity(int format, int64_t timestamp, const std::vector<RawProperty>& props) {
  msgpack::sbuffer buf;
  msgpack::packer<msgpack::sbuffer> pk(&buf);
  pk.pack_array(6);
  pk.pack(std::string("bt.entity"));
  pk.pack(format);
  pk.pack(std::string("p"));
  pk.pack(std::string("r"));
  pk.pack(timestamp);
  pk.pack_array(static_cast<uint32_t>(props.size()));
  for (const RawProperty& p : props) {
    pk.pack_array(3);
    pk.pack(p.name);
    pk.pack(p.type);
    pk.pack(p.value);
  }
  return std::string(buf.data(), buf.size());
}

Entity Sample() {
  Entity e("pk \xc3\xa9", "rk.1");
  e.Set("s", std::string("text \xe2\x82\xac"))
      .Set("b", Binary{std::string("\0\xff", 2)})
      .Set("flag", true)
      .Set("when", *ParseDateTime("2024-05-01T12:34:56.1234567Z"))
      .Set("d", 3.25)
      .Set("g", Guid{"0f8fad5b-d9cb-469f-a165-70867728950e"})
      .Set("i32", int32_t{-7})
      .Set("i64", int64_t{9007199254740993});
  e.set_timestamp(*ParseDateTime("2026-01-02T03:04:05Z"));
  return e;
}

void ExpectInvalid(const Entity& e, const std::string& mentions) {
  Status s = ValidateEntity(e);
  EXPECT_EQ(s.code(), Code::kInvalidArgument) << s.ToString();
  EXPECT_NE(s.message().find(mentions), std::string::npos) << s.message();
}

TEST(EntityValidation, AcceptsAllEightTypes) { EXPECT_TRUE(ValidateEntity(Sample()).ok()); }

TEST(EntityValidation, ForbiddenKeyCharactersAreNamed) {
  for (const std::string& bad :
       {std::string("a/b"), std::string("a\\b"), std::string("a#b"), std::string("a?b"),
        std::string("a\tb"), std::string("a\0b", 3), std::string("a\x7f"), std::string("a\xc2\x80"),
        std::string("a\xc2\x9f")}) {
    ExpectInvalid(Entity("pk", bad), "RowKey");
    ExpectInvalid(Entity(bad, "rk"), "PartitionKey");
  }
  EXPECT_TRUE(
      ValidateEntity(Entity("spaces, %, . and ..", "\xc2\xa0 non-ASCII \xe4\xb8\xad")).ok());
  ExpectInvalid(Entity("pk", "\xff\xfe"), "not valid UTF-8");
  ExpectInvalid(Entity(std::string(1025, 'k'), "rk"), "1024");
}

TEST(EntityValidation, PropertyRules) {
  ExpectInvalid(Entity("p", "r").Set("1abc", 1), "'1abc'");
  ExpectInvalid(Entity("p", "r").Set("has space", 1), "'has space'");
  ExpectInvalid(Entity("p", "r").Set("", 1), "property name");
  ExpectInvalid(Entity("p", "r").Set("PartitionKey", 1), "reserved");
  ExpectInvalid(Entity("p", "r").Set("Timestamp", 1), "reserved");
  ExpectInvalid(Entity("p", "r").Set(std::string(256, 'n'), 1), "255");
  EXPECT_TRUE(ValidateEntity(Entity("p", "r").Set("_ok_9", 1)).ok());
  Entity many("p", "r");
  for (int i = 0; i < 252; ++i) many.Set("p" + std::to_string(i), i);
  EXPECT_TRUE(ValidateEntity(many).ok());
  many.Set("one_more", 1);
  ExpectInvalid(many, "252");
}

TEST(EntityValidation, ValueSizes) {
  EXPECT_TRUE(ValidateEntity(Entity("p", "r").Set("s", std::string(32768, 'x'))).ok());
  ExpectInvalid(Entity("p", "r").Set("s", std::string(32769, 'x')), "'s'");
  // Measured in UTF-16 units as Azure does: a 4-byte UTF-8 char counts 2.
  std::string emoji;
  for (int i = 0; i < 16385; ++i) emoji += "\xf0\x9f\x98\x80";
  ExpectInvalid(Entity("p", "r").Set("e", emoji), "32770");
  EXPECT_TRUE(ValidateEntity(Entity("p", "r").Set("b", Binary{std::string(65536, 'b')})).ok());
  ExpectInvalid(Entity("p", "r").Set("b", Binary{std::string(65537, 'b')}), "65537");
  ExpectInvalid(Entity("p", "r").Set("g", Guid{"not-a-guid"}), "GUID");
  ExpectInvalid(Entity("p", "r").Set("s", std::string("\xc3")), "UTF-8");
  ExpectInvalid(Entity("p", "r").Set("t", DateTime(Ticks(INT64_MIN / 2))), "1601");
}

TEST(EntityValidation, EncodedEntityOverOneMebibyteIsRefused) {
  Entity big("p", "r");
  for (int i = 0; i < 17; ++i) big.Set("b" + std::to_string(i), Binary{std::string(65536, 'x')});
  ASSERT_TRUE(ValidateEntity(big).ok());
  auto body = EncodeEntity(big);
  EXPECT_EQ(body.status().code(), Code::kInvalidArgument);
  EXPECT_NE(body.status().message().find("1 MiB"), std::string::npos);
}

template <typename V>
concept Settable = requires(Entity x, V v) {
  x.Set("x", v);
};

TEST(EntitySet, EachCppTypeMapsToOneEdmType) {
  Entity e("p", "r");
  const std::string s = "text";
  e.Set("sv", std::string_view("view")).Set("cs", "chars").Set("st", s);
  e.Set("i", 5).Set("i16", int16_t{-2}).Set("u8", uint8_t{200}).Set("u16", uint16_t{60000});
  e.Set("u", 3u).Set("l", int64_t{1} << 40).Set("z", size_t{7}).Set("u64", uint64_t{1} << 62);
  e.Set("f", 1.5f).Set("d", 2.5).Set("b", true);
  e.Set("bytes", std::vector<uint8_t>{0, 255});
  const auto now = std::chrono::system_clock::now();
  e.Set("now", now).Set("sec", std::chrono::time_point_cast<std::chrono::seconds>(now));
  auto type = [&](const char* name) { return TypeOf(*e.Find(name)); };
  for (const char* n : {"sv", "cs", "st"}) EXPECT_EQ(type(n), EdmType::kString) << n;
  for (const char* n : {"i", "i16", "u8", "u16"}) EXPECT_EQ(type(n), EdmType::kInt32) << n;
  for (const char* n : {"u", "l", "z", "u64"}) EXPECT_EQ(type(n), EdmType::kInt64) << n;
  for (const char* n : {"f", "d"}) EXPECT_EQ(type(n), EdmType::kDouble) << n;
  EXPECT_EQ(type("b"), EdmType::kBoolean);
  EXPECT_EQ(type("bytes"), EdmType::kBinary);
  EXPECT_EQ(type("now"), EdmType::kDateTime);
  EXPECT_EQ(*e.FindAs<int32_t>("u16"), 60000);
  EXPECT_EQ(*e.FindAs<std::string>("cs"), "chars");
  EXPECT_EQ(e.FindAs<Binary>("bytes")->bytes, std::string("\0\xff", 2));
  EXPECT_EQ(*e.FindAs<DateTime>("now"), std::chrono::floor<Ticks>(now));
  EXPECT_TRUE(ValidateEntity(e).ok());
  EXPECT_TRUE(e.set_error().empty());
}

TEST(EntitySet, AValueNoTypeHoldsMakesTheEntityInvalidInsteadOfThrowing) {
  Entity e("p", "r");
  e.Set("big", uint64_t{1} << 63).Set("ok", 1);
  EXPECT_EQ(e.Find("big"), nullptr);
  Status s = ValidateEntity(e);
  EXPECT_EQ(s.code(), Code::kInvalidArgument);
  EXPECT_NE(s.message().find("'big'"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("9223372036854775808"), std::string::npos) << s.message();
  const char* null_text = nullptr;
  Entity n("p", "r");
  n.Set("s", null_text);
  EXPECT_NE(ValidateEntity(n).message().find("null const char*"), std::string::npos);
  // What does not compile: a null pointer literal, a char.
  static_assert(!Settable<std::nullptr_t>);
  static_assert(!Settable<char>);
  static_assert(Settable<int8_t> && Settable<const char*> && Settable<std::string_view>);
}

TEST(EntityGetAs, WidensWithoutLoss) {
  Entity e("p", "r");
  e.Set("i32", int32_t{-5}).Set("i64", int64_t{1} << 40).Set("d", 2.5).Set("s", "x");
  e.Set("pos", int32_t{9}).Set("bin", Binary{"ab"});
  EXPECT_EQ(e.GetAs<int64_t>("i32"), -5);  // Int32 read as int64
  EXPECT_EQ(e.GetAs<int64_t>("i64"), int64_t{1} << 40);
  EXPECT_EQ(e.GetAs<double>("i32"), -5.0);
  EXPECT_EQ(e.GetAs<int32_t>("i64"), std::nullopt);  // narrowing: never
  EXPECT_EQ(e.GetAs<int64_t>("d"), std::nullopt);
  EXPECT_EQ(e.GetAs<double>("i64"), std::nullopt);
  EXPECT_EQ(e.GetAs<uint64_t>("pos"), 9u);
  EXPECT_EQ(e.GetAs<uint64_t>("i32"), std::nullopt);  // negative
  EXPECT_EQ(e.GetAs<std::string>("s"), "x");
  EXPECT_EQ(e.GetAs<std::string>("i32"), std::nullopt);
  EXPECT_EQ(e.GetAs<std::vector<uint8_t>>("bin"), (std::vector<uint8_t>{'a', 'b'}));
  EXPECT_EQ(e.GetAs<int64_t>("missing"), std::nullopt);
  EXPECT_EQ(e.GetAs<int64_t>("missing").value_or(0), 0);
}

TEST(DateTimeText, FormatsAndParses) {
  auto t = ParseDateTime("2024-05-01T12:34:56.1234567Z");
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(FormatDateTime(*t), "2024-05-01T12:34:56.1234567Z");
  EXPECT_EQ(FormatDateTime(*ParseDateTime("2024-05-01T12:34:56+02:00")),
            "2024-05-01T10:34:56.0000000Z");
  EXPECT_EQ(FormatDateTime(*ParseDateTime("1601-01-01T00:00:00Z")), "1601-01-01T00:00:00.0000000Z");
  EXPECT_EQ(FormatDateTime(*ParseDateTime("1969-12-31T23:59:59.9Z")),
            "1969-12-31T23:59:59.9000000Z");
  for (const char* bad : {"2024-05-01", "2024-13-01T00:00:00Z", "2024-02-30T00:00:00Z",
                          "2024-05-01T12:00:00", "1600-12-31T23:59:59Z", "2024-05-01T25:00:00Z",
                          "2024-05-01T12:00:00.Z", "2024-05-01T12:00:00Zjunk"})
    EXPECT_FALSE(ParseDateTime(bad).ok()) << bad;
}

TEST(EntityCodec, RoundTripsEveryType) {
  Entity e = Sample();
  auto body = EncodeEntity(e);
  ASSERT_TRUE(body.ok());
  auto back = DecodeEntity(*body, "blob");
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_TRUE(back->SameContent(e));
  EXPECT_EQ(back->timestamp(), e.timestamp());
  // NaN and infinities survive.
  // NaN, infinities, integral values and negative zero stay Doubles, exactly.
  Entity odd("p", "r");
  odd.Set("nan", std::nan("")).Set("inf", -INFINITY).Set("twelve", 12.0).Set("negzero", -0.0);
  odd.Set("huge", 1e300);
  auto odd_back = DecodeEntity(*EncodeEntity(odd), "blob");
  ASSERT_TRUE(odd_back.ok()) << odd_back.status().ToString();
  EXPECT_TRUE(std::isnan(*odd_back->FindAs<double>("nan")));
  EXPECT_EQ(*odd_back->FindAs<double>("inf"), -INFINITY);
  ASSERT_NE(odd_back->FindAs<double>("twelve"), nullptr);
  EXPECT_EQ(*odd_back->FindAs<double>("twelve"), 12.0);
  EXPECT_TRUE(std::signbit(*odd_back->FindAs<double>("negzero")));
  EXPECT_EQ(*odd_back->FindAs<double>("huge"), 1e300);
}

TEST(EntityCodec, ForeignOrCorruptBlobsAreCorruptionNamingTheBlob) {
  std::string good = *EncodeEntity(Sample());
  auto expect_corrupt = [](std::string_view body, const std::string& mentions) {
    auto r = DecodeEntity(body, "t/x/e/-a/-b");
    ASSERT_EQ(r.status().code(), Code::kCorruption) << r.status().ToString();
    EXPECT_NE(r.status().message().find("t/x/e/-a/-b"), std::string::npos);
    EXPECT_NE(r.status().message().find(mentions), std::string::npos) << r.status().message();
  };
  expect_corrupt("", "msgpack");
  expect_corrupt("{\"json\": true}", "");
  expect_corrupt(good.substr(0, good.size() / 2), "");
  expect_corrupt(good + "x", "trailing");
  // Another format version is refused with a clear message, not guessed at.
  expect_corrupt(RawEntity(2, 0, {}), "format 2");
}

TEST(EntityCodec, OutOfRangeTimestampAndUnknownTypeTagAreCorruption) {
  auto body = [](int64_t timestamp, int64_t type_tag) {
    return RawEntity(1, timestamp, {{"x", type_tag, "v"}});
  };
  EXPECT_TRUE(DecodeEntity(body(0, 0), "b").ok());
  EXPECT_EQ(DecodeEntity(body(INT64_MIN, 0), "b").status().code(), Code::kCorruption);
  EXPECT_EQ(DecodeEntity(body(0, int64_t{1} << 32), "b").status().code(), Code::kCorruption);
  EXPECT_EQ(DecodeEntity(body(0, -1), "b").status().code(), Code::kCorruption);
}

// Reading checks what every reader relies on, whoever wrote the entity;
// the limits were checked when blobtable wrote it. An entity past them,
// written by other means, is read, and refused when written back.
TEST(EntityCodec, ReadsCheckTextAndFormsAndLeaveTheLimitsToWrites) {
  auto body = [](std::string name, std::string text, const std::string& guid) {
    return RawEntity(1, 0,
                     {{name, static_cast<int>(EdmType::kString), text},
                      {"g", static_cast<int>(EdmType::kGuid), guid}});
  };
  const std::string guid = "01234567-89ab-cdef-0123-456789abcdef";
  // Past the limits: a name that is no identifier, a string over 32,768 units.
  auto past = DecodeEntity(body("not an identifier", std::string(40000, 'x'), guid), "b");
  ASSERT_TRUE(past.ok()) << past.status().ToString();
  EXPECT_EQ(ValidateEntity(*past).code(), Code::kInvalidArgument);
  // Not text, or not a GUID: Corruption, whoever wrote it.
  for (const std::string& bad :
       {body("s", "caf\xc3", guid), body("s\xff", "x", guid), body("s", "x", "not-a-guid")}) {
    auto r = DecodeEntity(bad, "b");
    EXPECT_EQ(r.status().code(), Code::kCorruption) << r.status().ToString();
  }
}

// DecodeEntityViewPart keeps the keys, the Timestamp and the named
// properties; it checks the whole body's form, and the rules only for what
// it keeps.
TEST(EntityCodec, DecodingInPartKeepsTheNamedPropertiesAndChecksTheWholeForm) {
  const std::string guid = "01234567-89ab-cdef-0123-456789abcdef";
  const std::string body = RawEntity(1, 5,
                                     {{"a", static_cast<int>(EdmType::kString), "x"},
                                      {"bad", static_cast<int>(EdmType::kString), "caf\xc3"},
                                      {"g", static_cast<int>(EdmType::kGuid), guid}});
  std::vector<PropertyView> props;
  auto part = DecodeEntityViewPart(body, "b", {"a", "g"}, props);
  ASSERT_TRUE(part.ok()) << part.status().ToString();
  EXPECT_EQ(part->partition_key(), "p");
  EXPECT_EQ(part->row_key(), "r");
  EXPECT_EQ(part->timestamp().time_since_epoch().count(), 5);
  EXPECT_EQ(part->properties().size(), 2u);
  ASSERT_NE(part->Find("a"), nullptr);
  EXPECT_EQ(part->Find("a")->text(), "x");
  EXPECT_EQ(part->Find("bad"), nullptr);
  EXPECT_EQ(DecodeEntityViewPart(body, "b", {"bad"}, props).status().code(), Code::kCorruption);
  EXPECT_EQ(DecodeEntity(body, "b").status().code(), Code::kCorruption);
  // The form is checked whole: a body cut in a skipped property is refused.
  EXPECT_EQ(
      DecodeEntityViewPart(body.substr(0, body.size() - 3), "b", {"a"}, props).status().code(),
      Code::kCorruption);
  EXPECT_EQ(DecodeEntityViewPart(body + "x", "b", {}, props).status().code(), Code::kCorruption);
}

TEST(EntityCodec, RandomBytesNeverCrash) {
  std::mt19937_64 rng(7);
  std::string good = *EncodeEntity(Sample());
  int decoded = 0;
  for (int i = 0; i < 20000; ++i) {
    std::string body = good;
    // Flip a few random bytes or truncate: every outcome must be a Status.
    int flips = 1 + static_cast<int>(rng() % 4);
    for (int f = 0; f < flips; ++f) body[rng() % body.size()] = static_cast<char>(rng());
    if (rng() % 5 == 0) body.resize(rng() % body.size());
    auto r = DecodeEntity(body, "fuzz");
    if (r.ok()) {
      ++decoded;
      EXPECT_TRUE(ValidateStoredEntity(*r).ok());
    } else {
      EXPECT_EQ(r.status().code(), Code::kCorruption);
    }
  }
  EXPECT_LT(decoded, 20000);
}

}  // namespace
}  // namespace blobtable

namespace blobtable {
namespace {
using namespace internal;

// Lengths count eight ASCII bytes at a time: characters that straddle or
// follow those words still count (and are checked) one by one; the UTF-8
// check ORs words and still sees one stray byte anywhere.
TEST(Utf8, LengthsAreRightAroundTheAsciiFastPath) {
  const std::string e_acute = "\xc3\xa9", clef = "\xf0\x9d\x84\x9e";  // U+00E9, U+1D11E
  for (size_t ascii = 0; ascii <= 17; ++ascii) {
    const std::string s = std::string(ascii, 'a') + e_acute + std::string(ascii, 'b') + clef;
    EXPECT_EQ(Utf8Length(s), static_cast<long>(2 * ascii + 2)) << ascii;
    EXPECT_EQ(Utf16Length(s), static_cast<long>(2 * ascii + 3)) << ascii;
    EXPECT_TRUE(IsValidUtf8(s));
    EXPECT_FALSE(IsValidUtf8(std::string(ascii, 'a') + "\xc3" + std::string(8, 'b'))) << ascii;
    EXPECT_FALSE(IsValidUtf8(std::string(ascii, 'a') + "\xed\xa0\x80")) << ascii;  // a surrogate
  }
  // IsValidUtf8 ORs whole words (the last overlapping): a lone continuation
  // byte anywhere in a string of any length is still seen.
  for (size_t n = 1; n <= 20; ++n) {
    EXPECT_TRUE(IsValidUtf8(std::string(n, 'a'))) << n;
    for (size_t at = 0; at < n; ++at) {
      std::string s(n, 'a');
      s[at] = '\x80';
      EXPECT_FALSE(IsValidUtf8(s)) << n << " " << at;
    }
  }
}

// A view decoded from a body holds what DecodeEntity returns: every type,
// its accessors answering for their own type only, Find by name, and
// ToEntity a copy equal to the decoded entity.
TEST(EntityView, ADecodedViewHoldsWhatDecodeEntityReturns) {
  Entity e("pk", "rk");
  e.Set("s", std::string("text")).Set("bin", Binary{std::string("\0\1", 2)}).Set("t", true);
  e.Set("d", 2.5).Set("i32", int32_t{-7}).Set("i64", int64_t{1} << 40);
  e.Set("g", Guid{"0f8fad5b-d9cb-469f-a165-70867728950e"});
  e.Set("when", DateTime(Ticks(123456789)));
  e.set_timestamp(DateTime(Ticks(987654321)));
  const std::string body = *EncodeEntity(e);
  std::vector<PropertyView> props;
  auto view = DecodeEntityView(body, "blob", "\"etag\"", props);
  ASSERT_TRUE(view.ok()) << view.status().ToString();
  EXPECT_EQ(view->partition_key(), "pk");
  EXPECT_EQ(view->row_key(), "rk");
  EXPECT_EQ(view->etag(), "\"etag\"");
  EXPECT_EQ(view->timestamp(), e.timestamp());
  ASSERT_EQ(view->properties().size(), 8u);
  EXPECT_EQ(view->Find("s")->text(), "text");
  EXPECT_EQ(view->Find("s")->bytes(), "");  // not a Binary
  EXPECT_EQ(view->Find("bin")->bytes(), std::string("\0\1", 2));
  EXPECT_TRUE(view->Find("t")->boolean());
  EXPECT_EQ(view->Find("d")->number(), 2.5);
  EXPECT_EQ(view->Find("d")->integer(), 0);  // not an integer
  EXPECT_EQ(view->Find("i32")->integer(), -7);
  EXPECT_EQ(view->Find("i64")->integer(), int64_t{1} << 40);
  EXPECT_EQ(view->Find("g")->text(), "0f8fad5b-d9cb-469f-a165-70867728950e");
  EXPECT_EQ(view->Find("when")->date_time(), DateTime(Ticks(123456789)));
  EXPECT_EQ(view->Find("missing"), nullptr);
  const Entity copy = view->ToEntity();
  EXPECT_TRUE(copy.SameContent(e));
  EXPECT_EQ(copy.etag(), "\"etag\"");
  for (const auto& [name, value] : e.properties())
    EXPECT_EQ(PropertyView(name, value).ToValue(), value) << name;
  // Damage is refused as DecodeEntity refuses it.
  std::string bad = body;
  bad[bad.find("text")] = '\xff';
  EXPECT_EQ(DecodeEntityView(bad, "blob", "", props).status().code(), Code::kCorruption);
}

}  // namespace
}  // namespace blobtable
