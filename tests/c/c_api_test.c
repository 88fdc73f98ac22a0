/* SPDX-License-Identifier: Apache-2.0 */
/* The C API (include/blobtable/c.h) from C: every case on the store named by
 * argv[1] (a directory, or an Azure connection string), run by
 * tests/c_api_test.cc on the embedded store and on Azurite, under ASan and
 * LeakSanitizer in CI's sanitizer build (a handle not freed is a leak
 * reported there). Compiled as C99 with -Wall -Wextra -pedantic. Prints
 * "c api: N checks passed" and exits 0, or names each failed check. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "blobtable/c.h"

static int checks = 0;
static int failures = 0;

/* A check: on failure prints where, what, and the thread's last error. */
#define CHECK(cond)                                                                            \
  do {                                                                                         \
    ++checks;                                                                                  \
    if (!(cond)) {                                                                             \
      ++failures;                                                                              \
      fprintf(stderr, "%s:%d: check failed: %s (last error: %s)\n", __FILE__, __LINE__, #cond, \
              blobtable_errmsg(NULL));                                                         \
    }                                                                                          \
  } while (0)
#define CHECK_CODE(call, code) CHECK((call) == (code))
#define CHECK_OK(call) CHECK_CODE(call, BLOBTABLE_OK)
/* A string literal as (pointer, length). */
#define S(lit) lit, (sizeof(lit) - 1)

static const char* location;
static size_t location_len;
static int remote; /* a connection string: Azurite */

/* Equal to a literal: length and bytes. */
static int Same(const char* p, size_t len, const char* lit) {
  return p != NULL && len == strlen(lit) && memcmp(p, lit, len) == 0;
}

static blobtable_store* OpenStore(void) {
  blobtable_store* store = NULL;
  blobtable_options* options = blobtable_options_create();
  CHECK(options != NULL);
  /* The tests' own cache directory under TMPDIR (the isolated env sets HOME). */
  CHECK_OK(blobtable_options_set_request_timeout_ms(options, 10000));
  CHECK_OK(blobtable_open(location, location_len, options, &store));
  blobtable_options_free(options);
  CHECK(store != NULL);
  return store;
}

static blobtable_table* OpenTable(blobtable_store* store, const char* name) {
  blobtable_table* table = NULL;
  CHECK_OK(blobtable_table_open(store, name, strlen(name), &table));
  CHECK(table != NULL);
  return table;
}

static void TestErrorsAndVersions(void) {
  size_t len = 99;
  blobtable_store* store = (blobtable_store*)1;
  CHECK(strcmp(blobtable_version(), "0.1.0") == 0);
  CHECK(strcmp(blobtable_code_name(BLOBTABLE_OK), "OK") == 0);
  CHECK(strcmp(blobtable_code_name(BLOBTABLE_OUTCOME_UNKNOWN), "OutcomeUnknown") == 0);
  CHECK(strcmp(blobtable_code_name(99), "Unknown") == 0);
  CHECK(blobtable_code_retryable(BLOBTABLE_CONFLICT) == 1);
  CHECK(blobtable_code_retryable(BLOBTABLE_OUTCOME_UNKNOWN) == 0);
  CHECK(blobtable_code_retryable(BLOBTABLE_OK) == 0);
  /* A NULL location with a length: refused, *out NULL, the message says which. */
  CHECK_CODE(blobtable_open(NULL, 3, NULL, &store), BLOBTABLE_INVALID_ARGUMENT);
  CHECK(store == NULL);
  CHECK(blobtable_errcode() == BLOBTABLE_INVALID_ARGUMENT);
  CHECK(strstr(blobtable_errmsg(&len), "location") != NULL);
  CHECK(len == strlen(blobtable_errmsg(NULL)));
  CHECK_CODE(blobtable_open(S("AccountName=x;AccountKey=%%%"), NULL, &store),
             BLOBTABLE_INVALID_ARGUMENT);
  CHECK_CODE(blobtable_options_set_container(NULL, S("x")), BLOBTABLE_INVALID_ARGUMENT);
  CHECK_CODE(blobtable_options_set_create_if_missing(NULL, 1), BLOBTABLE_INVALID_ARGUMENT);
  /* A success clears the thread's last failure. */
  {
    blobtable_options* options = blobtable_options_create();
    CHECK_CODE(blobtable_options_set_txn_lease_seconds(options, 5), BLOBTABLE_INVALID_ARGUMENT);
    CHECK_CODE(blobtable_options_set_read_policy(options, 7, 0), BLOBTABLE_INVALID_ARGUMENT);
    CHECK_OK(blobtable_options_set_read_policy(options, BLOBTABLE_READ_MAX_STALE, 500));
    CHECK(blobtable_errcode() == BLOBTABLE_OK);
    CHECK(strcmp(blobtable_errmsg(&len), "") == 0 && len == 0);
    blobtable_options_free(options);
  }
  blobtable_options_free(NULL); /* every free accepts NULL */
  blobtable_close(NULL);
  blobtable_table_close(NULL);
  blobtable_entity_free(NULL);
  blobtable_query_free(NULL);
  blobtable_txn_free(NULL);
  blobtable_lock_free(NULL);
  blobtable_queue_close(NULL);
  blobtable_queue_item_free(NULL);
  blobtable_counter_close(NULL);
  blobtable_strings_free(NULL);
}

