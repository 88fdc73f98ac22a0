// SPDX-License-Identifier: Apache-2.0
// Blob naming: property-based checks over random keys (round trip, prefix
// containment, order), plus the fixed examples docs/data-model.md#blob-naming documents.
#include "model/blob_naming.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include "blobtable/entity.h"

namespace blobtable::internal::naming {
namespace {

// Random valid keys: a mix of letters, digits, punctuation (including '%',
// '.', space, '@', '_', '~', '0'), and multi-byte UTF-8, sometimes empty.
std::string RandomKey(std::mt19937_64& rng, size_t max_len) {
  static const std::vector<std::string> kAtoms = {"a",
                                                  "z",
                                                  "A",
                                                  "Z",
                                                  "0",
                                                  "1",
                                                  "9",
                                                  " ",
                                                  ".",
                                                  "..",
                                                  "%",
                                                  "%2F",
                                                  "-",
                                                  "_",
                                                  "~",
                                                  "@",
                                                  "!",
                                                  "'",
                                                  "(",
                                                  "[",
                                                  "]",
                                                  "{",
                                                  "}",
                                                  "|",
                                                  "^",
                                                  "`",
                                                  ":",
                                                  ";",
                                                  "=",
                                                  "+",
                                                  ",",
                                                  "$",
                                                  "&",
                                                  "*",
                                                  "\xc3\xa9",
                                                  "\xe2\x82\xac",
                                                  "\xf0\x9f\x98\x80",
                                                  "\xe4\xb8\xad",
                                                  "\xc2\xa0",
                                                  "\x7e"};
  std::uniform_int_distribution<size_t> len(0, max_len), pick(0, kAtoms.size() - 1);
  std::string key;
  size_t n = len(rng);
  while (key.size() < n) key += kAtoms[pick(rng)];
  return key;
}

TEST(BlobNaming, DocumentedExamples) {
  EXPECT_EQ(EncodeKey("order-1"), "order02D1");
  EXPECT_EQ(EncodeKey("a b"), "a020b");
  EXPECT_EQ(EncodeKey("."), "02E");
  EXPECT_EQ(EncodeKey(".."), "02E02E");
  EXPECT_EQ(EncodeKey("%"), "025");
  EXPECT_EQ(EncodeKey("0"), "030");
  EXPECT_EQ(EncodeKey("\xc3\xa9"), "~C3~A9");  // é
  EXPECT_EQ(EncodeKey("_"), "_5F");
  EXPECT_EQ(EncodeKey("@"), "@40");
  EXPECT_EQ(*EntityBlobName("Orders", "customer 42", "order-1"),
            "t/orders/e/-customer02042/-order02D1");
  EXPECT_EQ(*EntityBlobName("orders", "", ""), "t/orders/e/-/-");
  EXPECT_EQ(*LockBlobName("Orders", "customer 42"), "t/orders/l/-customer02042");
}

TEST(BlobNaming, RandomKeysRoundTripStayInPrefixAndKeepOrder) {
  std::mt19937_64 rng(20261122);  // fixed seed: deterministic
  struct Named {
    std::string pk, rk, name;
  };
  std::vector<Named> all;
  for (int i = 0; i < 3000; ++i) {
    std::string pk = RandomKey(rng, i % 10 == 0 ? 0 : 12), rk = RandomKey(rng, 20);
    ASSERT_TRUE(ValidateKey(pk, "PartitionKey").ok());
    ASSERT_TRUE(ValidateKey(rk, "RowKey").ok());
    auto name = EntityBlobName("things", pk, rk);
    ASSERT_TRUE(name.ok()) << name.status().ToString();
    // Inside the table's and the partition's prefix; no dot segments,
    // nothing a service would normalise.
    EXPECT_EQ(name->rfind(PartitionPrefix("things", pk), 0), 0u);
    EXPECT_EQ(name->find("/./"), std::string::npos);
    EXPECT_EQ(name->find("/../"), std::string::npos);
    EXPECT_EQ(name->find("//"), std::string::npos);
    EXPECT_NE(name->back(), '/');
    EXPECT_NE(name->back(), '.');
    EXPECT_EQ(name->find_first_of(" %?#\\"), std::string::npos) << *name;
    auto parsed = ParseEntityBlobName("things", *name);
    ASSERT_TRUE(parsed.ok()) << *name;
    EXPECT_EQ(parsed->partition_key, pk);
    EXPECT_EQ(parsed->row_key, rk);
    auto decoded = DecodeKey(EncodeKey(rk));
    ASSERT_TRUE(decoded.ok());
    EXPECT_EQ(*decoded, rk);
    all.push_back({pk, rk, *name});
  }
  // Name order (List Blobs order) is (PartitionKey, RowKey) byte order.
  auto by_keys = all, by_name = all;
  std::sort(by_keys.begin(), by_keys.end(), [](const Named& a, const Named& b) {
    return std::tie(a.pk, a.rk) < std::tie(b.pk, b.rk);
  });
  std::sort(by_name.begin(), by_name.end(),
            [](const Named& a, const Named& b) { return a.name < b.name; });
  for (size_t i = 0; i < all.size(); ++i) {
    ASSERT_EQ(by_keys[i].pk, by_name[i].pk) << i;
    ASSERT_EQ(by_keys[i].rk, by_name[i].rk) << i;
  }
}

TEST(BlobNaming, EncodingPreservesOrderForEveryBytePair) {
  for (int a = 1; a < 256; ++a)
    for (int b = 1; b < 256; ++b) {
      std::string x(1, static_cast<char>(a)), y(1, static_cast<char>(b));
      ASSERT_EQ(x < y, EncodeKey(x) < EncodeKey(y)) << a << " " << b;
      ASSERT_EQ(x + "a" < y, EncodeKey(x + "a") < EncodeKey(y)) << a << " " << b;
    }
}

// Every byte's encoding, alone and among others (the encoder writes each
// byte's three bytes and moves on by its size), and which ASCII bytes a key
// may hold: exactly / \\ # ? and the control characters are refused.
TEST(BlobNaming, EveryByteEncodesAndEveryAsciiByteIsJudged) {
  std::string all;
  for (int b = 0; b < 256; ++b) {
    const std::string one(1, static_cast<char>(b));
    const bool passes = (b >= '1' && b <= '9') || (b >= 'A' && b <= 'Z') || (b >= 'a' && b <= 'z');
    const std::string enc = EncodeKey(one);
    EXPECT_EQ(enc.size(), passes ? 1u : 3u) << b;
    EXPECT_EQ(*DecodeKey(enc), one) << b;
    EXPECT_EQ(*DecodeKey(EncodeKey("a" + one + "0")), "a" + one + "0") << b;
    all += one;
    if (b < 0x80) {
      const bool refused = b == '/' || b == '\\' || b == '#' || b == '?' || b <= 0x1F || b == 0x7F;
      EXPECT_EQ(ValidateKey("k" + one + "k", "RowKey").ok(), !refused) << b;
    }
  }
  EXPECT_EQ(*DecodeKey(EncodeKey(all)), all);
  EXPECT_EQ(EncodeKey(all).size(), 61u + 3 * (256 - 61));
}

// A read checks its keys in the pass that encodes them: a name built with
// only bytes ValidateKey accepts on their own says so; any other byte, in
// either key, sends the keys to ValidateKey. Built into a reused string,
// the name is EntityBlobName's.
TEST(BlobNaming, TheNameWritersPassSaysWhichKeysValidateKeyMustJudge) {
  std::string name = "left over from another read, longer than any name below";
  for (int b = 0; b < 256; ++b) {
    const std::string key = "k" + std::string(1, static_cast<char>(b)) + "0";
    const bool plain =
        b < 0x80 && !(b == '/' || b == '\\' || b == '#' || b == '?' || b <= 0x1F || b == 0x7F);
    for (bool in_pk : {true, false}) {
      const std::string pk = in_pk ? key : "p", rk = in_pk ? "r" : key;
      auto said = WriteEntityBlobName("things", pk, rk, name);
      ASSERT_TRUE(said.ok()) << b;
      EXPECT_EQ(*said, plain) << b << (in_pk ? " in the PartitionKey" : " in the RowKey");
      EXPECT_EQ(name, *EntityBlobName("things", pk, rk)) << b;
      if (*said) {
        EXPECT_TRUE(ValidateKey(key, "RowKey").ok()) << b;
      }
    }
  }
  EXPECT_TRUE(*WriteEntityBlobName("things", "", "", name));  // empty keys are allowed
  EXPECT_FALSE(WriteEntityBlobName("things", std::string(1020, 'p'), "r", name).ok());
}

TEST(BlobNaming, DecodeRejectsNonCanonicalInput) {
  for (const char* bad : {"0", "02", "~4", "061" /* 'a' must not be escaped */, "~20",
                          "02e" /* lowercase hex */, ".", "/", "@30"})
    EXPECT_FALSE(DecodeKey(bad).ok()) << bad;
  EXPECT_FALSE(ParseEntityBlobName("things", "t/other/e/-a/-b").ok());
  EXPECT_FALSE(ParseEntityBlobName("things", "t/things/e/-a").ok());
  EXPECT_FALSE(ParseEntityBlobName("things", "t/things/e/a/b").ok());
}

TEST(BlobNaming, TableNamesFollowAzureRulesAndIgnoreCase) {
  EXPECT_TRUE(ValidateTableName("Orders2024").ok());
  for (const char* bad :
       {"ab", "1abc", "has-dash", "has space", "tables", "Tables", "\xc3\xa9tables"})
    EXPECT_FALSE(ValidateTableName(bad).ok()) << bad;
  EXPECT_FALSE(ValidateTableName(std::string(64, 'a')).ok());
  EXPECT_EQ(EntityPrefix("ORDERS"), EntityPrefix("orders"));
}

TEST(BlobNaming, NamesLongerThanAzureAllowsAreRefusedWithTheReason) {
  // Letters count one character each: 900 + 60 fit; 1000 + 1000 do not.
  EXPECT_TRUE(EntityBlobName("things", std::string(900, 'p'), std::string(60, 'r')).ok());
  auto too_long = EntityBlobName("things", std::string(1000, 'p'), std::string(1000, 'r'));
  EXPECT_EQ(too_long.status().code(), Code::kInvalidArgument);
  EXPECT_NE(too_long.status().message().find("1024"), std::string::npos);
  // Other bytes count three: 340 spaces alone exceed the limit.
  EXPECT_FALSE(EntityBlobName("things", std::string(340, ' '), "").ok());
}

}  // namespace
// IsEntityBlobNameOf and IsRowBlobNameOf (the checks a read makes that a
// body is the entity its name says) answer as parsing the name does: yes for
// the keys it was built from, no for any key one byte off, longer or shorter.
TEST(BlobNaming, NameOfKeysChecksAgreeWithParsing) {
  std::mt19937_64 rng(11);
  const std::string table_prefix = EntityPrefix("things");
  size_t refused = 0;
  for (int i = 0; i < 2000; ++i) {
    const std::string pk = RandomKey(rng, i % 10 == 0 ? 0 : 6), rk = RandomKey(rng, 8);
    const std::string name = *EntityBlobName("things", pk, rk);
    const std::string partition = PartitionPrefix("things", pk);
    EXPECT_TRUE(IsEntityBlobNameOf(name, table_prefix, pk, rk)) << name;
    EXPECT_TRUE(IsRowBlobNameOf(name, partition, rk)) << name;
    std::vector<std::string> other_rks = {rk + "x", rk + '\0'};
    if (!rk.empty()) {
      other_rks.push_back(rk.substr(0, rk.size() - 1));
      std::string flipped = rk;
      flipped[rng() % rk.size()] ^= static_cast<char>(1 + rng() % 255);
      other_rks.push_back(flipped);
    }
    for (const std::string& other : other_rks) {
      EXPECT_FALSE(IsEntityBlobNameOf(name, table_prefix, pk, other)) << name;
      EXPECT_FALSE(IsRowBlobNameOf(name, partition, other)) << name;
      refused += 2;
    }
    EXPECT_FALSE(IsEntityBlobNameOf(name, table_prefix, pk + "0", rk)) << name;
    EXPECT_FALSE(IsEntityBlobNameOf(name + "1", table_prefix, pk, rk)) << name;
    EXPECT_FALSE(IsRowBlobNameOf(name + "1", partition, rk)) << name;
    EXPECT_FALSE(IsRowBlobNameOf(name, PartitionPrefix("things", pk + "0"), rk)) << name;
    EXPECT_FALSE(IsRowBlobNameOf(name.substr(0, name.size() - 1), partition, rk)) << name;
  }
  EXPECT_GT(refused, 10000u);
}

}  // namespace blobtable::internal::naming
