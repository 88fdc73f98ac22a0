// SPDX-License-Identifier: Apache-2.0
// The Azure backend without a server: Shared Key signing against published
// vectors, connection strings, the retry policy with a fake transport
// (including a lost response), and secrets kept out of logs and errors.
#include <gtest/gtest.h>

#include <algorithm>
#include <deque>
#include <filesystem>
#include <map>
#include <mutex>

#include "blobtable/store.h"
#include "util/base64.h"
#include "storage/azure/azure_blob_store.h"
#include "storage/azure/azure_config.h"
#include "storage/azure/shared_key.h"
#include "util/stored_format.h"
#include "tests/test_util.h"
#include "testing/recording_tracer.h"
#include "util/call_context.h"

namespace blobtable {
namespace {
using namespace internal;

using testing::FakeClock;

// ---- Shared Key ----

TEST(SharedKey, PublishedHmacVector) {
  // azure-sdk-for-go storage/authorization_test.go: key base64("bar").
  EXPECT_EQ(SharedKeySignature("bar", "foobarzoo"), "h5U0ATVX6SpbFX1H6GNuxIMeXXCILLoIvhflPtuQZ30=");
  // azure-storage-node test/common/sharedkey-tests.js, devstore key.
  EXPECT_EQ(
      SharedKeySignature(*Base64Decode(kDevAccountKey),
                         "GET\n\n\n\n\n\n\n\n\n\n\n\nx-ms-date:Fri, 23 Sep 2011 01:37:34 GMT\n"
                         "x-ms-version:2015-12-11\n/devstoreaccount1container\nrestype:container"),
      "NcwivCxw8cocF574jVXvZhhRw63VtDIAF2IUobuj52k=");
}

HttpRequest Req(const char* method, const char* url,
                std::vector<std::pair<std::string, std::string>> headers) {
  HttpRequest r;
  r.method = method;
  r.url = url;
  r.headers = std::move(headers);
  return r;
}

TEST(SharedKey, StringToSignMatchesMicrosoftsExamples) {
  // learn.microsoft.com "Authorize with Shared Key": Get Container Metadata.
  auto r = Req("GET",
               "https://myaccount.blob.core.windows.net/"
               "mycontainer?restype=container&comp=metadata&timeout=20",
               {{"x-ms-date", "Fri, 26 Jun 2015 23:39:12 GMT"}, {"x-ms-version", "2015-02-21"}});
  EXPECT_EQ(SharedKeyStringToSign(r, "myaccount"),
            "GET\n\n\n\n\n\n\n\n\n\n\n\nx-ms-date:Fri, 26 Jun 2015 23:39:12 "
            "GMT\nx-ms-version:2015-02-21\n"
            "/myaccount/mycontainer\ncomp:metadata\nrestype:container\ntimeout:20");
  // Content-Length 0 is signed as an empty line (2015-02-21 and later).
  auto put =
      Req("PUT", "https://myaccount.blob.core.windows.net/mycontainer?restype=container&timeout=30",
          {{"x-ms-date", "Fri, 26 Jun 2015 23:39:12 GMT"},
           {"x-ms-version", "2015-02-21"},
           {"Content-Length", "0"}});
  EXPECT_EQ(SharedKeyStringToSign(put, "myaccount"),
            "PUT\n\n\n\n\n\n\n\n\n\n\n\nx-ms-date:Fri, 26 Jun 2015 23:39:12 "
            "GMT\nx-ms-version:2015-02-21\n"
            "/myaccount/mycontainer\nrestype:container\ntimeout:30");
  // Repeated query values are sorted and joined.
  auto list = Req("GET",
                  "https://myaccount.blob.core.windows.net/mycontainer?restype=container&comp=list&"
                  "include=snapshots&include=metadata&include=uncommittedblobs",
                  {});
  std::string s = SharedKeyStringToSign(list, "myaccount");
  EXPECT_EQ(s.substr(s.find("/myaccount")),
            "/myaccount/mycontainer\ncomp:list\ninclude:metadata,snapshots,uncommittedblobs\n"
            "restype:container");
}

TEST(SharedKey, CanonicalizedResourceKeepsThePathAsSentAndDecodesQueries) {
  auto tail = [](const char* url) {
    std::string s = SharedKeyStringToSign(Req("GET", url, {}), "golangrocksonazure");
    return s.substr(s.find("/golangrocksonazure"));
  };
  // azure-sdk-for-go Test_buildCanonicalizedResource.
  EXPECT_EQ(tail("https://golangrocksonazure.blob.core.windows.net/path?a=b&c=d"),
            "/golangrocksonazure/path\na:b\nc:d");
  EXPECT_EQ(tail("https://golangrocksonazure.blob.core.windows.net/?comp=list"),
            "/golangrocksonazure/\ncomp:list");
  EXPECT_EQ(tail("https://golangrocksonazure.blob.core.windows.net/cnt/bl%20ob"),
            "/golangrocksonazure/cnt/bl%20ob");
  EXPECT_EQ(tail("https://golangrocksonazure.blob.core.windows.net/cnt/blob-._~:,@;+=blob"),
            "/golangrocksonazure/cnt/blob-._~:,@;+=blob");
  // Path-style emulator URLs name the account twice.
  std::string emu = SharedKeyStringToSign(
      Req("GET", "http://127.0.0.1:10000/devstoreaccount1/cnt/blob", {}), "devstoreaccount1");
  EXPECT_EQ(emu.substr(emu.rfind('\n') + 1), "/devstoreaccount1/devstoreaccount1/cnt/blob");
}

TEST(SharedKey, FullRequestSignatures) {
  // Cross-checked with an independent implementation (Python hmac).
  std::string key = *Base64Decode(kDevAccountKey);
  auto create =
      Req("PUT", "http://127.0.0.1:10000/devstoreaccount1/mycontainer?restype=container",
          {{"x-ms-date", "Mon, 01 Jan 2024 00:00:00 GMT"}, {"x-ms-version", "2021-08-06"}});
  EXPECT_EQ(SharedKeySignature(key, SharedKeyStringToSign(create, "devstoreaccount1")),
            "8vHanKaDhMfB+hnQ45Ja7mf/YJU4fILiKGDYSO1qTOE=");
  auto put = Req("PUT", "http://127.0.0.1:10000/devstoreaccount1/mycontainer/my%20blob.txt",
                 {{"x-ms-date", "Mon, 01 Jan 2024 00:00:00 GMT"},
                  {"x-ms-version", "2021-08-06"},
                  {"Content-Type", "text/plain"},
                  {"x-ms-blob-type", "BlockBlob"}});
  put.body = "hello world";  // Content-Length 11 comes from the body
  EXPECT_EQ(SharedKeySignature(key, SharedKeyStringToSign(put, "devstoreaccount1")),
            "ML9yhzaeKVtTmbjqcKwFJ6YAx9mxNFJP/NYTVcoSZfU=");
  auto list = Req("GET",
                  "http://127.0.0.1:10000/devstoreaccount1/mycontainer?restype=container&comp=list&"
                  "include=snapshots&include=metadata&prefix=a%20b",
                  {{"x-ms-date", "Mon, 01 Jan 2024 00:00:00 GMT"}, {"x-ms-version", "2021-08-06"}});
  EXPECT_EQ(SharedKeySignature(key, SharedKeyStringToSign(list, "devstoreaccount1")),
            "KejptSB0FnOb4xbsaerBZ4nZ7mRBtdWA/I6ADCObnz8=");
}

TEST(SharedKey, HeadersSortAsTheServiceSortsThem) {
  // '_' before digits and letters; '-' carries no primary weight.
  EXPECT_LT(HeaderSortKey("x-ms-meta-i_"), HeaderSortKey("x-ms-meta-i0"));
  EXPECT_LT(HeaderSortKey("x-ms-meta-a_b"), HeaderSortKey("x-ms-meta-ab"));
  EXPECT_LT(HeaderSortKey("x-ms-lease-id"), HeaderSortKey("x-ms-meta-a"));
  EXPECT_LT(HeaderSortKey("x-ms-blob-type"), HeaderSortKey("x-ms-client-request-id"));
}

// ---- Connection strings ----

TEST(ConnectionString, DevelopmentStorage) {
  auto c = ParseConnectionString("UseDevelopmentStorage=true");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->blob_endpoint, "http://127.0.0.1:10000/devstoreaccount1");
  EXPECT_EQ(c->account_name, "devstoreaccount1");
  EXPECT_EQ(c->account_key, *Base64Decode(kDevAccountKey));
  EXPECT_EQ(c->transport, "curl");
}

TEST(ConnectionString, AccountKeyEndpointSuffixAndProtocol) {
  auto c = ParseConnectionString(
      "DefaultEndpointsProtocol=https;AccountName=acct;AccountKey=YmFy;EndpointSuffix=core."
      "chinacloudapi.cn;"
      "QueueEndpoint=https://q;");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->blob_endpoint, "https://acct.blob.core.chinacloudapi.cn");
  EXPECT_EQ(c->account_key, "bar");
  auto d = ParseConnectionString("AccountName=acct;AccountKey=YmFy");
  EXPECT_EQ(d->blob_endpoint, "https://acct.blob.core.windows.net");  // https by default
  auto h = ParseConnectionString(
      "accountname=acct;accountkey=YmFy;defaultendpointsprotocol=http;"
      "HttpTransport=CPPREST;CaFile=/etc/ca.pem");
  ASSERT_TRUE(h.ok()) << h.status().ToString();
  EXPECT_EQ(h->blob_endpoint, "http://acct.blob.core.windows.net");
  EXPECT_EQ(h->transport, "cpprest");
  EXPECT_EQ(h->ca_file, "/etc/ca.pem");
}