/* An entity holding a property of every type, with values at their edges. */
static const char kBytes[] = {'\0', '\x01', '\xff', 'z'};
static blobtable_entity* EveryType(const char* rk) {
  blobtable_entity* e = blobtable_entity_create(S("types"), rk, strlen(rk));
  CHECK(e != NULL);
  CHECK_OK(blobtable_entity_set_string(e, S("s"), S("caf\xc3\xa9 \0 nul"))); /* a NUL inside */
  CHECK_OK(blobtable_entity_set_binary(e, S("b"), kBytes, sizeof kBytes));
  CHECK_OK(blobtable_entity_set_bool(e, S("t"), 1));
  CHECK_OK(blobtable_entity_set_datetime(e, S("d"), INT64_C(16094592001234567)));
  CHECK_OK(blobtable_entity_set_double(e, S("x"), -0.1));
  CHECK_OK(blobtable_entity_set_guid(e, S("g"), S("3f2504e0-4f89-11d3-9a0c-0305e82c3301")));
  CHECK_OK(blobtable_entity_set_int32(e, S("i"), INT32_MIN));
  CHECK_OK(blobtable_entity_set_int64(e, S("l"), INT64_MAX));
  return e;
}

static void CheckEveryType(const blobtable_entity* e) {
  const char* s;
  const void* b;
  size_t len;
  int t;
  int64_t d, l, wide;
  double x;
  int32_t i;
  blobtable_type type;
  const char* name;
  size_t name_len;
  CHECK(blobtable_entity_count(e) == 8);
  CHECK_OK(blobtable_entity_get_string(e, S("s"), &s, &len));
  CHECK(len == 11 && memcmp(s, "caf\xc3\xa9 \0 nul", 11) == 0);
  CHECK_OK(blobtable_entity_get_binary(e, S("b"), &b, &len));
  CHECK(len == sizeof kBytes && memcmp(b, kBytes, len) == 0);
  CHECK_OK(blobtable_entity_get_bool(e, S("t"), &t));
  CHECK(t == 1);
  CHECK_OK(blobtable_entity_get_datetime(e, S("d"), &d));
  CHECK(d == INT64_C(16094592001234567));
  CHECK_OK(blobtable_entity_get_double(e, S("x"), &x));
  CHECK(x == -0.1);
  CHECK_OK(blobtable_entity_get_guid(e, S("g"), &s, &len));
  CHECK(Same(s, len, "3f2504e0-4f89-11d3-9a0c-0305e82c3301"));
  CHECK_OK(blobtable_entity_get_int32(e, S("i"), &i));
  CHECK(i == INT32_MIN);
  CHECK_OK(blobtable_entity_get_int64(e, S("l"), &l));
  CHECK(l == INT64_MAX);
  CHECK_OK(blobtable_entity_get_int64(e, S("i"), &wide)); /* an Int32 reads as int64 */
  CHECK(wide == INT32_MIN);
  /* Properties in name order, each with its type. */
  CHECK_OK(blobtable_entity_property(e, 0, &name, &name_len, &type));
  CHECK(Same(name, name_len, "b") && type == BLOBTABLE_BINARY);
  CHECK_OK(blobtable_entity_property(e, 7, &name, &name_len, &type));
  CHECK(Same(name, name_len, "x") && type == BLOBTABLE_DOUBLE);
  CHECK_CODE(blobtable_entity_property(e, 8, &name, &name_len, &type), BLOBTABLE_INVALID_ARGUMENT);
  CHECK_OK(blobtable_entity_type(e, S("d"), &type));
  CHECK(type == BLOBTABLE_DATETIME);
  /* Another type, or none. */
  CHECK_CODE(blobtable_entity_get_int32(e, S("l"), &i), BLOBTABLE_INVALID_ARGUMENT);
  CHECK(strstr(blobtable_errmsg(NULL), "Int64") != NULL);
  CHECK_CODE(blobtable_entity_get_string(e, S("missing"), &s, &len), BLOBTABLE_NOT_FOUND);
}

static void TestEntityRoundTrip(blobtable_store* store) {
  blobtable_table* table = OpenTable(store, "ctypes");
  blobtable_entity* e = EveryType("r1");
  blobtable_entity* got = NULL;
  const char* etag;
  size_t etag_len;
  /* Keys given without a terminating NUL: only their length counts. */
  char pk[5] = {'t', 'y', 'p', 'e', 's'};
  CHECK_OK(blobtable_insert(table, e));
  etag = blobtable_entity_etag(e, &etag_len);
  CHECK(etag_len > 0);
  CHECK(blobtable_entity_timestamp(e) > 0);
  CHECK_OK(blobtable_get(table, pk, sizeof pk, S("r1"), &got));
  CHECK(got != NULL);
  if (got != NULL) {
    size_t got_len;
    const char* got_etag = blobtable_entity_etag(got, &got_len);
    CheckEveryType(got);
    CHECK(got_len == etag_len && memcmp(got_etag, etag, etag_len) == 0);
    blobtable_entity_free(got);
  }
  got = (blobtable_entity*)1;
  CHECK_CODE(blobtable_get(table, S("types"), S("nope"), &got), BLOBTABLE_NOT_FOUND);
  CHECK(got == NULL);
  blobtable_entity_free(e);
  blobtable_table_close(table);
}

