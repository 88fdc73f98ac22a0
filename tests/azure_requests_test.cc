// SPDX-License-Identifier: Apache-2.0
// The Azure backend's request builders (storage/azure/requests.h), each
// tested by the request it produces: method, URL, headers in their order,
// body. No transport, clock or randomness.
#include <gtest/gtest.h>

#include <utility>
#include <vector>

#include "storage/azure/azure_parsing.h"
#include "storage/azure/requests.h"

namespace blobtable::internal::azure {
namespace {

using Headers = std::vector<std::pair<std::string, std::string>>;

const Target kTarget{"http://127.0.0.1:10000/devstoreaccount1", "tables"};
const Stamp kStamp{"Mon, 01 Jan 2024 00:00:00 GMT", "00000000-0000-4000-8000-000000000001"};

// The headers every request starts with.
Headers Common() {
  return {{"x-ms-version", kAzureApiVersion},
          {"x-ms-date", kStamp.date},
          {"x-ms-client-request-id", kStamp.request_id}};
}
Headers CommonAnd(const Headers& more) {
  Headers h = Common();
  h.insert(h.end(), more.begin(), more.end());
  return h;
}

TEST(AzureRequests, UrlsNameTheContainerAndEncodeTheBlobButItsSlashes) {
  EXPECT_EQ(ContainerUrl(kTarget, ""), "http://127.0.0.1:10000/devstoreaccount1/tables");
  EXPECT_EQ(ContainerUrl(kTarget, "restype=container"),
            "http://127.0.0.1:10000/devstoreaccount1/tables?restype=container");
  EXPECT_EQ(BlobUrl(kTarget, "t/orders/e/-p/-r"),
            "http://127.0.0.1:10000/devstoreaccount1/tables/t/orders/e/-p/-r");
  EXPECT_EQ(BlobUrl(kTarget, "a b/c?d#e%", "comp=lease"),
            "http://127.0.0.1:10000/devstoreaccount1/tables/a%20b/c%3Fd%23e%25?comp=lease");
}

TEST(AzureRequests, EveryRequestCarriesVersionDateAndRequestId) {
  HttpRequest r = NewRequest("GET", "http://x/c", kStamp);
  EXPECT_EQ(r.method, "GET");
  EXPECT_EQ(r.url, "http://x/c");
  EXPECT_EQ(r.headers, Common());
  EXPECT_TRUE(r.body.empty());
  Stamp now = Stamp::Now(), later = Stamp::Now();
  TimePoint parsed;
  EXPECT_TRUE(ParseHttpDate(now.date, &parsed)) << now.date;
  EXPECT_NE(now.request_id, later.request_id);  // a new id for every attempt
}

TEST(AzureRequests, ConditionsAndWriteOptionsInTheirOrder) {
  AccessConditions c;
  c.if_match = "\"0x1\"";
  c.if_none_match = "*";
  c.if_modified_since = TimePoint(std::chrono::seconds(784111777));
  c.if_unmodified_since = TimePoint(std::chrono::seconds(784111778));
  HttpRequest r;
  AddConditions(r, c);
  EXPECT_EQ(r.headers, (Headers{{"If-Match", "\"0x1\""},
                                {"If-None-Match", "*"},
                                {"If-Modified-Since", "Sun, 06 Nov 1994 08:49:37 GMT"},
                                {"If-Unmodified-Since", "Sun, 06 Nov 1994 08:49:38 GMT"}}));
  HttpRequest none;
  AddConditions(none, {});
  EXPECT_TRUE(none.headers.empty());
  WriteOptions w;
  w.conditions.if_match = "\"0x2\"";
  w.lease_id = "lease-1";
  HttpRequest written;
  AddWriteOptions(written, w);
  EXPECT_EQ(written.headers, (Headers{{"If-Match", "\"0x2\""}, {"x-ms-lease-id", "lease-1"}}));
}

TEST(AzureRequests, MetadataThenTheWriteId) {
  HttpRequest r;
  AddMetadata(r, {{"a", "1"}, {"b", "2"}}, "wid");
  EXPECT_EQ(
      r.headers,
      (Headers{{"x-ms-meta-a", "1"}, {"x-ms-meta-b", "2"}, {"x-ms-meta-blobtablewriteid", "wid"}}));
  HttpRequest plain;
  AddMetadata(plain, {{"a", "1"}}, "");
  EXPECT_EQ(plain.headers, (Headers{{"x-ms-meta-a", "1"}}));
}

TEST(AzureRequests, PutBlob) {
  PutOptions o;
  o.metadata = {{"k", "v"}};
  o.conditions.if_none_match = "*";
  o.lease_id = "L";
  HttpRequest r = PutBlob(kTarget, kStamp, "t/b", "data", "MD5==", o, "wid");
  EXPECT_EQ(r.method, "PUT");
  EXPECT_EQ(r.url, "http://127.0.0.1:10000/devstoreaccount1/tables/t/b");
  EXPECT_EQ(r.headers, CommonAnd({{"x-ms-blob-type", "BlockBlob"},
                                  {"Content-Type", "application/octet-stream"},
                                  {"Content-MD5", "MD5=="},
                                  {"x-ms-meta-k", "v"},
                                  {"x-ms-meta-blobtablewriteid", "wid"},
                                  {"If-None-Match", "*"},
                                  {"x-ms-lease-id", "L"}}));
  EXPECT_EQ(r.body, "data");
}

TEST(AzureRequests, DeleteAndSetMetadata) {
  WriteOptions o;
  o.conditions.if_match = "\"0x1\"";
  HttpRequest del = DeleteBlob(kTarget, kStamp, "b", o);
  EXPECT_EQ(del.method, "DELETE");
  EXPECT_EQ(del.url, "http://127.0.0.1:10000/devstoreaccount1/tables/b");
  EXPECT_EQ(del.headers, CommonAnd({{"If-Match", "\"0x1\""}}));
  HttpRequest meta = SetBlobMetadata(kTarget, kStamp, "b", {{"n", "1"}}, o, "wid");
  EXPECT_EQ(meta.method, "PUT");
  EXPECT_EQ(meta.url, "http://127.0.0.1:10000/devstoreaccount1/tables/b?comp=metadata");
  EXPECT_EQ(meta.headers, CommonAnd({{"x-ms-meta-n", "1"},
                                     {"x-ms-meta-blobtablewriteid", "wid"},
                                     {"If-Match", "\"0x1\""}}));
}

TEST(AzureRequests, ReadsAndContainerCreation) {
  AccessConditions c;
  c.if_none_match = "\"0x9\"";
  HttpRequest get = ReadBlob(kTarget, kStamp, "GET", "b", c);
  EXPECT_EQ(get.method, "GET");
  EXPECT_EQ(get.url, "http://127.0.0.1:10000/devstoreaccount1/tables/b");
  EXPECT_EQ(get.headers, CommonAnd({{"If-None-Match", "\"0x9\""}}));
  HttpRequest head = ReadBlob(kTarget, kStamp, "HEAD", "b", {});
  EXPECT_EQ(head.method, "HEAD");
  EXPECT_EQ(head.headers, Common());
  HttpRequest create = CreateContainer(kTarget, kStamp);
  EXPECT_EQ(create.method, "PUT");
  EXPECT_EQ(create.url, "http://127.0.0.1:10000/devstoreaccount1/tables?restype=container");
  EXPECT_EQ(create.headers, Common());
}

TEST(AzureRequests, LeaseActions) {
  AccessConditions c;
  c.if_match = "\"0x1\"";
  const std::string url = "http://127.0.0.1:10000/devstoreaccount1/tables/b?comp=lease";
  HttpRequest acquire = AcquireLease(kTarget, kStamp, "b", 15, "id-1", c);
  EXPECT_EQ(acquire.method, "PUT");
  EXPECT_EQ(acquire.url, url);
  EXPECT_EQ(acquire.headers, CommonAnd({{"x-ms-lease-action", "acquire"},
                                        {"x-ms-lease-duration", "15"},
                                        {"x-ms-proposed-lease-id", "id-1"},
                                        {"If-Match", "\"0x1\""}}));
  EXPECT_EQ(RenewLease(kTarget, kStamp, "b", "id-1", {}).headers,
            CommonAnd({{"x-ms-lease-action", "renew"}, {"x-ms-lease-id", "id-1"}}));
  EXPECT_EQ(ChangeLease(kTarget, kStamp, "b", "id-1", "id-2", {}).headers,
            CommonAnd({{"x-ms-lease-action", "change"},
                       {"x-ms-lease-id", "id-1"},
                       {"x-ms-proposed-lease-id", "id-2"}}));
  EXPECT_EQ(ReleaseLease(kTarget, kStamp, "b", "id-2", {}).headers,
            CommonAnd({{"x-ms-lease-action", "release"}, {"x-ms-lease-id", "id-2"}}));
  EXPECT_EQ(BreakLease(kTarget, kStamp, "b", std::nullopt, {}).headers,
            CommonAnd({{"x-ms-lease-action", "break"}}));
  HttpRequest broken = BreakLease(kTarget, kStamp, "b", 0, c);
  EXPECT_EQ(broken.url, url);
  EXPECT_EQ(broken.headers, CommonAnd({{"x-ms-lease-action", "break"},
                                       {"x-ms-lease-break-period", "0"},
                                       {"If-Match", "\"0x1\""}}));
}

TEST(AzureRequests, ListBlobsEncodesItsQuery) {
  ListOptions o;
  o.max_results = 7;
  HttpRequest first = ListBlobs(kTarget, kStamp, o);
  EXPECT_EQ(first.method, "GET");
  EXPECT_EQ(first.url,
            "http://127.0.0.1:10000/devstoreaccount1/tables"
            "?restype=container&comp=list&include=metadata&maxresults=7");
  EXPECT_EQ(first.headers, Common());
  o.prefix = "t/a b/";
  o.marker = "m&x=1";
  o.start_from = "t/a b/c";
  EXPECT_EQ(ListBlobs(kTarget, kStamp, o).url,
            "http://127.0.0.1:10000/devstoreaccount1/tables"
            "?restype=container&comp=list&include=metadata&maxresults=7"
            "&prefix=t%2Fa%20b%2F&marker=m%26x%3D1&startFrom=t%2Fa%20b%2Fc");
}

}  // namespace
}  // namespace blobtable::internal::azure