TEST(ConnectionString, BlobEndpointWithSas) {
  auto c = ParseConnectionString(
      "BlobEndpoint=https://acct.blob.core.windows.net/"
      ";SharedAccessSignature=?sv=2024-01-01&sig=abc%3D");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->blob_endpoint, "https://acct.blob.core.windows.net");
  EXPECT_EQ(c->sas, "sv=2024-01-01&sig=abc%3D");
  EXPECT_TRUE(c->account_key.empty());
}

TEST(ConnectionString, MalformedOnesAreRefusedWithoutEchoingSecrets) {
  struct Case {
    const char* text;
    const char* mentions;
  };
  for (const Case& c : std::vector<Case>{
           {"AccountName=a;AccountKey=not*base64!SECRET", "AccountKey is not valid base64"},
           {"AccountName=a", "needs AccountKey or SharedAccessSignature"},
           {"AccountKey=YmFy", "needs AccountName"},
           {"AccountName=a;AccountKey=YmFy;Bogus=1", "unknown key 'Bogus' in part 3"},
           {"AccountName=a;AccountName=b;AccountKey=YmFy", "given twice"},
           {"AccountName=a;justtext", "not Key=Value"},
           {"AccountName=a;AccountKey=YmFy;HttpTransport=winhttp", "curl' or 'cpprest"},
           {"BlobEndpoint=ftp://x;AccountName=a;AccountKey=YmFy", "not an http(s) URL"},
           {"DefaultEndpointsProtocol=gopher;AccountName=a;AccountKey=YmFy", "https or http"}}) {
    auto r = ParseConnectionString(c.text);
    EXPECT_EQ(r.status().code(), Code::kInvalidArgument) << c.text;
    EXPECT_NE(r.status().message().find(c.mentions), std::string::npos) << r.status().message();
    EXPECT_EQ(r.status().message().find("SECRET"), std::string::npos);
  }
}