static void TestConditionalWrites(blobtable_store* store) {
  blobtable_table* table = OpenTable(store, "cwrites");
  blobtable_entity* e = blobtable_entity_create(S("p"), S("r"));
  blobtable_entity* stale;
  blobtable_entity* got = NULL;
  int64_t n = 0;
  const char* s;
  size_t len;
  CHECK_OK(blobtable_entity_set_int64(e, S("n"), 1));
  CHECK_OK(blobtable_entity_set_string(e, S("keep"), S("yes")));
  CHECK_OK(blobtable_insert(table, e));
  CHECK_CODE(blobtable_insert(table, e), BLOBTABLE_CONFLICT);
  CHECK(blobtable_errcode() == BLOBTABLE_CONFLICT);
  stale = blobtable_entity_clone(e);
  /* Replace at the entity's own ETag (NULL if_match), then the stale copy fails. */
  CHECK_OK(blobtable_entity_set_int64(e, S("n"), 2));
  CHECK_OK(blobtable_replace(table, e, NULL, 0));
  CHECK_CODE(blobtable_replace(table, stale, NULL, 0), BLOBTABLE_CONFLICT);
  CHECK(blobtable_err_http_status() == 412 || blobtable_err_http_status() == 0);
  CHECK_CODE(blobtable_merge(table, stale, S("\"not-an-etag\"")), BLOBTABLE_CONFLICT);
  /* Merge keeps what it does not name; "*" matches any version. */
  CHECK_OK(blobtable_entity_remove(stale, S("keep")));
  CHECK_CODE(blobtable_entity_remove(stale, S("keep")), BLOBTABLE_NOT_FOUND);
  CHECK_OK(blobtable_entity_set_int64(stale, S("n"), 3));
  CHECK_OK(blobtable_merge(table, stale, S("*")));
  CHECK_OK(blobtable_get(table, S("p"), S("r"), &got));
  CHECK_OK(blobtable_entity_get_int64(got, S("n"), &n));
  CHECK(n == 3);
  CHECK_OK(blobtable_entity_get_string(got, S("keep"), &s, &len));
  CHECK(Same(s, len, "yes"));
  blobtable_entity_free(got);
  /* Upserts: replace drops "keep", merge adds to it. */
  CHECK_OK(blobtable_upsert(table, stale));
  CHECK_OK(blobtable_get(table, S("p"), S("r"), &got));
  CHECK_CODE(blobtable_entity_get_string(got, S("keep"), &s, &len), BLOBTABLE_NOT_FOUND);
  blobtable_entity_free(got);
  CHECK_OK(blobtable_upsert_merge(table, e));
  /* Delete: a wrong ETag fails, an empty one is refused, "*" deletes. */
  CHECK_CODE(blobtable_delete(table, S("p"), S("r"), S("\"0x0\"")), BLOBTABLE_CONFLICT);
  CHECK_CODE(blobtable_delete(table, S("p"), S("r"), NULL, 0), BLOBTABLE_INVALID_ARGUMENT);
  CHECK_OK(blobtable_delete(table, S("p"), S("r"), S("*")));
  CHECK_CODE(blobtable_get(table, S("p"), S("r"), &got), BLOBTABLE_NOT_FOUND);
  CHECK_CODE(blobtable_replace(table, e, S("*")), BLOBTABLE_NOT_FOUND);
  /* What the library refuses, it names. */
  CHECK_OK(blobtable_entity_set_int32(e, S("bad name"), 1));
  CHECK_CODE(blobtable_upsert(table, e), BLOBTABLE_INVALID_ARGUMENT);
  CHECK(strstr(blobtable_errmsg(NULL), "bad name") != NULL);
  CHECK_CODE(blobtable_insert(NULL, e), BLOBTABLE_INVALID_ARGUMENT);
  CHECK_CODE(blobtable_insert(table, NULL), BLOBTABLE_INVALID_ARGUMENT);
  blobtable_entity_free(stale);
  blobtable_entity_free(e);
  blobtable_table_close(table);
}

static int AddOne(blobtable_entity* e, int exists, void* arg) {
  int64_t n = 0;
  (void)arg;
  if (exists && blobtable_entity_get_int64(e, S("n"), &n) != BLOBTABLE_OK)
    return blobtable_errcode();
  return blobtable_entity_set_int64(e, S("n"), n + 1);
}

static int Refuse(blobtable_entity* e, int exists, void* arg) {
  (void)e;
  (void)exists;
  (void)arg;
  return BLOBTABLE_BUSY;
}

