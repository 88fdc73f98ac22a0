// SPDX-License-Identifier: Apache-2.0
// The BlobStore conformance suite (see blob_store_conformance.h).
#include "tests/blob_store_conformance.h"

#include <algorithm>
#include <set>
#include <thread>
#include <vector>

namespace blobtable::testing {

void BlobStoreConformance::SetUp() {
  StoreOptions o;
  if (controls_clock()) o.clock = &clock_;
  o.container = FreshContainer("conformance");
  auto store = OpenBackendBlobStore(GetParam(), o);
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  store_ = std::move(*store);
}

namespace {

using std::chrono::seconds;

// Asserts a failure with Azure's HTTP status and error code.
#define EXPECT_STORAGE_ERROR(expr, http, code)                 \
  {                                                            \
    auto bt_st_ = (expr);                                      \
    const Status& bt_s_ = internal::StatusOf(bt_st_);          \
    EXPECT_EQ(bt_s_.http_status(), http) << bt_s_.ToString();  \
    EXPECT_EQ(bt_s_.storage_code(), code) << bt_s_.ToString(); \
  }

PutOptions WithMeta(Metadata m) {
  PutOptions o;
  o.metadata = std::move(m);
  return o;
}

TEST_P(BlobStoreConformance, PutThenGetReturnsDataMetadataAndProperties) {
  auto put = store().Put("a/b", "hello", WithMeta({{"kind", "greeting"}}));
  ASSERT_TRUE(put.ok()) << put.status().ToString();
  EXPECT_FALSE(put->etag.empty());
  auto got = store().Get("a/b", {});
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_FALSE(got->not_modified);
  EXPECT_EQ(got->data, "hello");
  EXPECT_EQ(got->properties.etag, put->etag);
  EXPECT_EQ(got->properties.last_modified, put->last_modified);
  EXPECT_EQ(got->properties.content_length, 5u);
  EXPECT_EQ(got->properties.metadata, (Metadata{{"kind", "greeting"}}));
  EXPECT_EQ(got->properties.lease_state, LeaseState::kAvailable);
  EXPECT_EQ(got->properties.lease_status, LeaseStatus::kUnlocked);
}

TEST_P(BlobStoreConformance, MetadataNamesWithUnderscoresAndDigits) {
  // Names whose order differs between byte order and the service's
  // culture-aware order (which Shared Key signing must follow).
  Metadata m = {{"a0", "1"}, {"a_1", "2"}, {"a_b", "3"}, {"ab", "4"}, {"_x", "5"}, {"Mixed", "6"}};
  ASSERT_TRUE(store().Put("meta", "x", WithMeta(m)).ok());
  auto got = store().Head("meta", {});
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ(got->properties.metadata.size(), m.size());
  EXPECT_EQ(got->properties.metadata.at("a_1"), "2");
  ASSERT_TRUE(store().SetMetadata("meta", {{"z_9", "a"}, {"z9", "b"}}, {}).ok());
}

TEST_P(BlobStoreConformance, EmptyAndBinaryContentRoundTrip) {
  std::string binary("\0\x01\xff\xfe zero", 9);
  ASSERT_TRUE(store().Put("bin", binary, {}).ok());
  ASSERT_TRUE(store().Put("empty", "", {}).ok());
  EXPECT_EQ(store().Get("bin", {})->data, binary);
  EXPECT_EQ(store().Get("empty", {})->data, "");
}

TEST_P(BlobStoreConformance, MissingBlobIsNotFound) {
  auto got = store().Get("missing", {});
  EXPECT_EQ(got.status().code(), Code::kNotFound);
  EXPECT_STORAGE_ERROR(got, 404, "BlobNotFound");
  EXPECT_STORAGE_ERROR(store().Head("missing", {}), 404, "BlobNotFound");
  EXPECT_STORAGE_ERROR(store().Delete("missing", {}), 404, "BlobNotFound");
  EXPECT_STORAGE_ERROR(store().SetMetadata("missing", {}, {}), 404, "BlobNotFound");
  // If-Match "*" on a missing blob is still 404 for reads (Azure; Azurite
  // answers 412 here, its issue #2751 - not asserted against Azurite).
}

// A store opened on a container nothing was written to: the Azure backend
// sent no request to create it, and it reads as an empty container.
TEST_P(BlobStoreConformance, AContainerNeverWrittenToIsEmpty) {
  auto listed = store().List({});
  ASSERT_TRUE(listed.ok()) << listed.status().ToString();
  EXPECT_TRUE(listed->items.empty());
  EXPECT_TRUE(listed->next_marker.empty());
  ASSERT_TRUE(store().Put("first", "x", {}).ok());  // makes it, where it must
  EXPECT_EQ(store().List({})->items.size(), 1u);
}

// Content-MD5, as Azure computes it for a blob uploaded whole: what a
// listing's inline body copies are checked against.
TEST_P(BlobStoreConformance, ContentMd5IsTheMd5OfTheBody) {
  ASSERT_TRUE(store().Put("m", "hello", {}).ok());
  ASSERT_TRUE(store().Put("e", "", {}).ok());
  const std::string hello = "XUFAKrxLKna5cZ2REBfFkg==", empty = "1B2M2Y8AsgTpgAmY7PhCfg==";
  EXPECT_EQ(store().Get("m", {})->properties.content_md5, hello);
  EXPECT_EQ(store().Head("m", {})->properties.content_md5, hello);
  EXPECT_EQ(store().Head("e", {})->properties.content_md5, empty);
  ASSERT_TRUE(store().SetMetadata("m", {{"k", "v"}}, {}).ok());  // the body is unchanged
  auto listed = store().List({});
  ASSERT_TRUE(listed.ok());
  ASSERT_EQ(listed->items.size(), 2u);
  EXPECT_EQ(listed->items[0].properties.content_md5, empty);
  EXPECT_EQ(listed->items[1].properties.content_md5, hello);
  ASSERT_TRUE(store().Put("m", "other", {}).ok());
  EXPECT_NE(store().Head("m", {})->properties.content_md5, hello);
}

TEST_P(BlobStoreConformance, HeadHasPropertiesButNoData) {
  ASSERT_TRUE(store().Put("h", "12345", WithMeta({{"m", "v"}})).ok());
  auto head = store().Head("h", {});
  ASSERT_TRUE(head.ok());
  EXPECT_EQ(head->data, "");
  EXPECT_EQ(head->properties.content_length, 5u);
  EXPECT_EQ(head->properties.metadata.at("m"), "v");
}

TEST_P(BlobStoreConformance, OverwriteChangesETagAndReplacesMetadata) {
  auto first = store().Put("o", "1", WithMeta({{"a", "1"}}));
  auto second = store().Put("o", "2", WithMeta({{"b", "2"}}));
  ASSERT_TRUE(first.ok() && second.ok());
  EXPECT_NE(first->etag, second->etag);
  auto got = store().Get("o", {});
  EXPECT_EQ(got->data, "2");
  EXPECT_EQ(got->properties.metadata, (Metadata{{"b", "2"}}));
}

TEST_P(BlobStoreConformance, IfMatchOnReads) {
  auto put = store().Put("m", "x", {});
  EXPECT_TRUE(store().Get("m", IfMatch(put->etag)).ok());
  EXPECT_TRUE(store().Get("m", IfMatch("*")).ok());
  auto stale = store().Get("m", IfMatch("\"0xstale\""));
  EXPECT_EQ(stale.status().code(), Code::kConflict);
  EXPECT_STORAGE_ERROR(stale, 412, "ConditionNotMet");
  EXPECT_STORAGE_ERROR(store().Head("m", IfMatch("\"0xstale\"")), 412, "ConditionNotMet");
}

TEST_P(BlobStoreConformance, IfMatchOnWrites) {
  auto v1 = store().Put("w", "1", {});
  PutOptions stale;
  stale.conditions = IfMatch("\"0xstale\"");
  auto r = store().Put("w", "2", stale);
  EXPECT_EQ(r.status().code(), Code::kConflict);
  EXPECT_STORAGE_ERROR(r, 412, "ConditionNotMet");
  PutOptions good;
  good.conditions = IfMatch(v1->etag);
  auto v2 = store().Put("w", "2", good);
  ASSERT_TRUE(v2.ok()) << v2.status().ToString();
  // The old ETag no longer matches.
  EXPECT_STORAGE_ERROR(store().Put("w", "3", good), 412, "ConditionNotMet");
  // If-Match on a blob that does not exist never creates it.
  PutOptions any;
  any.conditions = IfMatch("*");
  EXPECT_STORAGE_ERROR(store().Put("new", "x", any), 412, "ConditionNotMet");
  EXPECT_TRUE(store().Get("new", {}).status().IsNotFound());
  // Delete and SetMetadata honour If-Match too.
  WriteOptions wstale;
  wstale.conditions = IfMatch(v1->etag);
  EXPECT_STORAGE_ERROR(store().Delete("w", wstale), 412, "ConditionNotMet");
  EXPECT_STORAGE_ERROR(store().SetMetadata("w", {}, wstale), 412, "ConditionNotMet");
  WriteOptions wgood;
  wgood.conditions = IfMatch(v2->etag);
  EXPECT_TRUE(store().Delete("w", wgood).ok());
}

TEST_P(BlobStoreConformance, IfNoneMatchOnReadsIsNotModified) {
  auto put = store().Put("n", "body", {});
  auto same = store().Get("n", IfNoneMatch(put->etag));
  ASSERT_TRUE(same.ok()) << same.status().ToString();
  EXPECT_TRUE(same->not_modified);
  EXPECT_EQ(same->data, "");
  EXPECT_EQ(same->properties.etag, put->etag);
  auto other = store().Get("n", IfNoneMatch("\"0xother\""));
  ASSERT_TRUE(other.ok());
  EXPECT_FALSE(other->not_modified);
  EXPECT_EQ(other->data, "body");
  // "*" selects nothing to compare on a read: Azure answers 400.
  EXPECT_STORAGE_ERROR(store().Head("n", IfNoneMatch("*")), 400, "UnsatisfiableCondition");
}

TEST_P(BlobStoreConformance, IfNoneMatchOnWrites) {
  PutOptions create;
  create.conditions = IfNoneMatch("*");
  auto first = store().Put("c", "1", create);
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  auto again = store().Put("c", "2", create);
  EXPECT_EQ(again.status().code(), Code::kConflict);
  EXPECT_STORAGE_ERROR(again, 409, "BlobAlreadyExists");
  EXPECT_EQ(store().Get("c", {})->data, "1");
  PutOptions same;
  same.conditions = IfNoneMatch(first->etag);
  EXPECT_STORAGE_ERROR(store().Put("c", "3", same), 412, "ConditionNotMet");
  PutOptions other;
  other.conditions = IfNoneMatch("\"0xother\"");
  EXPECT_TRUE(store().Put("c", "4", other).ok());
}

TEST_P(BlobStoreConformance, DateConditions) {
  if (!controls_clock()) GTEST_SKIP() << "needs the fake clock";
  auto put = store().Put("d", "x", {});
  TimePoint t = put->last_modified;
  AccessConditions since_now;
  since_now.if_modified_since = t;
  EXPECT_TRUE(store().Get("d", since_now)->not_modified);
  AccessConditions since_before;
  since_before.if_modified_since = t - seconds(1);
  EXPECT_FALSE(store().Get("d", since_before)->not_modified);
  AccessConditions unmodified_before;
  unmodified_before.if_unmodified_since = t - seconds(1);
  EXPECT_STORAGE_ERROR(store().Get("d", unmodified_before), 412, "ConditionNotMet");
  AccessConditions unmodified_now;
  unmodified_now.if_unmodified_since = t;
  EXPECT_TRUE(store().Get("d", unmodified_now).ok());
  // Writes: a failing If-Modified-Since is 412, not 304.
  PutOptions w;
  w.conditions = since_now;
  EXPECT_STORAGE_ERROR(store().Put("d", "y", w), 412, "ConditionNotMet");
  w.conditions = unmodified_before;
  EXPECT_STORAGE_ERROR(store().Put("d", "y", w), 412, "ConditionNotMet");
  w.conditions = since_before;
  EXPECT_TRUE(store().Put("d", "y", w).ok());
  // Reads combine If-None-Match || If-Modified-Since: one passing is enough.
  clock().Advance(seconds(5));
  auto v2 = store().Put("d", "z", {});
  AccessConditions both;
  both.if_none_match = v2->etag;  // fails
  both.if_modified_since = t;     // passes: modified since t
  EXPECT_FALSE(store().Get("d", both)->not_modified);
  both.if_modified_since = v2->last_modified;  // now both fail
  EXPECT_TRUE(store().Get("d", both)->not_modified);
}

TEST_P(BlobStoreConformance, DeleteRemovesBlob) {
  ASSERT_TRUE(store().Put("x", "1", {}).ok());
  EXPECT_TRUE(store().Delete("x", {}).ok());
  EXPECT_TRUE(store().Get("x", {}).status().IsNotFound());
  EXPECT_STORAGE_ERROR(store().Delete("x", {}), 404, "BlobNotFound");
}

TEST_P(BlobStoreConformance, SetMetadataReplacesMetadataAndChangesETag) {
  auto put = store().Put("s", "data", WithMeta({{"a", "1"}}));
  auto set = store().SetMetadata("s", {{"b", "2"}}, {});
  ASSERT_TRUE(set.ok()) << set.status().ToString();
  EXPECT_NE(set->etag, put->etag);
  auto got = store().Get("s", {});
  EXPECT_EQ(got->data, "data");
  EXPECT_EQ(got->properties.metadata, (Metadata{{"b", "2"}}));
  EXPECT_EQ(got->properties.etag, set->etag);
}

// Names a service or an HTTP library would normalise (and so could leave
// the container, or land on another blob), or that break listings, are
// refused the same way by every backend, before anything is sent; the
// awkward but harmless ones round-trip.
TEST_P(BlobStoreConformance, NamesThatCouldEscapeOrBreakAreRefusedEverywhere) {
  for (const std::string& name : std::vector<std::string>{
           "../victim/keep", "a/../b", "a/./b", "./a", "..", ".", "a//b", "/a", "a/", "a.", "a/b.",
           std::string("a\x01"
                       "b"),
           std::string("a\x7f"
                       "b"),
           std::string("a\xc2\x85"
                       "b"),
           std::string("a\xef\xbf\xbe"
                       "b"),
           std::string("a\xef\xbf\xbf"
                       "b")}) {
    SCOPED_TRACE(name);
    EXPECT_STORAGE_ERROR(store().Put(name, "x", {}), 400, "InvalidResourceName");
    EXPECT_STORAGE_ERROR(store().Get(name, {}), 400, "InvalidResourceName");
    EXPECT_STORAGE_ERROR(store().Delete(name, {}), 400, "InvalidResourceName");
  }
  for (const std::string& name : std::vector<std::string>{"a.b", "a/b.c", "..a", "a..b",
                                                          ".hidden/x", "a/.b", "a b", "%2e%2e"}) {
    SCOPED_TRACE(name);
    ASSERT_TRUE(store().Put(name, name, {}).ok());
    auto got = store().Get(name, {});
    ASSERT_TRUE(got.ok()) << got.status().ToString();
    EXPECT_EQ(got->data, name);
  }
}

// Metadata values HTTP would trim or Shared Key would sign differently are
// refused with a clear answer, on every backend.
TEST_P(BlobStoreConformance, MetadataValuesThatHttpWouldAlterAreRefused) {
  ASSERT_TRUE(store().Put("m", "x", {}).ok());
  for (const std::string& value :
       std::vector<std::string>{" lead", "trail ", "caf\xc3\xa9", std::string("a\tb")}) {
    SCOPED_TRACE(value);
    EXPECT_STORAGE_ERROR(store().Put("m", "x", WithMeta({{"k", value}})), 400, "InvalidMetadata");
    EXPECT_STORAGE_ERROR(store().SetMetadata("m", {{"k", value}}, {}), 400, "InvalidMetadata");
  }
  EXPECT_TRUE(store().SetMetadata("m", {{"k", "in side"}}, {}).ok());
}

TEST_P(BlobStoreConformance, InvalidArgumentsAre400) {
  EXPECT_STORAGE_ERROR(store().Put("", "x", {}), 400, "InvalidResourceName");
  EXPECT_STORAGE_ERROR(store().Put(std::string(1025, 'n'), "x", {}), 400, "InvalidResourceName");
  EXPECT_TRUE(store().Put(std::string(1024, 'n'), "x", {}).ok());
  EXPECT_EQ(store().Put("bad-meta", "x", WithMeta({{"1bad", "v"}})).status().code(),
            Code::kInvalidArgument);
  ASSERT_TRUE(store().Put("l", "x", {}).ok());
  for (int d : {0, 14, 61, -2}) {
    SCOPED_TRACE(d);
    EXPECT_STORAGE_ERROR(store().AcquireLease("l", d, "", {}), 400, "InvalidHeaderValue");
  }
  ASSERT_TRUE(store().AcquireLease("l", 15, "", {}).ok());
  EXPECT_STORAGE_ERROR(store().BreakLease("l", 61, {}), 400, "InvalidHeaderValue");
  ListOptions lo;
  lo.max_results = 0;
  EXPECT_EQ(store().List(lo).status().code(), Code::kInvalidArgument);
}

// ---- Listing ----

std::vector<std::string> ListAll(BlobStore& store, const std::string& prefix, int page_size,
                                 int* pages = nullptr) {
  std::vector<std::string> names;
  ListOptions o;
  o.prefix = prefix;
  o.max_results = page_size;
  int n = 0;
  do {
    auto page = store.List(o);
    EXPECT_TRUE(page.ok()) << page.status().ToString();
    if (!page.ok()) break;
    ++n;
    for (const auto& item : page->items) names.push_back(item.name);
    o.marker = page->next_marker;
  } while (!o.marker.empty());
  if (pages) *pages = n;
  return names;
}

TEST_P(BlobStoreConformance, ListIsInByteOrderWithinPrefix) {
  std::string long_a = "p/" + std::string(600, 'x') + "a";
  std::string long_b = "p/" + std::string(600, 'x') + "b";
  std::string long_prefix = "p/" + std::string(600, 'x');
  std::vector<std::string> names = {"p/b",  "p/a",  "p/a0",      "p/\xc3\xa9", "p/Z",      "p/a/b",
                                    long_b, long_a, long_prefix, "q/outside",  "o/outside"};
  for (const auto& n : names) ASSERT_TRUE(store().Put(n, n, {}).ok()) << n;
  std::vector<std::string> expected;
  for (const auto& n : names)
    if (n.rfind("p/", 0) == 0) expected.push_back(n);
  std::sort(expected.begin(), expected.end());  // std::string compares bytes (as unsigned)
  EXPECT_EQ(ListAll(store(), "p/", 5000), expected);
  int pages = 0;
  EXPECT_EQ(ListAll(store(), "p/", 2, &pages), expected);
  EXPECT_EQ(pages, 5);
  EXPECT_EQ(ListAll(store(), long_prefix, 1),
            (std::vector<std::string>{long_prefix, long_a, long_b}));
  EXPECT_TRUE(ListAll(store(), "nothing/", 10).empty());
}

TEST_P(BlobStoreConformance, ListStartFromIsInclusiveAndCombinesWithMarker) {
  for (const char* n : {"s/a", "s/b", "s/c", "s/d", "t/a"})
    ASSERT_TRUE(store().Put(n, "", {}).ok());
  ListOptions o;
  o.prefix = "s/";
  o.start_from = "s/b";
  o.max_results = 2;
  auto page = store().List(o);
  ASSERT_TRUE(page.ok()) << page.status().ToString();
  ASSERT_EQ(page->items.size(), 2u);
  EXPECT_EQ(page->items[0].name, "s/b");
  EXPECT_EQ(page->items[1].name, "s/c");
  o.marker = page->next_marker;
  page = store().List(o);
  ASSERT_TRUE(page.ok());
  ASSERT_EQ(page->items.size(), 1u);
  EXPECT_EQ(page->items[0].name, "s/d");
  EXPECT_TRUE(page->next_marker.empty());
  o = {};
  o.prefix = "s/";
  o.start_from = "s/bb";  // between two names
  EXPECT_EQ(store().List(o)->items.front().name, "s/c");
}

TEST_P(BlobStoreConformance, ListReportsPropertiesMetadataAndLeaseState) {
  ASSERT_TRUE(store().Put("i/1", "abc", WithMeta({{"k", "v"}})).ok());
  ASSERT_TRUE(store().Put("i/2", "", {}).ok());
  ASSERT_TRUE(store().AcquireLease("i/2", kInfiniteLease, "", {}).ok());
  ListOptions o;
  o.prefix = "i/";
  auto page = store().List(o);
  ASSERT_TRUE(page.ok());
  ASSERT_EQ(page->items.size(), 2u);
  EXPECT_TRUE(page->next_marker.empty());
  const auto& p1 = page->items[0].properties;
  EXPECT_EQ(p1.metadata, (Metadata{{"k", "v"}}));
  EXPECT_EQ(p1.content_length, 3u);
  EXPECT_EQ(p1.etag, store().Head("i/1", {})->properties.etag);
  EXPECT_EQ(p1.lease_state, LeaseState::kAvailable);
  const auto& p2 = page->items[1].properties;
  EXPECT_EQ(p2.lease_state, LeaseState::kLeased);
  EXPECT_EQ(p2.lease_status, LeaseStatus::kLocked);
  EXPECT_EQ(p2.lease_duration, LeaseDurationType::kInfinite);
}

// ---- Leases ----

constexpr char kA[] = "aaaaaaaa-0000-4000-8000-000000000001";
constexpr char kB[] = "bbbbbbbb-0000-4000-8000-000000000002";
constexpr char kC[] = "cccccccc-0000-4000-8000-000000000003";

enum class Start { kAvailable, kLeased, kBreaking, kBroken, kExpired };

const char* StartName(Start s) {
  switch (s) {
    case Start::kAvailable: return "available";
    case Start::kLeased: return "leased";
    case Start::kBreaking: return "breaking";
    case Start::kBroken: return "broken";
    case Start::kExpired: return "expired";
  }
  return "?";
}

}  // namespace

// Puts blob `name` into state `s` with lease id A (15 s fixed lease).
void BlobStoreConformance::Prepare(const std::string& name, int start) {
  Start s = static_cast<Start>(start);
  ASSERT_TRUE(store().Put(name, "x", {}).ok());
  if (s == Start::kAvailable) return;
  ASSERT_TRUE(store().AcquireLease(name, 15, kA, {}).ok());
  if (s == Start::kBreaking) {
    ASSERT_TRUE(store().BreakLease(name, 10, {}).ok());
  } else if (s == Start::kBroken) {
    ASSERT_TRUE(store().BreakLease(name, 0, {}).ok());
  } else if (s == Start::kExpired) {
    clock().Advance(seconds(16));
  }
}

LeaseState BlobStoreConformance::StateOf(const std::string& name) {
  auto head = store().Head(name, {});
  EXPECT_TRUE(head.ok()) << head.status().ToString();
  return head.ok() ? head->properties.lease_state : LeaseState::kAvailable;
}

namespace {

bool CanUse(bool controls_clock, Start s) { return controls_clock || s != Start::kExpired; }

struct LeaseCase {
  const char* action;
  Start start;
  // Empty: succeeds and leaves `state`; else the 409/412 error code.
  const char* error;
  LeaseState state;
};

Status RunAction(BlobStore& store, const std::string& name, const std::string& action) {
  if (action == "acquire") return store.AcquireLease(name, 15, "", {}).status();
  if (action == "acquire A") return store.AcquireLease(name, 15, kA, {}).status();
  if (action == "acquire B") return store.AcquireLease(name, 15, kB, {}).status();
  if (action == "break 0") return store.BreakLease(name, 0, {}).status();
  if (action == "break 5") return store.BreakLease(name, 5, {}).status();
  if (action == "change A->B") return store.ChangeLease(name, kA, kB, {}).status();
  if (action == "change B->A") return store.ChangeLease(name, kB, kA, {}).status();
  if (action == "change B->C") return store.ChangeLease(name, kB, kC, {}).status();
  if (action == "renew A") return store.RenewLease(name, kA, {}).status();
  if (action == "renew B") return store.RenewLease(name, kB, {}).status();
  if (action == "release A") return store.ReleaseLease(name, kA, {}).status();
  if (action == "release B") return store.ReleaseLease(name, kB, {}).status();
  return Status::InvalidArgument("unknown action " + action);
}

// Azure's "outcomes of lease operations by lease state" table.
TEST_P(BlobStoreConformance, EveryActionInEveryState) {
  using LS = LeaseState;
  const LeaseCase cases[] = {
      {"acquire", Start::kAvailable, "", LS::kLeased},
      {"acquire", Start::kLeased, "LeaseAlreadyPresent", LS::kLeased},
      {"acquire", Start::kBreaking, "LeaseAlreadyPresent", LS::kBreaking},
      {"acquire", Start::kBroken, "", LS::kLeased},
      {"acquire", Start::kExpired, "", LS::kLeased},
      {"acquire A", Start::kAvailable, "", LS::kLeased},
      {"acquire A", Start::kLeased, "", LS::kLeased},
      {"acquire A", Start::kBreaking, "LeaseIsBreakingAndCannotBeAcquired", LS::kBreaking},
      {"acquire A", Start::kBroken, "", LS::kLeased},
      {"acquire A", Start::kExpired, "", LS::kLeased},
      {"acquire B", Start::kAvailable, "", LS::kLeased},
      {"acquire B", Start::kLeased, "LeaseAlreadyPresent", LS::kLeased},
      {"acquire B", Start::kBreaking, "LeaseAlreadyPresent", LS::kBreaking},
      {"acquire B", Start::kBroken, "", LS::kLeased},
      {"acquire B", Start::kExpired, "", LS::kLeased},
      {"break 0", Start::kAvailable, "LeaseNotPresentWithLeaseOperation", LS::kAvailable},
      {"break 0", Start::kLeased, "", LS::kBroken},
      {"break 0", Start::kBreaking, "", LS::kBroken},
      {"break 0", Start::kBroken, "", LS::kBroken},
      {"break 0", Start::kExpired, "", LS::kBroken},
      {"break 5", Start::kAvailable, "LeaseNotPresentWithLeaseOperation", LS::kAvailable},
      {"break 5", Start::kLeased, "", LS::kBreaking},
      {"break 5", Start::kBreaking, "", LS::kBreaking},
      {"break 5", Start::kBroken, "", LS::kBroken},
      {"break 5", Start::kExpired, "", LS::kBroken},
      {"change A->B", Start::kAvailable, "LeaseNotPresentWithLeaseOperation", LS::kAvailable},
      {"change A->B", Start::kLeased, "", LS::kLeased},
      {"change A->B", Start::kBreaking, "LeaseIsBreakingAndCannotBeChanged", LS::kBreaking},
      {"change A->B", Start::kBroken, "LeaseNotPresentWithLeaseOperation", LS::kBroken},
      {"change A->B", Start::kExpired, "LeaseNotPresentWithLeaseOperation", LS::kExpired},
      {"change B->A", Start::kLeased, "", LS::kLeased},
      {"change B->A", Start::kBreaking, "LeaseIdMismatchWithLeaseOperation", LS::kBreaking},
      {"change B->C", Start::kLeased, "LeaseIdMismatchWithLeaseOperation", LS::kLeased},
      {"change B->C", Start::kBreaking, "LeaseIdMismatchWithLeaseOperation", LS::kBreaking},
      {"change B->C", Start::kBroken, "LeaseNotPresentWithLeaseOperation", LS::kBroken},
      {"renew A", Start::kAvailable, "LeaseIdMismatchWithLeaseOperation", LS::kAvailable},
      {"renew A", Start::kLeased, "", LS::kLeased},
      {"renew A", Start::kBreaking, "LeaseIsBrokenAndCannotBeRenewed", LS::kBreaking},
      {"renew A", Start::kBroken, "LeaseIsBrokenAndCannotBeRenewed", LS::kBroken},
      {"renew A", Start::kExpired, "", LS::kLeased},
      {"renew B", Start::kAvailable, "LeaseIdMismatchWithLeaseOperation", LS::kAvailable},
      {"renew B", Start::kLeased, "LeaseIdMismatchWithLeaseOperation", LS::kLeased},
      {"renew B", Start::kBreaking, "LeaseIdMismatchWithLeaseOperation", LS::kBreaking},
      {"renew B", Start::kBroken, "LeaseIdMismatchWithLeaseOperation", LS::kBroken},
      {"renew B", Start::kExpired, "LeaseIdMismatchWithLeaseOperation", LS::kExpired},
      {"release A", Start::kAvailable, "LeaseIdMismatchWithLeaseOperation", LS::kAvailable},
      {"release A", Start::kLeased, "", LS::kAvailable},
      {"release A", Start::kBreaking, "", LS::kAvailable},
      {"release A", Start::kBroken, "", LS::kAvailable},
      {"release A", Start::kExpired, "", LS::kAvailable},
      {"release B", Start::kAvailable, "LeaseIdMismatchWithLeaseOperation", LS::kAvailable},
      {"release B", Start::kLeased, "LeaseIdMismatchWithLeaseOperation", LS::kLeased},
      {"release B", Start::kBreaking, "LeaseIdMismatchWithLeaseOperation", LS::kBreaking},
      {"release B", Start::kBroken, "LeaseIdMismatchWithLeaseOperation", LS::kBroken},
      {"release B", Start::kExpired, "LeaseIdMismatchWithLeaseOperation", LS::kExpired},
  };
  int i = 0;
  for (const LeaseCase& c : cases) {
    if (!CanUse(controls_clock(), c.start)) continue;
    std::string name = "lease/" + std::to_string(i++);
    SCOPED_TRACE(std::string(c.action) + " on " + StartName(c.start));
    Prepare(name, static_cast<int>(c.start));
    Status s = RunAction(store(), name, c.action);
    if (std::string(c.error).empty()) {
      EXPECT_TRUE(s.ok()) << s.ToString();
    } else {
      EXPECT_EQ(s.http_status(), 409) << s.ToString();
      EXPECT_EQ(s.storage_code(), c.error) << s.ToString();
    }
    EXPECT_EQ(LeaseStateName(StateOf(name)), LeaseStateName(c.state));
  }
}

// Azure's outcomes of blob writes by lease state: no lease id / A / B.
TEST_P(BlobStoreConformance, WritesByLeaseState) {
  struct WriteCase {
    Start start;
    const char* lease_id;
    const char* error;  // empty: succeeds
  };
  const WriteCase cases[] = {
      {Start::kAvailable, "", ""},
      {Start::kAvailable, kA, "LeaseNotPresentWithBlobOperation"},
      {Start::kLeased, "", "LeaseIdMissing"},
      {Start::kLeased, kA, ""},
      {Start::kLeased, kB, "LeaseIdMismatchWithBlobOperation"},
      {Start::kBreaking, "", "LeaseIdMissing"},
      {Start::kBreaking, kA, ""},
      {Start::kBreaking, kB, "LeaseIdMismatchWithBlobOperation"},
      {Start::kBroken, "", ""},
      {Start::kBroken, kA, "LeaseLost"},
      {Start::kExpired, "", ""},
      {Start::kExpired, kA, "LeaseLost"},
  };
  int i = 0;
  for (const WriteCase& c : cases) {
    if (!CanUse(controls_clock(), c.start)) continue;
    for (const char* op : {"put", "set-metadata", "delete"}) {
      std::string name = "write/" + std::to_string(i++);
      SCOPED_TRACE(std::string(op) + " with lease id '" + c.lease_id + "' on " +
                   StartName(c.start));
      Prepare(name, static_cast<int>(c.start));
      Status s;
      PutOptions o;
      o.lease_id = c.lease_id;
      if (std::string(op) == "put")
        s = store().Put(name, "new", o).status();
      else if (std::string(op) == "set-metadata")
        s = store().SetMetadata(name, {}, o).status();
      else
        s = store().Delete(name, o);
      if (std::string(c.error).empty()) {
        EXPECT_TRUE(s.ok()) << s.ToString();
      } else {
        EXPECT_EQ(s.http_status(), 412) << s.ToString();
        // Azurite answers LeaseNotPresentWithBlobOperation (with the LeaseLost
        // message) for a write under an expired or broken lease; Azure lists
        // LeaseLost for it. Azurite issue #635 tracks its lease-lost error.
        if (!(azurite() && std::string(c.error) == "LeaseLost")) {
          EXPECT_EQ(s.storage_code(), c.error) << s.ToString();
        }
      }
    }
  }
}

TEST_P(BlobStoreConformance, WriteUnderLeaseKeepsTheLease) {
  Prepare("k", static_cast<int>(Start::kLeased));
  PutOptions o;
  o.lease_id = kA;
  ASSERT_TRUE(store().Put("k", "new", o).ok());
  EXPECT_EQ(StateOf("k"), LeaseState::kLeased);
  EXPECT_TRUE(store().RenewLease("k", kA, {}).ok());
  // Reads never need the lease id.
  EXPECT_EQ(store().Get("k", {})->data, "new");
}

TEST_P(BlobStoreConformance, LeaseActionsDoNotChangeETag) {
  auto put = store().Put("e", "x", {});
  auto acq = store().AcquireLease("e", 15, kA, {});
  ASSERT_TRUE(acq.ok());
  EXPECT_EQ(acq->etag, put->etag);
  EXPECT_EQ(acq->lease_id, kA);
  EXPECT_TRUE(store().RenewLease("e", kA, {}).ok());
  EXPECT_TRUE(store().ChangeLease("e", kA, kB, {}).ok());
  EXPECT_TRUE(store().ReleaseLease("e", kB, {}).ok());
  EXPECT_EQ(store().Head("e", {})->properties.etag, put->etag);
}

TEST_P(BlobStoreConformance, AcquireWithoutProposalReturnsNewId) {
  Prepare("g", static_cast<int>(Start::kAvailable));
  auto acq = store().AcquireLease("g", kInfiniteLease, "", {});
  ASSERT_TRUE(acq.ok());
  EXPECT_EQ(acq->lease_id.size(), 36u);
  PutOptions o;
  o.lease_id = acq->lease_id;
  EXPECT_TRUE(store().Put("g", "y", o).ok());
  EXPECT_EQ(store().Head("g", {})->properties.lease_duration, LeaseDurationType::kInfinite);
}

TEST_P(BlobStoreConformance, LeaseActionsOnMissingBlobAre404) {
  EXPECT_STORAGE_ERROR(store().AcquireLease("none", 15, "", {}), 404, "BlobNotFound");
  EXPECT_STORAGE_ERROR(store().RenewLease("none", kA, {}), 404, "BlobNotFound");
  EXPECT_STORAGE_ERROR(store().ChangeLease("none", kA, kB, {}), 404, "BlobNotFound");
  EXPECT_STORAGE_ERROR(store().ReleaseLease("none", kA, {}), 404, "BlobNotFound");
  EXPECT_STORAGE_ERROR(store().BreakLease("none", 0, {}), 404, "BlobNotFound");
}

TEST_P(BlobStoreConformance, LeaseActionsHonourConditions) {
  auto put = store().Put("lc", "x", {});
  EXPECT_STORAGE_ERROR(store().AcquireLease("lc", 15, kA, IfMatch("\"0xstale\"")), 412,
                       "ConditionNotMet");
  EXPECT_EQ(StateOf("lc"), LeaseState::kAvailable);
  EXPECT_TRUE(store().AcquireLease("lc", 15, kA, IfMatch(put->etag)).ok());
}

TEST_P(BlobStoreConformance, FixedLeaseExpiresAndExpiredLeaseRenewsUntilModified) {
  if (!controls_clock()) GTEST_SKIP() << "needs the fake clock";
  Prepare("x", static_cast<int>(Start::kLeased));
  clock().Advance(seconds(14));
  EXPECT_EQ(StateOf("x"), LeaseState::kLeased);
  clock().Advance(seconds(1));
  EXPECT_EQ(StateOf("x"), LeaseState::kExpired);
  // Reading does not stop the old holder from renewing...
  EXPECT_TRUE(store().Get("x", {}).ok());
  EXPECT_TRUE(store().RenewLease("x", kA, {}).ok());
  EXPECT_EQ(StateOf("x"), LeaseState::kLeased);
  // ...but a write after expiry does: the blob becomes available.
  clock().Advance(seconds(16));
  ASSERT_TRUE(store().Put("x", "other writer", {}).ok());
  EXPECT_EQ(StateOf("x"), LeaseState::kAvailable);
  EXPECT_STORAGE_ERROR(store().RenewLease("x", kA, {}), 409, "LeaseIdMismatchWithLeaseOperation");
}

TEST_P(BlobStoreConformance, ReacquireWithSameIdChangesDuration) {
  if (!controls_clock()) GTEST_SKIP() << "needs the fake clock";
  Prepare("r", static_cast<int>(Start::kAvailable));
  ASSERT_TRUE(store().AcquireLease("r", kInfiniteLease, kA, {}).ok());
  clock().Advance(seconds(100));
  EXPECT_EQ(StateOf("r"), LeaseState::kLeased);
  ASSERT_TRUE(store().AcquireLease("r", 20, kA, {}).ok());
  clock().Advance(seconds(19));
  EXPECT_EQ(StateOf("r"), LeaseState::kLeased);
  clock().Advance(seconds(1));
  EXPECT_EQ(StateOf("r"), LeaseState::kExpired);
}

TEST_P(BlobStoreConformance, BreakPeriods) {
  if (!controls_clock()) GTEST_SKIP() << "needs the fake clock";
  // Infinite lease, no period: broken at once.
  Prepare("b1", static_cast<int>(Start::kAvailable));
  ASSERT_TRUE(store().AcquireLease("b1", kInfiniteLease, kA, {}).ok());
  auto b1 = store().BreakLease("b1", std::nullopt, {});
  ASSERT_TRUE(b1.ok());
  EXPECT_EQ(b1->lease_time_seconds, 0);
  EXPECT_EQ(StateOf("b1"), LeaseState::kBroken);
  // Fixed lease, no period: breaks when it would have expired.
  Prepare("b2", static_cast<int>(Start::kAvailable));
  ASSERT_TRUE(store().AcquireLease("b2", 30, kA, {}).ok());
  clock().Advance(seconds(10));
  auto b2 = store().BreakLease("b2", std::nullopt, {});
  ASSERT_TRUE(b2.ok());
  EXPECT_EQ(b2->lease_time_seconds, 20);
  EXPECT_EQ(StateOf("b2"), LeaseState::kBreaking);
  // A period longer than the remaining time is cut to it.
  Prepare("b3", static_cast<int>(Start::kAvailable));
  ASSERT_TRUE(store().AcquireLease("b3", 15, kA, {}).ok());
  auto b3 = store().BreakLease("b3", 60, {});
  ASSERT_TRUE(b3.ok());
  EXPECT_EQ(b3->lease_time_seconds, 15);
  // A second break with a shorter period shortens the break.
  auto b3again = store().BreakLease("b3", 5, {});
  ASSERT_TRUE(b3again.ok());
  EXPECT_EQ(b3again->lease_time_seconds, 5);
  clock().Advance(seconds(4));
  EXPECT_EQ(StateOf("b3"), LeaseState::kBreaking);
  EXPECT_EQ(StateOf("b2"), LeaseState::kBreaking);
  clock().Advance(seconds(1));
  EXPECT_EQ(StateOf("b3"), LeaseState::kBroken);
  EXPECT_TRUE(store().AcquireLease("b3", 15, kB, {}).ok());
  clock().Advance(seconds(15));
  EXPECT_EQ(StateOf("b2"), LeaseState::kBroken);
}

// ---- Concurrency ----

TEST_P(BlobStoreConformance, ConcurrentConditionalIncrementsLoseNothing) {
  ASSERT_TRUE(store().Put("counter", "0", {}).ok());
  constexpr int kThreads = 4, kIncrements = 25;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([this] {
      for (int i = 0; i < kIncrements; ++i) {
        for (;;) {
          auto got = store().Get("counter", {});
          ASSERT_TRUE(got.ok());
          PutOptions o;
          o.conditions = IfMatch(got->properties.etag);
          auto put = store().Put("counter", std::to_string(std::stoi(got->data) + 1), o);
          if (put.ok()) break;
          ASSERT_EQ(put.status().code(), Code::kConflict) << put.status().ToString();
        }
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(store().Get("counter", {})->data, std::to_string(kThreads * kIncrements));
}

TEST_P(BlobStoreConformance, ETagsAreUniqueAcrossBlobsAndVersions) {
  std::set<std::string> etags;
  for (int i = 0; i < 20; ++i) {
    auto put = store().Put("u/" + std::to_string(i % 5), std::to_string(i), {});
    ASSERT_TRUE(put.ok());
    EXPECT_TRUE(etags.insert(put->etag).second) << put->etag;
  }
}

}  // namespace

GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(BlobStoreConformance);

}  // namespace blobtable::testing