// The malformed forms found by review (a colon for the '=', a key pasted
// without its name, a key that lost its padding, an endpoint that is a SAS):
// the message says where, and holds no part of the key or the signature.
TEST(ConnectionString, NoMalformedFormEchoesTheKeyOrTheSignature) {
  const std::string key = "Zm9vYmFyYmF6cXV4c2VjcmV0a2V5bWF0ZXJpYWwxMjM0NTY3ODk=";
  const std::string unpadded = key.substr(0, key.size() - 1);
  const std::string sas = "sv=2026-02-06&ss=b&srt=sco&sp=rwdlac&sig=c2lnbmF0dXJlU0VDUkVU";
  struct Case {
    std::string text;
    const char* mentions;
  };
  for (const Case& c : std::vector<Case>{
           {"AccountName=a;AccountKey:" + key, "unknown key in part 2"},
           {"AccountName=a;" + key, "unknown key in part 2"},
           {"AccountName=a;AccountKey=YmFy;" + unpadded,
            "part 3 (at character 31) is not Key=Value"},
           {"AccountName=a;BlobEndpoint=a.blob.core.windows.net/?" + sas +
                ";SharedAccessSignature=" + sas,
            "BlobEndpoint is not an http(s) URL"},
           {"BlobEndpoint=ftp://x;AccountName=a;AccountKey=" + key, "(its scheme is 'ftp')"}}) {
    auto r = ParseConnectionString(c.text);
    ASSERT_EQ(r.status().code(), Code::kInvalidArgument) << c.mentions;
    const std::string& m = r.status().message();
    EXPECT_NE(m.find(c.mentions), std::string::npos) << m;
    for (size_t i = 0; i + 8 <= key.size(); i += 4)
      EXPECT_EQ(m.find(key.substr(i, 8)), std::string::npos) << m;
    EXPECT_EQ(m.find("sig="), std::string::npos) << m;
    EXPECT_EQ(m.find("c2lnbmF0"), std::string::npos) << m;
  }
}

// The location is read by the connection-string parser's own rules: a
// connection string in lowercase, or with spaces, is never taken for a
// directory (which would be made, named after the account key).
TEST(ConnectionString, AnyCaseIsAConnectionStringNeverADirectory) {
  for (const char* s :
       {"usedevelopmentstorage=true", "USEDEVELOPMENTSTORAGE=true",
        " AccountName = a ; accountkey=YmFy", "blobendpoint=http://x;sharedaccesssignature=sv=1"})
    EXPECT_TRUE(IsConnectionString(s)) << s;
  for (const char* s : {"/var/lib/app", "data", "file:accountname=a;accountkey=b", "a=b"})
    EXPECT_FALSE(IsConnectionString(s)) << s;
  testing::TempDir cwd;
  const std::string typo = cwd.path() + "/accountname=a;acountkey=SECRETKEY";
  auto store = Store::Open(typo);
  EXPECT_EQ(store.status().code(), Code::kInvalidArgument) << store.status().ToString();
  EXPECT_EQ(store.status().message().find("SECRETKEY"), std::string::npos);
  EXPECT_TRUE(std::filesystem::is_empty(cwd.path())) << "a directory was made";
  StoreOptions once;
  once.azure.retry.max_attempts = 1;
  auto lower = Store::Open(
      "accountname=devstoreaccount1;accountkey=YmFy;blobendpoint=http://127.0.0.1:9/"
      "devstoreaccount1",
      once);
  ASSERT_TRUE(lower.ok()) << lower.status().ToString();  // an Azure store: opening sends nothing
  EXPECT_EQ((*lower)->blob_store().Location(), "http://127.0.0.1:9/devstoreaccount1");
  EXPECT_EQ((*lower)->blob_store().Head("b", {}).status().code(), Code::kUnavailable);
}

// cpprestsdk is optional (BLOBTABLE_WITH_CPPREST): a build without it lists
// curl alone and refuses cpprest when the store is opened, with the reason;
// a build with it opens the store (which sends nothing).
TEST(Transports, CpprestOpensWhereBuiltAndIsRefusedClearlyWhereNot) {
  const std::vector<std::string>& names = HttpTransportNames();
  ASSERT_FALSE(names.empty());
  EXPECT_EQ(names[0], "curl");
  const bool built = std::find(names.begin(), names.end(), "cpprest") != names.end();
  auto store = Store::Open(
      "AccountName=devstoreaccount1;AccountKey=YmFy;BlobEndpoint=http://127.0.0.1:9/"
      "devstoreaccount1;HttpTransport=cpprest");
  if (built) {
    EXPECT_TRUE(store.ok()) << store.status().ToString();
  } else {
    EXPECT_EQ(store.status().code(), Code::kInvalidArgument);
    EXPECT_NE(store.status().message().find("BLOBTABLE_WITH_CPPREST"), std::string::npos)
        << store.status().ToString();
  }
}

TEST(HttpDate, FormatsAndParsesRfc1123) {
  TimePoint t = TimePoint(std::chrono::seconds(784111777));
  EXPECT_EQ(FormatHttpDate(t), "Sun, 06 Nov 1994 08:49:37 GMT");
  TimePoint back;
  ASSERT_TRUE(ParseHttpDate("Sun, 06 Nov 1994 08:49:37 GMT", &back));
  EXPECT_EQ(back, t);
  EXPECT_FALSE(ParseHttpDate("yesterday", &back));
  EXPECT_FALSE(ParseHttpDate("Sun, 06 Nov 7705 08:49:37 GMT", &back));  // found by fuzzing
}

// ---- A fake Blob service, enough for Put/Head and scripted failures ----

class FakeService final : public HttpTransport {
 public:
  std::string_view name() const override { return "fake"; }