static void TestUpdate(blobtable_store* store) {
  blobtable_table* table = OpenTable(store, "cupdate");
  blobtable_entity* out = NULL;
  int64_t n = 0;
  int i;
  for (i = 0; i < 3; ++i) CHECK_OK(blobtable_update(table, S("c"), S("n"), AddOne, NULL, 0, NULL));
  CHECK_OK(blobtable_update(table, S("c"), S("n"), AddOne, NULL, 0, &out));
  CHECK_OK(blobtable_entity_get_int64(out, S("n"), &n));
  CHECK(n == 4);
  blobtable_entity_free(out);
  /* The function's own failure stops it, with its code (retried first: Busy). */
  CHECK_CODE(blobtable_update(table, S("c"), S("n"), Refuse, NULL, 2, &out), BLOBTABLE_BUSY);
  CHECK(out == NULL);
  CHECK(strstr(blobtable_errmsg(NULL), "update function") != NULL);
  blobtable_table_close(table);
}

static void Put(blobtable_table* table, const char* pk, int i, const char* color) {
  char rk[16];
  blobtable_entity* e;
  snprintf(rk, sizeof rk, "r%03d", i);
  e = blobtable_entity_create(pk, strlen(pk), rk, strlen(rk));
  CHECK_OK(blobtable_entity_set_int32(e, S("i"), i));
  CHECK_OK(blobtable_entity_set_string(e, S("color"), color, strlen(color)));
  CHECK_OK(blobtable_upsert(table, e));
  blobtable_entity_free(e);
}

/* Rows of a query walked to its end (or its page limit). */
static int Walk(blobtable_query* query) {
  const blobtable_entity* row = NULL;
  int rows = 0;
  for (;;) {
    blobtable_code c = blobtable_query_next(query, &row);
    CHECK_OK(c);
    if (c != BLOBTABLE_OK || row == NULL) break;
    ++rows;
  }
  return rows;
}

static void TestQueries(blobtable_store* store) {
  blobtable_table* table = OpenTable(store, "cquery");
  blobtable_query* q = NULL;
  const blobtable_entity* row = NULL;
  const char* token;
  size_t token_len;
  char saved[1024];
  int i, rows;
  for (i = 0; i < 25; ++i) Put(table, i < 15 ? "a" : "b", i, i % 3 == 0 ? "red" : "blue");
  /* All of it, 10 rows a page: three pages walked by next. */
  CHECK_OK(blobtable_query_create(table, &q));
  CHECK_OK(blobtable_query_set_page_size(q, 10));
  CHECK(Walk(q) == 25);
  token = blobtable_query_continuation(q, &token_len);
  CHECK(token_len == 0);
  CHECK_CODE(blobtable_query_set_filter(q, S("i gt 3")), BLOBTABLE_INVALID_ARGUMENT); /* started */
  blobtable_query_free(q);
  /* A filter, a select, a partition and a row range. */
  CHECK_OK(blobtable_query_create(table, &q));
  CHECK_OK(blobtable_query_set_filter(q, S("color eq 'red' and i ge 3")));
  CHECK_OK(blobtable_query_add_select(q, S("i")));
  CHECK_OK(blobtable_query_set_partition(q, S("a")));
  CHECK_OK(blobtable_query_set_row_range(q, S("r000"), S("r012")));
  rows = 0;
  while (blobtable_query_next(q, &row) == BLOBTABLE_OK && row != NULL) {
    const char* s;
    size_t len;
    int32_t v;
    CHECK_OK(blobtable_entity_get_int32(row, S("i"), &v));
    CHECK(v % 3 == 0 && v >= 3 && v <= 12);
    CHECK_CODE(blobtable_entity_get_string(row, S("color"), &s, &len), BLOBTABLE_NOT_FOUND);
    ++rows;
  }
  CHECK(rows == 4); /* 3, 6, 9, 12 */
  blobtable_query_free(q);
  /* One page at a time: the continuation resumes where the limit stopped. */
  CHECK_OK(blobtable_query_create(table, &q));
  CHECK_OK(blobtable_query_set_page_size(q, 10));
  CHECK_OK(blobtable_query_set_page_limit(q, 1));
  CHECK(Walk(q) == 10);
  token = blobtable_query_continuation(q, &token_len);
  CHECK(token_len > 0 && token_len < sizeof saved);
  memcpy(saved, token, token_len);
  blobtable_query_free(q);
  CHECK_OK(blobtable_query_create(table, &q));
  CHECK_OK(blobtable_query_set_continuation(q, saved, token_len));
  CHECK(Walk(q) == 15);
  blobtable_query_free(q);
  /* A row prefix; a bad filter fails at the first next, naming it. */
  CHECK_OK(blobtable_query_create(table, &q));
  CHECK_OK(blobtable_query_set_row_prefix(q, S("r01")));
  CHECK(Walk(q) == 10);
  blobtable_query_free(q);
  CHECK_OK(blobtable_query_create(table, &q));
  CHECK_OK(blobtable_query_set_filter(q, S("i eq")));
  CHECK_CODE(blobtable_query_next(q, &row), BLOBTABLE_INVALID_ARGUMENT);
  CHECK(row == NULL);
  CHECK_CODE(blobtable_query_set_page_size(q, 0), BLOBTABLE_INVALID_ARGUMENT);
  blobtable_query_free(q);
  blobtable_table_close(table);
}

