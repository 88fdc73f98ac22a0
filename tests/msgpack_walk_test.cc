// SPDX-License-Identifier: Apache-2.0
// mp::Walk's own msgpack reader (util/msgpack_util.h) against msgpack-cxx,
// the library it replaced for reading: every type code in every width reads
// to the same items, and every cut, unknown byte, over-deep nesting and
// trailing byte is refused as the library refuses it. The fuzz target
// msgpack_walk holds it to the library on any bytes.
#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

#include "tests/msgpack_oracle.h"
#include "util/msgpack_util.h"

namespace blobtable::internal::mp {
namespace {

using testing::ItemsOf;
using testing::OracleItems;

// Values packed in each of msgpack's encodings (msgpack-cxx picks the
// smallest one for a plain pack(), so the widths are asked for by name).
std::vector<std::string> EveryEncoding() {
  std::vector<std::string> out;
  auto packed = [&](auto fill) {
    msgpack::sbuffer buf;
    msgpack::packer<msgpack::sbuffer> pk(&buf);
    fill(pk);
    out.emplace_back(buf.data(), buf.size());
  };
  using Pk = msgpack::packer<msgpack::sbuffer>;
  packed([](Pk& p) { p.pack_nil(); });
  packed([](Pk& p) { p.pack_true(); });
  packed([](Pk& p) { p.pack_false(); });
  packed([](Pk& p) { p.pack_fix_uint8(7); });  // positive fixint
  packed([](Pk& p) { p.pack_fix_int8(-5); });  // negative fixint
  packed([](Pk& p) { p.pack_uint8(200); });
  packed([](Pk& p) { p.pack_fix_uint16(65000); });
  packed([](Pk& p) { p.pack_fix_uint32(4000000000u); });
  for (uint64_t v : {uint64_t{42}, uint64_t{INT64_MAX}, uint64_t{INT64_MAX} + 1, UINT64_MAX})
    packed([v](Pk& p) { p.pack_fix_uint64(v); });  // 8 bytes whatever the value
  for (int64_t v : {int64_t{-100}, int64_t{100}, int64_t{-30000}, int64_t{-2000000000}, INT64_MIN,
                    int64_t{42}}) {
    packed([v](Pk& p) { p.pack_fix_int8(static_cast<int8_t>(v)); });
    packed([v](Pk& p) { p.pack_fix_int16(static_cast<int16_t>(v)); });
    packed([v](Pk& p) { p.pack_fix_int32(static_cast<int32_t>(v)); });
    packed([v](Pk& p) { p.pack_fix_int64(v); });
  }
  packed([](Pk& p) { p.pack_float(1.5f); });
  packed([](Pk& p) { p.pack_double(-2.25e300); });
  for (size_t n : {size_t{0}, size_t{31}, size_t{32}, size_t{255}, size_t{256}, size_t{65536}}) {
    const std::string s(n, 's');
    packed([&](Pk& p) { p.pack_str(static_cast<uint32_t>(n)).pack_str_body(s.data(), n); });
    packed([&](Pk& p) { p.pack_bin(static_cast<uint32_t>(n)).pack_bin_body(s.data(), n); });
  }
  for (size_t n : {size_t{1}, size_t{2}, size_t{4}, size_t{8}, size_t{16}, size_t{3}, size_t{300},
                   size_t{70000}}) {
    const std::string s(n, 'e');
    packed([&](Pk& p) { p.pack_ext(n, 9).pack_ext_body(s.data(), n); });
  }
  for (uint32_t n : {0u, 15u, 16u, 65536u}) {
    packed([n](Pk& p) {
      p.pack_array(n);
      for (uint32_t i = 0; i < n; ++i) p.pack(i % 3 == 0 ? -1 : 1);
    });
    packed([n](Pk& p) {
      p.pack_map(n);
      for (uint32_t i = 0; i < n; ++i) p.pack(std::to_string(i)).pack_nil();
    });
  }
  packed([](Pk& p) {  // nesting of both kinds, empty ones among them
    p.pack_array(3);
    p.pack_map(2).pack("a").pack_array(0).pack("b").pack_map(1).pack(1).pack_array(1).pack(2);
    p.pack_map(0);
    p.pack_array(2).pack("x").pack_array(1).pack_array(1).pack(true);
  });
  return out;
}

TEST(MsgpackWalk, ReadsEveryEncodingAsMsgpackCxxDoes) {
  for (const std::string& bytes : EveryEncoding()) {
    SCOPED_TRACE(::testing::PrintToString(bytes.substr(0, 8)));
    auto ours = ItemsOf(bytes);
    ASSERT_TRUE(ours.ok()) << ours.status().ToString();
    auto theirs = OracleItems(bytes);
    ASSERT_TRUE(theirs.has_value());
    EXPECT_EQ(*ours, *theirs);
  }
}

TEST(MsgpackWalk, RefusesEveryCutAsCutShort) {
  // msgpack is prefix-free: no proper prefix of a value is a whole value.
  for (const std::string& bytes : EveryEncoding()) {
    if (bytes.size() > 4096) continue;  // the big ones' prefixes add time, not cases
    for (size_t n = 0; n < bytes.size(); ++n) {
      auto cut = ItemsOf(bytes.substr(0, n));
      ASSERT_TRUE(cut.status().IsCorruption()) << n;
      EXPECT_NE(cut.status().message().find("cut short"), std::string::npos)
          << cut.status().ToString();
    }
  }
}

TEST(MsgpackWalk, RefusesTheUnusedCodeTrailingBytesAndNestingPastTheLimit) {
  auto unused = ItemsOf(std::string("\x91\xc1", 2));
  EXPECT_NE(unused.status().message().find("not a valid msgpack value"), std::string::npos);
  auto trailing = ItemsOf(std::string("\x01\x02", 2));
  EXPECT_NE(trailing.status().message().find("trailing bytes"), std::string::npos);
  const std::string deepest = std::string(Path::kMaxDepth, '\x91') + '\x01';
  EXPECT_TRUE(ItemsOf(deepest).ok());
  EXPECT_TRUE(OracleItems(deepest).has_value());  // the fuzz target's limits agree
  EXPECT_FALSE(OracleItems('\x91' + deepest).has_value());
  auto deeper = ItemsOf('\x91' + deepest);
  EXPECT_NE(deeper.status().message().find("nested too deep"), std::string::npos)
      << deeper.status().ToString();
}

TEST(MsgpackWalk, AClaimedSizeBeyondTheBytesIsCutShortNotAnAllocation) {
  // An array32 of 4 billion, a map32 of 4 billion pairs, a str32 of 4 GB:
  // each refused at the first missing byte.
  for (const char* head : {"\xdd\xff\xff\xff\xff\x01", "\xdf\xff\xff\xff\xff\x01\x01",
                           "\xdb\xff\xff\xff\xff"
                           "abc"}) {
    auto got = ItemsOf(std::string(head));
    EXPECT_NE(got.status().message().find("cut short"), std::string::npos)
        << got.status().ToString();
  }
}

TEST(MsgpackWalk, SignedEncodingsOfNonNegativeValuesReadAsUnsigned) {
  msgpack::sbuffer buf;
  msgpack::packer<msgpack::sbuffer>(&buf).pack_fix_int32(12);
  Item seen;
  ASSERT_TRUE(Walk(std::string_view(buf.data(), buf.size()), "v", [&](const Path&, const Item& it) {
                seen = it;
              }).ok());
  EXPECT_EQ(seen.kind, Item::kUInt);
  EXPECT_EQ(seen.UInt("v"), 12u);
}

// Reader, the decoders' sequential reader: typed reads, whole values
// skipped with everything nested in them, and what Walk refuses refused.
TEST(MsgpackReader, ReadsInOrderSkipsWholeValuesAndRefusesWhatWalkRefuses) {
  msgpack::sbuffer buf;
  msgpack::packer<msgpack::sbuffer> pk(&buf);
  pk.pack_array(4);
  pk.pack(std::string("name"));
  pk.pack_map(1);  // skipped whole: a key and a nested array
  pk.pack(1);
  pk.pack_array(2);
  pk.pack(2);
  pk.pack(std::string("x"));
  pk.pack(-5);
  pk.pack_array(0);
  const std::string value(buf.data(), buf.size());
  Reader r(value);
  EXPECT_EQ(r.Array("top"), 4u);
  EXPECT_EQ(r.Str("name"), "name");
  r.Skip(1);
  EXPECT_EQ(r.Int("n"), -5);
  r.Skip(1);
  r.ExpectEnd();  // nothing left: does not throw

  auto refusal = [](const std::string& bytes, auto read) -> std::string {
    Reader in(bytes);
    try {
      read(in);
    } catch (const FormatError& e) {
      return e.message;
    }
    return "";
  };
  EXPECT_EQ(refusal(value, [](Reader& in) { in.Map("top"); }), "top is not a map");
  EXPECT_EQ(refusal(value, [](Reader& in) { in.Skip(1), in.ExpectEnd(); }), "");
  EXPECT_EQ(refusal(value + "x", [](Reader& in) { in.Skip(1), in.ExpectEnd(); }),
            "trailing bytes after the msgpack value");
  EXPECT_EQ(refusal(value.substr(0, value.size() - 1), [](Reader& in) { in.Skip(1); }), kCutShort);
  EXPECT_EQ(refusal("\xc1", [](Reader& in) { in.Next(); }), kNotMsgpack);
  // Nesting: as deep as Walk reads is skipped, one level more is refused.
  auto nested = [](int depth) { return std::string(depth, '\x91') + '\x01'; };
  EXPECT_EQ(refusal(nested(Path::kMaxDepth), [](Reader& in) { in.Skip(1); }), "");
  EXPECT_EQ(refusal(nested(Path::kMaxDepth + 1), [](Reader& in) { in.Skip(1); }),
            "nested too deep");
}

// Reader's typed reads take the common tags without building an Item: for
// every encoding, whole or cut, each answers what Next() and the Item's own
// typed view answer (the value, or the same refusal) and leaves the reader
// at the same place.
TEST(MsgpackReader, TypedReadsAnswerAsTheItemDoesForEveryEncodingWholeOrCut) {
  auto text = [](const Item& it) {
    return std::to_string(it.kind) + ":" + std::to_string(it.u) + ":" + std::to_string(it.i) + ":" +
           std::string(it.bytes) + ":" + std::to_string(it.size);
  };
  // What `read` answers on `bytes`, then the item after it (or the refusal).
  auto outcome = [&](const std::string& bytes, auto read) -> std::string {
    Reader in(bytes);
    try {
      std::string out = read(in);
      return out + " then " + text(in.Next());
    } catch (const FormatError& e) {
      return "refused: " + e.message;
    }
  };
  using Typed = std::function<std::string(Reader&)>;
  struct Pair {
    const char* name;
    Typed fast, slow;
  };
  const std::vector<Pair> reads = {
      {"Array", [](Reader& r) { return std::to_string(r.Array("f")); },
       [](Reader& r) {
         const Item it = r.Next();
         if (it.kind != Item::kArray) throw FormatError{"f is not an array"};
         return std::to_string(it.size);
       }},
      {"Str", [](Reader& r) { return std::string(r.Str("f")); },
       [](Reader& r) { return std::string(r.Next().Str("f")); }},
      {"Bin", [](Reader& r) { return std::string(r.Bin("f")); },
       [](Reader& r) { return std::string(r.Next().Bin("f")); }},
      {"Int", [](Reader& r) { return std::to_string(r.Int("f")); },
       [](Reader& r) { return std::to_string(r.Next().Int("f")); }},
      {"UInt", [](Reader& r) { return std::to_string(r.UInt("f")); },
       [](Reader& r) { return std::to_string(r.Next().UInt("f")); }},
  };
  size_t compared = 0;
  for (const std::string& whole : EveryEncoding()) {
    std::vector<std::string> cases = {whole + '\x07'};  // a fixint after it shows the place
    for (size_t cut = 0; cut < whole.size() && cut <= 12; ++cut)
      cases.push_back(whole.substr(0, cut));
    cases.push_back(whole.substr(0, whole.size() - 1));
    for (const std::string& bytes : cases)
      for (const Pair& read : reads) {
        SCOPED_TRACE(std::string(read.name) + " of " +
                     ::testing::PrintToString(bytes.substr(0, 8)) + ", " +
                     std::to_string(bytes.size()) + " bytes");
        EXPECT_EQ(outcome(bytes, read.fast), outcome(bytes, read.slow));
        ++compared;
      }
  }
  EXPECT_GT(compared, 1000u);
}

}  // namespace
}  // namespace blobtable::internal::mp