  Result<HttpResponse> Send(const HttpRequest& r) override {
    std::lock_guard<std::mutex> lock(mu_);
    requests.push_back(r);
    if (!script.empty()) {
      int step = script.front();
      script.pop_front();
      if (step == kRefuse)
        return Status::FromStorage(Code::kUnavailable, 0, kNotSent, "connection refused");
      if (step == kApplyThenLose) {
        Handle(r);
        return Status::Unavailable("connection reset after the request was sent");
      }
      if (step == kCutShort) {
        HttpResponse cut = Handle(r);  // applied; only the status line came back
        cut.headers.clear();
        return cut;
      }
      if (step == kTimeout) {
        if (clock != nullptr) clock->Advance(r.timeout);  // nobody answered for a whole timeout
        return Status::Unavailable("timed out");
      }
      if (step >= 100) {
        HttpResponse resp;
        resp.status = step;
        resp.headers["x-ms-error-code"] = step == 503 ? "ServerBusy" : "InternalError";
        resp.headers["x-ms-request-id"] = "fake-scripted";
        return resp;
      }
    }
    HttpResponse resp = Handle(r);
    // As Azure Storage answers: every answer has a request id, a 404 its code.
    resp.headers["x-ms-request-id"] = "fake-" + std::to_string(requests.size());
    if (resp.status == 404) resp.headers["x-ms-error-code"] = "BlobNotFound";
    for (const auto& [name, value] : extra_headers) resp.headers[name] = value;
    return resp;
  }

  enum Step : int { kHandle = 0, kRefuse = 1, kApplyThenLose = 2, kTimeout = 3, kCutShort = 4 };
  FakeClock* clock = nullptr;  // moved by kTimeout
  std::deque<int> script;      // steps for the next requests, then real handling
  std::vector<HttpRequest> requests;
  std::map<std::string, std::map<std::string, std::string>> blobs;  // path -> metadata
  std::map<std::string, std::string> extra_headers;                 // added to every handled answer

 private:
  static std::string HeaderOf(const HttpRequest& r, const std::string& name) {
    for (const auto& [n, v] : r.headers)
      if (n == name) return v;
    return "";
  }
  HttpResponse Handle(const HttpRequest& r) {
    HttpResponse resp;
    std::string path = r.url.substr(0, r.url.find('?'));
    if (r.url.find("comp=list") != std::string::npos) {
      resp.status = 200;  // an empty page that always points at the same next one
      resp.body =
          "<?xml version=\"1.0\"?><EnumerationResults><Blobs/>"
          "<NextMarker>same</NextMarker></EnumerationResults>";
      return resp;
    }
    if (r.url.find("restype=container") != std::string::npos) {
      resp.status = 201;
      return resp;
    }
    auto it = blobs.find(path);
    if (r.url.find("comp=lease") != std::string::npos) {
      resp.status = HeaderOf(r, "x-ms-lease-action") == "break" ? 202 : 200;
      resp.headers["etag"] = "\"0x1\"";  // as Azure answers every lease action
      return resp;
    }
    if (r.method == "HEAD") {
      if (it == blobs.end()) {
        resp.status = 404;
        return resp;
      }
      resp.status = 200;
      resp.headers["etag"] = "\"0x1\"";
      for (const auto& [k, v] : it->second) resp.headers["x-ms-meta-" + k] = v;
      return resp;
    }
    if (r.method == "DELETE") {
      resp.status = it == blobs.end() ? 404 : 202;
      if (it != blobs.end()) blobs.erase(it);
      return resp;
    }
    if (r.method == "PUT") {
      if (HeaderOf(r, "If-None-Match") == "*" && it != blobs.end()) {
        resp.status = 409;
        resp.headers["x-ms-error-code"] = "BlobAlreadyExists";
        return resp;
      }
      auto& meta = blobs[path];
      meta.clear();
      for (const auto& [n, v] : r.headers)
        if (n.rfind("x-ms-meta-", 0) == 0) meta[n.substr(10)] = v;
      resp.status = 201;
      resp.headers["etag"] = "\"0x1\"";
      return resp;
    }
    resp.status = 400;
    return resp;
  }
  std::mutex mu_;
};

struct Harness {
  std::shared_ptr<FakeService> service = std::make_shared<FakeService>();
  std::vector<std::chrono::milliseconds> sleeps;
  std::vector<std::string> log;
  std::shared_ptr<BlobStore> store;
  FakeClock clock;                    // moved by waits and timeouts
  std::function<void()> during_wait;  // runs in each wait between attempts
  std::shared_ptr<MetricsRegistry> metrics = std::make_shared<MetricsRegistry>();