static void TestIndexQuery(blobtable_store* store) {
  blobtable_table* table = OpenTable(store, "cindex");
  blobtable_query* q = NULL;
  const blobtable_entity* row = NULL;
  const char* properties[] = {"color", "i"};
  size_t lens[] = {5, 1};
  int32_t from = 3, to = 9;
  int i;
  for (i = 0; i < 12; ++i) Put(table, "p", i, i % 2 == 0 ? "red" : "blue");
  CHECK_OK(blobtable_create_index(store, S("cindex"), S("bycolor"), properties, lens, 2, 0));
  /* Entities written after the build are indexed too. */
  Put(table, "q", 100, "red");
  CHECK_OK(blobtable_query_create(table, &q));
  CHECK_OK(blobtable_query_set_index(q, S("bycolor")));
  CHECK_OK(blobtable_query_index_equal(q, BLOBTABLE_STRING, S("red")));
  CHECK(Walk(q) == 7); /* 0, 2, ..., 10 and 100 */
  blobtable_query_free(q);
  CHECK_OK(blobtable_query_create(table, &q));
  CHECK_OK(blobtable_query_set_index(q, S("bycolor")));
  CHECK_OK(blobtable_query_index_equal(q, BLOBTABLE_STRING, S("red")));
  CHECK_OK(blobtable_query_index_from(q, BLOBTABLE_INT32, &from, 0));
  CHECK_OK(blobtable_query_index_to(q, BLOBTABLE_INT32, &to, 0));
  CHECK(Walk(q) == 3); /* 4, 6, 8 */
  blobtable_query_free(q);
  /* Values without an index; an index that is not there. */
  CHECK_OK(blobtable_query_create(table, &q));
  CHECK_OK(blobtable_query_index_equal(q, BLOBTABLE_STRING, S("red")));
  CHECK_CODE(blobtable_query_index_equal(q, 42, S("x")), BLOBTABLE_INVALID_ARGUMENT);
  CHECK_CODE(blobtable_query_next(q, &row), BLOBTABLE_INVALID_ARGUMENT);
  CHECK(strstr(blobtable_errmsg(NULL), "no index") != NULL);
  blobtable_query_free(q);
  CHECK_CODE(blobtable_drop_index(store, S("cindex"), S("nope"), 0), BLOBTABLE_NOT_FOUND);
  CHECK_OK(blobtable_drop_index(store, S("cindex"), S("bycolor"), 1));
  blobtable_table_close(table);
}

static int Move(blobtable_txn* txn, void* arg) {
  blobtable_table* table = (blobtable_table*)arg;
  blobtable_entity* from = NULL;
  blobtable_entity* to = NULL;
  int64_t a = 0, b = 0;
  blobtable_code c = blobtable_txn_get(txn, table, S("acct"), S("a"), &from);
  if (c == BLOBTABLE_OK) c = blobtable_txn_get(txn, table, S("acct"), S("b"), &to);
  if (c == BLOBTABLE_OK) c = blobtable_entity_get_int64(from, S("n"), &a);
  if (c == BLOBTABLE_OK) c = blobtable_entity_get_int64(to, S("n"), &b);
  if (c == BLOBTABLE_OK) c = blobtable_entity_set_int64(from, S("n"), a - 1);
  if (c == BLOBTABLE_OK) c = blobtable_entity_set_int64(to, S("n"), b + 1);
  if (c == BLOBTABLE_OK) c = blobtable_txn_replace(txn, table, from, NULL, 0);
  if (c == BLOBTABLE_OK) c = blobtable_txn_replace(txn, table, to, NULL, 0);
  blobtable_entity_free(from);
  blobtable_entity_free(to);
  return c;
}

static int Fails(blobtable_txn* txn, void* arg) {
  (void)txn;
  (void)arg;
  return BLOBTABLE_NOT_FOUND;
}

static int64_t Balance(blobtable_table* table, const char* rk) {
  blobtable_entity* e = NULL;
  int64_t n = -999;
  CHECK_OK(blobtable_get(table, "acct", 4, rk, strlen(rk), &e));
  if (e != NULL) CHECK_OK(blobtable_entity_get_int64(e, S("n"), &n));
  blobtable_entity_free(e);
  return n;
}

static void TestTransactions(blobtable_store* store) {
  blobtable_table* table = OpenTable(store, "ctxn");
  blobtable_table* log = OpenTable(store, "ctxnlog");
  blobtable_txn* txn = NULL;
  blobtable_txn* done = NULL;
  blobtable_entity* a = blobtable_entity_create(S("acct"), S("a"));
  blobtable_entity* b = blobtable_entity_create(S("acct"), S("b"));
  blobtable_entity* entry = blobtable_entity_create(S("log"), S("1"));
  blobtable_entity* read = NULL;
  const char *t, *pk, *rk, *etag;
  size_t t_len, pk_len, rk_len, etag_len;
  int attempts = 0;
  CHECK_OK(blobtable_entity_set_int64(a, S("n"), 10));
  CHECK_OK(blobtable_entity_set_int64(b, S("n"), 10));
  /* Two tables, three writes: all or nothing. */
  CHECK_OK(blobtable_txn_begin(store, &txn));
  CHECK_OK(blobtable_txn_insert(txn, table, a));
  CHECK_OK(blobtable_txn_insert(txn, table, b));
  CHECK_OK(blobtable_txn_insert(txn, log, entry));
  CHECK_OK(blobtable_txn_commit(txn));
  CHECK(blobtable_txn_written_count(txn) == 3);
  CHECK_OK(blobtable_txn_written(txn, 2, &t, &t_len, &pk, &pk_len, &rk, &rk_len, &etag, &etag_len));
  CHECK(etag_len > 0);
  CHECK_CODE(blobtable_txn_written(txn, 3, &t, &t_len, NULL, NULL, NULL, NULL, NULL, NULL),
             BLOBTABLE_INVALID_ARGUMENT);
  CHECK_CODE(blobtable_txn_commit(txn), BLOBTABLE_INVALID_ARGUMENT); /* committed */
  blobtable_txn_free(txn);
  /* A read another writer changes before the commit: CONFLICT, nothing written. */
  CHECK_OK(blobtable_txn_begin(store, &txn));
  CHECK_OK(blobtable_txn_get(txn, table, S("acct"), S("a"), &read));
  CHECK_OK(blobtable_entity_set_int64(read, S("n"), 0));
  CHECK_OK(blobtable_txn_replace(txn, table, read, NULL, 0));
  CHECK_OK(blobtable_txn_delete(txn, log, S("log"), S("1"), S("*")));
  CHECK_OK(blobtable_upsert(table, b)); /* b was not read: no conflict from it */
  CHECK_OK(blobtable_upsert(table, a)); /* a was */
  CHECK_CODE(blobtable_txn_commit(txn), BLOBTABLE_CONFLICT);
  blobtable_txn_free(txn);
  blobtable_entity_free(read);
  CHECK(Balance(table, "a") == 10);
  /* Freed without a commit: aborted, nothing written. */
  CHECK_OK(blobtable_txn_begin(store, &txn));
  CHECK_OK(blobtable_txn_upsert(txn, table, entry));
  CHECK_OK(blobtable_txn_upsert_merge(txn, log, entry));
  etag = blobtable_entity_etag(b, &etag_len); /* b as last upserted */
  CHECK_OK(blobtable_txn_check(txn, table, S("acct"), S("b"), etag, etag_len));
  blobtable_txn_free(txn);
  CHECK_CODE(blobtable_get(table, S("log"), S("1"), &read), BLOBTABLE_NOT_FOUND);
  /* Retried by run_transaction; the total is kept. */
  CHECK_OK(blobtable_run_transaction(store, Move, table, 0, &attempts, &done));
  CHECK(attempts == 1);
  CHECK(blobtable_txn_written_count(done) == 2);
  blobtable_txn_free(done);
  CHECK(Balance(table, "a") == 9 && Balance(table, "b") == 11);
  CHECK_CODE(blobtable_run_transaction(store, Fails, NULL, 0, &attempts, &done),
             BLOBTABLE_NOT_FOUND);
  CHECK(done == NULL);
  CHECK(strstr(blobtable_errmsg(NULL), "transaction function") != NULL);
  blobtable_entity_free(a);
  blobtable_entity_free(b);
  blobtable_entity_free(entry);
  blobtable_table_close(log);
  blobtable_table_close(table);
}

static void TestCoordination(blobtable_store* store) {
  blobtable_lock* lock = NULL;
  blobtable_lock* second = NULL;
  blobtable_queue* queue = NULL;
  blobtable_queue_item* item = NULL;
  blobtable_strings* id = NULL;
  blobtable_counter* counter = NULL;
  blobtable_counter* second_counter = NULL;
  int64_t token, value = 0;
  const void* body;
  size_t len;
  /* A lock: held, its token; a second taker times out; tokens grow. */
  CHECK_OK(blobtable_lock_acquire(store, S("c-lock"), -1, &lock));
  token = blobtable_lock_token(lock);
  CHECK(token > 0);
  CHECK_OK(blobtable_lock_status(lock));
  CHECK_CODE(blobtable_lock_acquire(store, S("c-lock"), 0, &second), BLOBTABLE_LOCK_TIMEOUT);
  CHECK(second == NULL);
  CHECK_OK(blobtable_lock_release(lock));
  CHECK_CODE(blobtable_lock_status(lock), BLOBTABLE_LEASE_LOST);
  CHECK_OK(blobtable_lock_release(lock)); /* again: still OK */
  blobtable_lock_free(lock);
  CHECK_OK(blobtable_lock_acquire(store, S("c-lock"), 1000, &second));
  CHECK(blobtable_lock_token(second) > token);
  blobtable_lock_free(second); /* releases it */
  /* A queue: put, take, complete; then it is empty. */
  CHECK_OK(blobtable_queue_open(store, S("c-jobs"), 0, &queue));
  CHECK_OK(blobtable_queue_put(queue, kBytes, sizeof kBytes, &id));
  CHECK(blobtable_strings_count(id) == 1);
  CHECK_OK(blobtable_queue_take(queue, &item));
  CHECK(item != NULL);
  if (item != NULL) {
    const char* item_id = blobtable_queue_item_id(item, &len);
    size_t id_len;
    const char* put_id = blobtable_strings_get(id, 0, &id_len);
    CHECK(len == id_len && memcmp(item_id, put_id, len) == 0);
    body = blobtable_queue_item_body(item, &len);
    CHECK(len == sizeof kBytes && memcmp(body, kBytes, len) == 0);
    CHECK(blobtable_queue_item_dequeue_count(item) == 1);
    CHECK_OK(blobtable_queue_extend(queue, item));
    CHECK_OK(blobtable_queue_complete(queue, item));
    blobtable_queue_item_free(item);
  }
  blobtable_strings_free(id);
  CHECK_OK(blobtable_queue_take(queue, &item));
  CHECK(item == NULL);
  blobtable_queue_close(queue);
  /* A counter. */
  CHECK_OK(blobtable_counter_open(store, S("c-count"), &counter));
  CHECK_OK(blobtable_counter_get(counter, &value));
  CHECK(value == 0);
  CHECK_OK(blobtable_counter_add(counter, 5, NULL));
  CHECK_OK(blobtable_counter_add(counter, 7, &value));
  CHECK(value == 12);
  CHECK_OK(blobtable_counter_get(counter, &value));
  CHECK(value == 12);
  CHECK_CODE(blobtable_counter_get(counter, NULL), BLOBTABLE_INVALID_ARGUMENT);
  CHECK_CODE(blobtable_counter_open(store, "", 0, &second_counter), /* names are 1..256 bytes */
             BLOBTABLE_INVALID_ARGUMENT);
  CHECK(second_counter == NULL);
  blobtable_counter_close(counter);
}