  explicit Harness(AzureConfig config = DevConfig(), std::shared_ptr<Tracer> tracer = nullptr) {
    AzureStoreOptions o;
    o.config = std::move(config);
    o.tracer = std::move(tracer);
    o.transport = service;
    o.metrics = metrics;
    o.retry.max_attempts = 4;
    o.retry.initial_delay = std::chrono::milliseconds(100);
    o.retry.max_delay = std::chrono::milliseconds(1000);
    o.retry.max_total = std::chrono::milliseconds(10'000);
    o.request_timeout = std::chrono::milliseconds(1'000);  // a retry must fit the budget
    clock.set_sleep([this](std::chrono::milliseconds d) {
      sleeps.push_back(d);
      clock.Advance(d);
      if (during_wait) during_wait();
    });
    o.clock = &clock;
    service->clock = &clock;
    o.request_log = [this](const std::string& line) { log.push_back(line); };
    store = MakeAzureBlobStore(std::move(o));
  }
  static AzureConfig DevConfig() { return *ParseConnectionString("UseDevelopmentStorage=true"); }
};

// The waits between attempts are BackoffDelay's (util/backoff.h): full
// jitter below a bound that doubles from initial_delay up to max_delay
// (before the one retry type, [d/2, d]: BackoffTest has the rule itself).
TEST(Retry, WaitsAreFullJitterBelowADoublingBound) {
  Harness h;  // 100 ms doubling to 1 s, 4 attempts
  h.service->script = {503, 503, 503};
  ASSERT_TRUE(h.store->Put("b", "data", {}).ok());
  ASSERT_EQ(h.sleeps.size(), 3u);
  EXPECT_LT(h.sleeps[0].count(), 100);
  EXPECT_LT(h.sleeps[1].count(), 200);
  EXPECT_LT(h.sleeps[2].count(), 400);
  for (auto d : h.sleeps) EXPECT_GE(d.count(), 0);
}

TEST(Retry, TransientFailuresAreRetriedThenSucceed) {
  Harness h;
  h.service->script = {503, FakeService::kRefuse, 500};
  auto put = h.store->Put("b", "data", {});
  ASSERT_TRUE(put.ok()) << put.status().ToString();
  EXPECT_EQ(h.service->requests.size(), 4u);
  ASSERT_EQ(h.sleeps.size(), 3u);
  EXPECT_LE(h.sleeps[0].count(), 100);
  EXPECT_LE(h.sleeps[2].count(), 400);
  ASSERT_EQ(h.log.size(), 4u);
  EXPECT_NE(h.log[0].find("PUT b -> 503 ServerBusy"), std::string::npos) << h.log[0];
  EXPECT_NE(h.log[1].find("no response (Unavailable)"), std::string::npos) << h.log[1];
  EXPECT_NE(h.log[3].find("-> 201"), std::string::npos) << h.log[3];
  EXPECT_NE(h.log[3].find("attempt 4"), std::string::npos) << h.log[3];
}

TEST(Retry, GivesUpAfterMaxAttemptsAndReportsUnavailable) {
  Harness h;
  h.service->script = {503, 503, 503, 503, 503};
  auto put = h.store->Put("b", "data", {});
  EXPECT_EQ(put.status().code(), Code::kUnavailable);
  EXPECT_EQ(put.status().http_status(), 503);
  EXPECT_EQ(h.service->requests.size(), 4u);
}

TEST(Retry, StopsWhenTheTotalTimeWouldBeExceeded) {
  AzureStoreOptions o;
  auto service = std::make_shared<FakeService>();
  service->script = std::deque<int>(1000, 500);
  std::vector<std::chrono::milliseconds> sleeps;
  o.config = Harness::DevConfig();
  o.transport = service;
  o.retry.max_attempts = 1000;  // the budget ends it, not the attempts
  o.retry.initial_delay = std::chrono::milliseconds(4000);
  o.retry.max_delay = std::chrono::milliseconds(4000);
  o.retry.max_total = std::chrono::milliseconds(5000);
  o.request_timeout = std::chrono::milliseconds(100);
  FakeClock clock;
  clock.set_sleep([&](std::chrono::milliseconds d) { sleeps.push_back(d); });
  o.clock = &clock;
  auto store = MakeAzureBlobStore(o);
  EXPECT_EQ(store->Head("b", {}).status().code(), Code::kUnavailable);
  // Waits of 0-4 s (full jitter) within a 5 s budget: a retry is sent only
  // if its wait and its request timeout fit what is left, and the first
  // always does.
  std::chrono::milliseconds waited{0};
  for (auto d : sleeps) waited += d;
  EXPECT_LE(waited + o.request_timeout, o.retry.max_total);
  EXPECT_GE(sleeps.size(), 1u);
  EXPECT_EQ(service->requests.size(), sleeps.size() + 1);
  EXPECT_LT(service->requests.size(), 1000u);
}

TEST(Retry, ErrorsThatRetryingCannotFixAreNotRetried) {
  Harness h;
  EXPECT_EQ(h.store->Head("missing", {}).status().code(), Code::kNotFound);
  EXPECT_EQ(h.service->requests.size(), 1u);
  EXPECT_TRUE(h.sleeps.empty());
}

TEST(Retry, ConditionalWriteWhoseResponseWasLostIsNotAFalseConflict) {
  Harness h;
  // The first create is applied, but its answer is lost; the retry meets the
  // blob it made itself (409), recognises its write id, and succeeds.
  h.service->script = {FakeService::kApplyThenLose};
  PutOptions create;
  create.conditions.if_none_match = "*";
  create.metadata = {{"k", "v"}};
  auto put = h.store->Put("b", "data", create);
  ASSERT_TRUE(put.ok()) << put.status().ToString();
  EXPECT_EQ(put->etag, "\"0x1\"");
  // Someone else's blob with the same condition is a real conflict.
  auto again = h.store->Put("b", "data", create);
  EXPECT_EQ(again.status().code(), Code::kConflict);
  // And a lost answer followed by someone else's write stays a conflict.
  h.service->script = {FakeService::kRefuse};
  auto third = h.store->Put("b", "data", create);
  EXPECT_EQ(third.status().code(), Code::kConflict);
  // The write id never shows in the metadata callers see.
  auto head = h.store->Head("b", {});
  ASSERT_TRUE(head.ok());
  EXPECT_EQ(head->properties.metadata, (Metadata{{"k", "v"}}));
}

// Numbers in answers are parsed without exceptions: a hostile or broken
// server gets a clear Corruption, never an escaped std::out_of_range.
TEST(Responses, MalformedNumericHeadersAreCorruptionNotExceptions) {
  Harness h;
  ASSERT_TRUE(h.store->Put("b", "x", {}).ok());
  for (const char* length : {"99999999999999999999999", "12abc", "-1", ""}) {
    h.service->extra_headers = {{"content-length", length}};
    auto head = h.store->Head("b", {});
    EXPECT_EQ(head.status().code(), Code::kCorruption)
        << length << ": " << head.status().ToString();
    EXPECT_NE(head.status().message().find("Content-Length"), std::string::npos);
  }
  for (const char* seconds : {"abc", "99999999999999999999"}) {
    h.service->extra_headers = {{"x-ms-lease-time", seconds}};
    auto broken = h.store->BreakLease("b", 0, {});
    EXPECT_EQ(broken.status().code(), Code::kCorruption) << seconds;
  }
  h.service->extra_headers = {{"content-length", "0"}, {"x-ms-lease-time", "7"}};
  EXPECT_TRUE(h.store->Head("b", {}).ok());
  auto broken = h.store->BreakLease("b", 0, {});
  ASSERT_TRUE(broken.ok()) << broken.status().ToString();
  EXPECT_EQ(broken->lease_time_seconds, 7);
}

// RetryPolicy::max_total bounds the whole operation: a retry is sent only if
// it can finish (its request timeout) within what is left.
TEST(Retry, TheBudgetCountsTimeoutsNotOnlyWaits) {
  Harness h;  // 1 s per request, 10 s in all, 4 attempts
  const auto start = h.clock.Steady();
  h.service->script = {FakeService::kTimeout, FakeService::kTimeout, FakeService::kTimeout,
                       FakeService::kTimeout};
  EXPECT_EQ(h.store->Head("b", {}).status().code(), Code::kUnavailable);
  EXPECT_LE(h.clock.Steady() - start, std::chrono::milliseconds(10'000));
  // A budget smaller than two timeouts allows no retry at all.
  AzureStoreOptions o;
  o.config = Harness::DevConfig();
  auto service = std::make_shared<FakeService>();
  FakeClock clock;
  service->clock = &clock;
  service->script = {FakeService::kTimeout, FakeService::kTimeout, FakeService::kTimeout};
  o.transport = service;
  o.request_timeout = std::chrono::milliseconds(2'000);
  o.retry.max_total = std::chrono::milliseconds(5'000);
  o.retry.initial_delay = std::chrono::milliseconds(200);
  o.clock = &clock;
  auto store = MakeAzureBlobStore(o);
  const auto t0 = clock.Steady();
  EXPECT_EQ(store->Head("b", {}).status().code(), Code::kUnavailable);
  EXPECT_LE(clock.Steady() - t0, std::chrono::milliseconds(5'000));  // was 6.5 s: three timeouts
  EXPECT_EQ(service->requests.size(), 2u);
}

// A read with a deadline (what a stale-if-error read of the cache sends)
// answers Unavailable by the deadline: attempts are cut to the time left,
// and none starts after it, whatever the retry schedule would still allow.
TEST(Retry, AReadWithADeadlineAnswersByThen) {
  Harness h;  // 1 s per request, 10 s in all, 4 attempts
  h.service->script = {FakeService::kTimeout, FakeService::kTimeout, FakeService::kTimeout,
                       FakeService::kTimeout};
  ReadOptions o;
  const auto start = h.clock.Steady();
  o.deadline = start + std::chrono::milliseconds(1'500);
  EXPECT_EQ(h.store->Get("b", o).status().code(), Code::kUnavailable);
  EXPECT_LE(h.clock.Steady() - start, std::chrono::milliseconds(1'500));
  ASSERT_EQ(h.service->requests.size(), 2u);
  EXPECT_EQ(h.service->requests[0].timeout, std::chrono::milliseconds(1'000));
  // What is left after the first attempt and a wait (full jitter: the wait
  // may be 0 ms).
  EXPECT_EQ(h.service->requests[1].timeout, std::chrono::milliseconds(500) - h.sleeps.at(0));
  // A deadline already past sends nothing.
  h.service->requests.clear();
  o.deadline = h.clock.Steady();
  EXPECT_EQ(h.store->Get("b", o).status().code(), Code::kUnavailable);
  EXPECT_TRUE(h.service->requests.empty());
}

// Without a cache there is nothing to read offline: NotFound, no request.
// (The store applies the policy; the backend knows none.)
TEST(Retry, AnOfflineReadWithoutACacheSendsNothing) {
  Harness h;
  StoreOptions o;
  o.clock = &h.clock;
  auto store = Store::FromBlobStore(h.store, o);
  auto table = store->OpenTable("orders");
  ASSERT_TRUE(table.ok());
  EXPECT_EQ(table->Get("p", "r", ReadPolicy::Offline()).status().code(), Code::kNotFound);
  EXPECT_TRUE(h.service->requests.empty());
  (void)table->Get("p", "r", ReadPolicy::Fresh());
  EXPECT_FALSE(h.service->requests.empty());  // a fresh read asks
}

// A conditional write refused after an attempt whose answer was lost is
// checked by its write id; when the check cannot tell, the answer is
// OutcomeUnknown, never Conflict (a caller would apply its change twice).
TEST(Retry, AnUncheckableLostWriteIsOutcomeUnknownNotConflict) {
  PutOptions create;
  create.conditions.if_none_match = "*";
  {
    Harness h;  // the check itself fails: the HEAD gets only 503s (a create is not re-sent)
    h.service->script = {FakeService::kApplyThenLose, 503, 503, 503, 503};
    auto put = h.store->Put("b", "data", create);
    EXPECT_EQ(put.status().code(), Code::kOutcomeUnknown) << put.status().ToString();
  }
  // (A create is never re-sent after such an attempt, so no retry can meet
  // another writer's blob: InteropTest.ACreateIsNeverSentAgain... on Azurite.)
  {
    Harness h;  // answers that were seen (503: not applied) leave a real conflict
    ASSERT_TRUE(h.store->Put("b", "data", {}).ok());
    h.service->script = {503};
    EXPECT_EQ(h.store->Put("b", "data", create).status().code(), Code::kConflict);
  }
}

// A conditional write that gives up after an attempt that may have been
// applied (no answer, 500, 504) is OutcomeUnknown whatever the last attempt
// said: Unavailable would invite a retry that meets the write itself as a
// Conflict. Unconditional writes, harmless to retry, stay Unavailable; so
// does a conditional one whose every attempt was surely refused.
TEST(Retry, AConditionalWriteThatGivesUpAfterAMaybeAppliedAttemptIsOutcomeUnknown) {
  PutOptions at;
  at.conditions.if_match = "\"0x1\"";
  WriteOptions del;
  del.conditions.if_match = "\"0x1\"";
  for (std::deque<int> script : {std::deque<int>{FakeService::kApplyThenLose, 503, 503, 503},
                                 std::deque<int>{503, 503, 503, FakeService::kTimeout},
                                 std::deque<int>{500, 500, 500, 500}}) {
    Harness h;
    ASSERT_TRUE(h.store->Put("b", "x", {}).ok());
    h.service->script = script;
    auto put = h.store->Put("b", "y", at);
    // Applied and its answer lost: the write id found on the blob at the
    // end settles it; otherwise unknown.
    const bool applied = script.front() == FakeService::kApplyThenLose;
    EXPECT_EQ(put.status().code(), applied ? Code::kOk : Code::kOutcomeUnknown)
        << put.status().ToString();
    h.service->script = script;
    EXPECT_EQ(h.store->Delete("b", del).code(), Code::kOutcomeUnknown);
    h.service->script = script;
    EXPECT_EQ(h.store->Put("b", "z", {}).status().code(), Code::kUnavailable);
  }
  Harness h;
  h.service->script = {FakeService::kRefuse, 503, FakeService::kRefuse, 503};
  EXPECT_EQ(h.store->Put("b", "y", at).status().code(), Code::kUnavailable);
}

// A delete retried after a lost answer that finds nothing: unconditional,
// it is gone as asked; conditional, whether the condition held is unknown.
// After answers that were seen (503), a blob that never existed is NotFound.
TEST(Retry, DeletesAfterLostAnswersSayOnlyWhatIsKnown) {
  Harness h;
  ASSERT_TRUE(h.store->Put("a", "x", {}).ok());
  h.service->script = {FakeService::kApplyThenLose};
  EXPECT_TRUE(h.store->Delete("a", {}).ok());
  ASSERT_TRUE(h.store->Put("c", "x", {}).ok());
  h.service->script = {FakeService::kApplyThenLose};
  WriteOptions at;
  at.conditions.if_match = "\"0x1\"";
  EXPECT_EQ(h.store->Delete("c", at).code(), Code::kOutcomeUnknown);
  h.service->script = {503};
  EXPECT_EQ(h.store->Delete("never", {}).code(), Code::kNotFound);
}

// A listing that repeats its marker stops with Corruption instead of
// looping forever (query and recover page through listings).
TEST(Responses, AListingThatRepeatsItsMarkerStops) {
  Harness h;
  ListOptions o;
  auto first = h.store->List(o);
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  o.marker = first->next_marker;
  EXPECT_EQ(h.store->List(o).status().code(), Code::kCorruption);
}

// An answer cut short (2xx without its ETag) counts as no answer: settled
// by the write id (a create is not re-sent), never reported as a success
// without an ETag.
TEST(Responses, AnAnswerCutShortIsRetriedNotTakenAsSuccess) {
  Harness h;
  h.service->script = {FakeService::kCutShort};
  PutOptions create;
  create.conditions.if_none_match = "*";
  auto put = h.store->Put("b", "x", create);
  ASSERT_TRUE(put.ok()) << put.status().ToString();
  EXPECT_EQ(put->etag, "\"0x1\"");
  EXPECT_EQ(h.service->requests.size(), 2u);  // cut, checked
}

TEST(RequestLog, HoldsNoSecrets) {
  // Shared Key: the key and signature must stay out of the log.
  Harness keyed;
  keyed.service->script = {503};
  ASSERT_TRUE(keyed.store->Put("b", "x", {}).ok());
  // SAS: the signature travels in the URL, which is never logged.
  auto sas_config = *ParseConnectionString(
      "BlobEndpoint=http://127.0.0.1:1/acct;SharedAccessSignature=sv=2024&sig=TOPSECRETSIG");
  Harness sas(sas_config);
  ASSERT_TRUE(sas.store->Put("b", "x", {}).ok());
  EXPECT_NE(sas.service->requests.back().url.find("sig=TOPSECRETSIG"), std::string::npos);
  for (const auto* lines : {&keyed.log, &sas.log}) {
    ASSERT_FALSE(lines->empty());
    for (const std::string& line : *lines) {
      EXPECT_EQ(line.find("TOPSECRETSIG"), std::string::npos) << line;
      EXPECT_EQ(line.find("sig="), std::string::npos) << line;
      EXPECT_EQ(line.find("SharedKey"), std::string::npos) << line;
      EXPECT_EQ(line.find("Authorization"), std::string::npos) << line;
      EXPECT_EQ(line.find(kDevAccountKey), std::string::npos) << line;
    }
  }
}

TEST(RequestLog, ErrorMessagesDoNotRepeatTheSignedString) {
  // Azure's AuthenticationFailed message quotes the string it signed.
  class Refuses final : public HttpTransport {
   public:
    std::string_view name() const override { return "refuses"; }
    Result<HttpResponse> Send(const HttpRequest&) override {
      HttpResponse r;
      r.status = 403;
      r.headers["x-ms-error-code"] = "AuthenticationFailed";
      r.body =
          "<?xml version=\"1.0\"?><Error><Code>AuthenticationFailed</Code><Message>Server failed "
          "to authenticate the request. The MAC signature found in the HTTP request "
          "'c2VjcmV0c2lnbmF0dXJl' is not the same as any computed signature. Server used "
          "following string to sign: 'PUT\n\n\nsecret'.</Message></Error>";
      return r;
    }
  };
  AzureStoreOptions o;
  o.config = Harness::DevConfig();
  o.transport = std::make_shared<Refuses>();
  auto store = MakeAzureBlobStore(o);
  auto put = store->Put("b", "x", {});
  EXPECT_EQ(put.status().storage_code(), "AuthenticationFailed");
  EXPECT_EQ(put.status().message().find("c2VjcmV0"), std::string::npos) << put.status().message();
  EXPECT_EQ(put.status().message().find("string to sign"), std::string::npos);
}

// Store::Metrics (docs/observability.md#metrics): a 503 retried is two
// requests (one 503, one 201), a retry, a throttle and the wait between.
TEST(AzureMetrics, ARetried503IsARequestARetryAThrottleAndAWait) {
  Harness h;
  h.service->script = {503};
  ASSERT_TRUE(h.store->Put("b", "x", {}).ok());
  h.service->script = {FakeService::kRefuse, FakeService::kRefuse};
  ASSERT_TRUE(h.store->Head("b", {}).ok());
  const MetricsSnapshot m = h.metrics->Snapshot();
  EXPECT_EQ(m.Value("blobtable_http_requests", {{"op", "PUT"}, {"status", "503"}}), 1);
  EXPECT_EQ(m.Value("blobtable_http_requests", {{"op", "PUT"}, {"status", "201"}}), 1);
  EXPECT_EQ(m.Value("blobtable_http_requests", {{"op", "HEAD"}, {"status", "none"}}), 2);
  EXPECT_EQ(m.Value("blobtable_http_requests", {{"op", "HEAD"}, {"status", "200"}}), 1);
  EXPECT_EQ(m.Value("blobtable_http_retries"), 3);
  EXPECT_EQ(m.Value("blobtable_http_throttled", {{"status", "503"}}), 1);
  EXPECT_EQ(m.Value("blobtable_http_throttled"), 1);
  double waited = 0;
  for (auto d : h.sleeps) waited += std::chrono::duration<double>(d).count();
  ASSERT_EQ(h.sleeps.size(), 3u);
  EXPECT_DOUBLE_EQ(m.Value("blobtable_http_backoff_seconds"), waited);
  EXPECT_EQ(m.Count("blobtable_http_request_seconds"), 5u);
}

// StoreOptions::tracer (docs/observability.md#traces): each HTTP attempt a
// span under the one open on its thread, with the client request id it
// sent and the request id Azure answered with; outside any span, a root.
TEST(AzureTrace, EachAttemptIsASpanWithItsRequestIdsUnderTheCallsSpan) {
  auto tracer = std::make_shared<internal::RecordingTracer>();
  Harness h(Harness::DevConfig(), tracer);
  h.service->script = {503};
  {
    internal::Span call(tracer.get(), "blobtable.insert");
    ASSERT_TRUE(h.store->Put("b", "x", {}).ok());
    call.End(Status::OK());
  }
  ASSERT_TRUE(h.store->Head("b", {}).ok());
  const auto spans = tracer->spans();
  ASSERT_EQ(spans.size(), 4u);
  ASSERT_EQ(h.service->requests.size(), 3u);
  EXPECT_EQ(spans[0].name, "blobtable.insert");
  for (size_t i = 1; i < 4; ++i) {
    const auto& s = spans[i];
    EXPECT_EQ(s.name, "blobtable.request");
    EXPECT_EQ(s.parent, i < 3 ? spans[0].id : 0u);  // the HEAD: outside any span
    EXPECT_EQ(s.code, Code::kOk);
    std::string sent;
    for (const auto& [name, value] : h.service->requests[i - 1].headers)
      if (name == "x-ms-client-request-id") sent = value;
    EXPECT_EQ(s.attributes.at("client_request_id"), sent);
    EXPECT_FALSE(s.attributes.at("client_request_id").empty());
  }
  EXPECT_EQ(spans[1].attributes.at("op"), "PUT");
  EXPECT_EQ(spans[1].attributes.at("attempt"), "1");
  EXPECT_EQ(spans[1].attributes.at("http_status"), "503");
  EXPECT_EQ(spans[1].attributes.at("error_code"), "ServerBusy");
  EXPECT_EQ(spans[1].attributes.at("request_id"), "fake-scripted");
  EXPECT_EQ(spans[2].attributes.at("attempt"), "2");
  EXPECT_EQ(spans[2].attributes.at("http_status"), "201");
  EXPECT_EQ(spans[2].attributes.at("request_id"), "fake-2");
  EXPECT_EQ(spans[3].attributes.at("op"), "HEAD");
  EXPECT_EQ(spans[3].attributes.at("blob"), "b");
  EXPECT_FALSE(tracer->misused());
}

// Store::Health's record of what storage said: the last failure (no
// answer) and when, then an answer.
TEST(AzureHealth, TheLastFailureAndTheLastAnswerAreNoted) {
  Harness h;
  h.service->script = {FakeService::kRefuse};
  ASSERT_TRUE(h.store->Put("b", "x", {}).ok());  // refused, then retried
  const auto last = h.metrics->storage_outcomes().last();
  ASSERT_TRUE(last.error.has_value());
  EXPECT_EQ(last.error->code(), Code::kUnavailable);
  EXPECT_NE(last.error->message().find("PUT 'b'"), std::string::npos) << last.error->ToString();
  ASSERT_TRUE(last.error_at.has_value());
  ASSERT_TRUE(last.answer_at.has_value());
  EXPECT_GE(*last.answer_at, *last.error_at);
  EXPECT_FALSE(last.failed_last);
}

}  // namespace
}  // namespace blobtable