/* Several threads on one store and table: increments by read-modify-write,
 * and each thread's errors are its own. */
enum { kThreads = 4, kIncrements = 20 };
struct Worker {
  blobtable_table* table;
  int failed;
};

static void* Increment(void* arg) {
  struct Worker* w = (struct Worker*)arg;
  blobtable_entity* e = NULL;
  int i;
  for (i = 0; i < kIncrements; ++i) {
    if (blobtable_update(w->table, S("shared"), S("n"), AddOne, NULL, 1000, NULL) != BLOBTABLE_OK)
      w->failed++;
    /* A miss on this thread leaves this thread's error, whatever the others do. */
    if (blobtable_get(w->table, S("shared"), S("absent"), &e) != BLOBTABLE_NOT_FOUND ||
        blobtable_errcode() != BLOBTABLE_NOT_FOUND)
      w->failed++;
  }
  return NULL;
}

static void TestThreads(blobtable_store* store) {
  blobtable_table* table = OpenTable(store, "cthreads");
  pthread_t threads[kThreads];
  struct Worker workers[kThreads];
  blobtable_entity* e = NULL;
  int64_t n = 0;
  int i;
  for (i = 0; i < kThreads; ++i) {
    workers[i].table = table;
    workers[i].failed = 0;
    CHECK(pthread_create(&threads[i], NULL, Increment, &workers[i]) == 0);
  }
  for (i = 0; i < kThreads; ++i) {
    CHECK(pthread_join(threads[i], NULL) == 0);
    CHECK(workers[i].failed == 0);
  }
  CHECK_OK(blobtable_get(table, S("shared"), S("n"), &e));
  CHECK_OK(blobtable_entity_get_int64(e, S("n"), &n));
  CHECK(n == kThreads * kIncrements);
  blobtable_entity_free(e);
  blobtable_table_close(table);
}

/* What a fresh-eyes review of the C API broke (issue 58), each now refused
 * before anything is done. */
static void TestRefusedInputs(blobtable_store* store) {
  blobtable_table* table = OpenTable(store, "crefused");
  blobtable_entity* e = blobtable_entity_create(S("p"), S("r"));
  blobtable_store* other = NULL;
  blobtable_txn* txn = NULL;
  blobtable_query* q = NULL;
  blobtable_queue* jobs = NULL;
  blobtable_queue* others = NULL;
  blobtable_queue_item* item = NULL;
  blobtable_lock* lock = NULL;
  blobtable_options* options = blobtable_options_create();
  const blobtable_entity* row = NULL;
  const char* one[] = {"a"};
  size_t one_len[] = {1};
  char deep[20000 * 2 + 16];
  int i, n = 0;
  CHECK_OK(blobtable_insert(table, e));
  /* An ETag with a line break: never sent as a header (Azure), no match here. */
  CHECK_CODE(blobtable_replace(table, e, S("\"0x1\"\r\nx-ms-meta-injected: yes")),
             remote ? BLOBTABLE_INVALID_ARGUMENT : BLOBTABLE_CONFLICT);
  /* A filter nested past any stack: refused. */
  for (i = 0; i < 20000; ++i) deep[n++] = '(';
  memcpy(deep + n, "n eq 1", 6);
  n += 6;
  for (i = 0; i < 20000; ++i) deep[n++] = ')';
  CHECK_OK(blobtable_query_create(table, &q));
  CHECK_OK(blobtable_query_set_filter(q, deep, (size_t)n));
  CHECK_CODE(blobtable_query_next(q, &row), BLOBTABLE_INVALID_ARGUMENT);
  CHECK(strstr(blobtable_errmsg(NULL), "nested deeper") != NULL);
  blobtable_query_free(q);
  /* A NUL inside a location. */
  CHECK_CODE(blobtable_open("/tmp/x\0y", 8, NULL, &other), BLOBTABLE_INVALID_ARGUMENT);
  /* Durations past ten years. */
  CHECK_CODE(blobtable_options_set_request_timeout_ms(options, INT64_MAX),
             BLOBTABLE_INVALID_ARGUMENT);
  CHECK_CODE(blobtable_options_set_read_policy(options, BLOBTABLE_READ_MAX_STALE, INT64_MAX),
             BLOBTABLE_INVALID_ARGUMENT);
  CHECK_CODE(blobtable_lock_acquire(store, S("c-forever"), INT64_MAX, &lock),
             BLOBTABLE_INVALID_ARGUMENT);
  blobtable_options_free(options);
  /* An index of four properties: refused before the one-entry arrays are read past. */
  CHECK_CODE(blobtable_create_index(store, S("crefused"), S("four"), one, one_len, 4, 0),
             BLOBTABLE_INVALID_ARGUMENT);
  /* A table of another store in a transaction. */
  if (!remote) {
    char dir[4096];
    blobtable_table* foreign = NULL;
    snprintf(dir, sizeof dir, "%.*s-other", (int)location_len, location);
    CHECK_OK(blobtable_open(dir, strlen(dir), NULL, &other));
    CHECK_OK(blobtable_table_open(other, S("crefused"), &foreign));
    CHECK_OK(blobtable_txn_begin(store, &txn));
    CHECK_CODE(blobtable_txn_upsert(txn, foreign, e), BLOBTABLE_INVALID_ARGUMENT);
    CHECK(strstr(blobtable_errmsg(NULL), "another store") != NULL);
    blobtable_txn_free(txn);
    blobtable_table_close(foreign);
    blobtable_close(other);
  }
  /* An item completed through another queue's handle. */
  CHECK_OK(blobtable_queue_open(store, S("c-work"), 0, &jobs));
  CHECK_OK(blobtable_queue_open(store, S("c-other"), 0, &others));
  CHECK_OK(blobtable_queue_put(jobs, S("x"), NULL));
  CHECK_OK(blobtable_queue_take(jobs, &item));
  CHECK(item != NULL);
  CHECK_CODE(blobtable_queue_complete(others, item), BLOBTABLE_INVALID_ARGUMENT);
  CHECK(strstr(blobtable_errmsg(NULL), "c-work") != NULL);
  CHECK_OK(blobtable_queue_complete(jobs, item));
  blobtable_queue_item_free(item);
  blobtable_queue_close(others);
  blobtable_queue_close(jobs);
  blobtable_entity_free(e);
  blobtable_table_close(table);
}

/* Handles made from a store keep it open: the store handle may go first. */
static void TestOwnership(void) {
  blobtable_store* store = OpenStore();
  blobtable_table* table = OpenTable(store, "cowner");
  blobtable_query* q = NULL;
  blobtable_strings* tables = NULL;
  size_t i, len;
  int found = 0;
  Put(table, "p", 1, "red");
  CHECK_OK(blobtable_query_create(table, &q));
  CHECK_OK(blobtable_list_tables(store, &tables));
  for (i = 0; i < blobtable_strings_count(tables); ++i) {
    const char* name = blobtable_strings_get(tables, i, &len);
    if (Same(name, len, "cowner")) found = 1;
  }
  CHECK(found);
  CHECK(blobtable_strings_get(tables, blobtable_strings_count(tables), &len) == NULL && len == 0);
  blobtable_strings_free(tables);
  blobtable_close(store);
  Put(table, "p", 2, "blue");
  blobtable_table_close(table);
  CHECK(Walk(q) == 2);
  blobtable_query_free(q);
}

int main(int argc, char** argv) {
  blobtable_store* store;
  if (argc != 2) {
    fprintf(stderr, "usage: %s DIRECTORY|CONNECTION-STRING\n", argv[0]);
    return 2;
  }
  location = argv[1];
  location_len = strlen(location);
  remote = strchr(location, ';') != NULL;
  TestErrorsAndVersions();
  store = OpenStore();
  TestEntityRoundTrip(store);
  TestConditionalWrites(store);
  TestUpdate(store);
  TestQueries(store);
  TestIndexQuery(store);
  TestTransactions(store);
  TestCoordination(store);
  TestThreads(store);
  TestRefusedInputs(store);
  {
    int resolved = -1;
    CHECK_OK(blobtable_recover(store, &resolved));
    CHECK(resolved == 0);
  }
  blobtable_close(store);
  TestOwnership();
  if (failures > 0) {
    fprintf(stderr, "c api: %d of %d checks failed (%s)\n", failures, checks,
            remote ? "Azure" : "embedded");
    return 1;
  }
  printf("c api: %d checks passed (%s)\n", checks, remote ? "Azure" : "embedded");
  return 0;
}
