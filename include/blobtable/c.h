/* SPDX-License-Identifier: Apache-2.0 */
/* blobtable's C API (docs/api.md#the-c-api): the library for any language that
 * can call C. C99; no C++ type, no exception crosses it.
 *
 *   blobtable_store* store;
 *   if (blobtable_open("./data", 6, NULL, &store) != BLOBTABLE_OK) {
 *     fprintf(stderr, "%s\n", blobtable_errmsg(NULL));
 *   }
 *
 * The rules every call follows:
 * - Errors. Every call that can fail returns a blobtable_code: BLOBTABLE_OK
 *   (0), or the code of blobtable::Status (same numbers, same meaning:
 *   docs/api.md#errors says what to do next for each). The calling thread's
 *   last result is described by blobtable_errmsg(), blobtable_errcode(),
 *   blobtable_err_http_status() and blobtable_err_storage_code(): every
 *   call that returns a code sets them ("" and BLOBTABLE_OK on success).
 * - Strings are UTF-8 given as (pointer, length): never read beyond the
 *   length, never required to be NUL-terminated, NULL allowed where the
 *   length is 0. Strings handed back are (pointer, length) too, and are also
 *   NUL-terminated; they point into the handle they came from and live until
 *   that handle is changed or freed (each call says).
 * - Ownership. Each handle is made by one call and freed by its matching
 *   *_free / *_close; every free accepts NULL. Handles made from a store
 *   (tables, queries, transactions, locks, queues, counters) keep it open:
 *   the store itself closes when its handle and every handle made from it
 *   are freed, in any order.
 * - Threads. A store, a table, a queue and a counter handle may be used by
 *   many threads at once; any other handle (options, entity, query,
 *   transaction, lock, queue item, string list) by one thread at a time.
 * - Enumerations are given as int (a value outside one is INVALID_ARGUMENT;
 *   a caller's function returns its blobtable_code as int too).
 * - Out parameters are written only on BLOBTABLE_OK (an out handle is set to
 *   NULL on a failure).
 * - ABI: the symbols are those of bindings/c/blobtable_c.map (version node
 *   BLOBTABLE_C_1), checked by tests/c_abi_check.sh. No struct is part of
 *   it: options are set by calls, so adding one adds a function. A release
 *   adds functions and codes; it never removes or changes one within a major
 *   version (docs/api.md#c-abi-rules).
 */
#ifndef BLOBTABLE_C_H_
#define BLOBTABLE_C_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define BLOBTABLE_C_API __attribute__((visibility("default")))
#else
#define BLOBTABLE_C_API
#endif

/* The C API's own version: its major changes only with an incompatible
 * change (never within BLOBTABLE_C_1). */
#define BLOBTABLE_C_API_VERSION 1

/* ------------------------------------------------------------------------ */
/* Errors                                                                   */

/* blobtable::Code's values, in the same order (a test checks). */
typedef enum blobtable_code {
  BLOBTABLE_OK = 0,
  BLOBTABLE_NOT_FOUND = 1,        /* no such entity, table, index, lock */
  BLOBTABLE_CONFLICT = 2,         /* an ETag condition failed, or it exists */
  BLOBTABLE_BUSY = 3,             /* held by someone else now: retry later */
  BLOBTABLE_LOCK_TIMEOUT = 4,     /* a lock was not had within its timeout */
  BLOBTABLE_LEASE_LOST = 5,       /* the caller's own lease is gone */
  BLOBTABLE_UNAVAILABLE = 6,      /* storage unreachable or failing: retryable */
  BLOBTABLE_INVALID_ARGUMENT = 7, /* a bad argument or setting: never retry */
  BLOBTABLE_CORRUPTION = 8,       /* stored data could not be decoded */
  BLOBTABLE_IO_ERROR = 9,         /* a local I/O or database failure */
  BLOBTABLE_INTERNAL = 10,        /* a bug in blobtable (or out of memory) */
  BLOBTABLE_OUTCOME_UNKNOWN = 11  /* a commit that may or may not have happened */
} blobtable_code;

/* The calling thread's last failure: its message ("" after a success),
 * NUL-terminated, its length in *len if len is not NULL; valid until the
 * thread's next call into this API. */
BLOBTABLE_C_API const char* blobtable_errmsg(size_t* len);
BLOBTABLE_C_API blobtable_code blobtable_errcode(void);
/* The HTTP status of the storage answer behind it (0 if none). */
BLOBTABLE_C_API int blobtable_err_http_status(void);
/* The storage service's error code behind it ("ConditionNotMet"; "" if none). */
BLOBTABLE_C_API const char* blobtable_err_storage_code(size_t* len);
/* "NotFound", "Conflict", ... (static; "Unknown" outside the enum). */
BLOBTABLE_C_API const char* blobtable_code_name(int code);
/* 1 if the same call may succeed when tried again (Status::IsRetryable). */
BLOBTABLE_C_API int blobtable_code_retryable(int code);
/* The library's version, "0.1.0" (static). */
BLOBTABLE_C_API const char* blobtable_version(void);

/* ------------------------------------------------------------------------ */
/* Handles                                                                  */

typedef struct blobtable_options blobtable_options;
typedef struct blobtable_store blobtable_store;
typedef struct blobtable_table blobtable_table;
typedef struct blobtable_entity blobtable_entity;
typedef struct blobtable_query blobtable_query;
typedef struct blobtable_txn blobtable_txn;
typedef struct blobtable_lock blobtable_lock;
typedef struct blobtable_queue blobtable_queue;
typedef struct blobtable_queue_item blobtable_queue_item;
typedef struct blobtable_counter blobtable_counter;
typedef struct blobtable_strings blobtable_strings;

/* A list of strings the library handed back. */
BLOBTABLE_C_API size_t blobtable_strings_count(const blobtable_strings* list);
/* The i-th (i < count), into the list. */
BLOBTABLE_C_API const char* blobtable_strings_get(const blobtable_strings* list, size_t i,
                                                  size_t* len);
BLOBTABLE_C_API void blobtable_strings_free(blobtable_strings* list);

/* ------------------------------------------------------------------------ */
/* Opening a store                                                          */

/* Options for blobtable_open (NULL when out of memory). A setter returns
 * INVALID_ARGUMENT for a value it can tell is refused on its own;
 * blobtable_open checks the rest (a container's name, say). */
BLOBTABLE_C_API blobtable_options* blobtable_options_create(void);
BLOBTABLE_C_API void blobtable_options_free(blobtable_options* options);
/* The container (default "blobtable"). */
BLOBTABLE_C_API blobtable_code blobtable_options_set_container(blobtable_options* options,
                                                               const char* name, size_t len);
/* 0: a missing embedded store or container is NOT_FOUND (default 1). */
BLOBTABLE_C_API blobtable_code blobtable_options_set_create_if_missing(blobtable_options* options,
                                                                       int create);
/* Azure: the local cache (docs/cache.md), on by default; its directory
 * (default: blobtable's cache directory of the user). */
BLOBTABLE_C_API blobtable_code blobtable_options_set_cache_enabled(blobtable_options* options,
                                                                   int enabled);
BLOBTABLE_C_API blobtable_code blobtable_options_set_cache_directory(blobtable_options* options,
                                                                     const char* dir, size_t len);
typedef enum blobtable_read_mode {
  BLOBTABLE_READ_FRESH = 0,     /* revalidate a cached copy (default) */
  BLOBTABLE_READ_MAX_STALE = 1, /* a copy validated less than max_stale_ms ago, no request */
  BLOBTABLE_READ_OFFLINE = 2    /* never contact storage */
} blobtable_read_mode;
/* How reads use the cache (ReadPolicy): `mode` a blobtable_read_mode;
 * max_stale_ms for MAX_STALE only. */
BLOBTABLE_C_API blobtable_code blobtable_options_set_read_policy(blobtable_options* options,
                                                                 int mode, int64_t max_stale_ms);
/* Azure: one HTTP request's timeout, milliseconds (default 30,000; at most
 * ten years, as every duration here). */
BLOBTABLE_C_API blobtable_code blobtable_options_set_request_timeout_ms(blobtable_options* options,
                                                                        int64_t ms);
/* The lease of a transaction's locks, 15..60 s (default 30). */
BLOBTABLE_C_API blobtable_code blobtable_options_set_txn_lease_seconds(blobtable_options* options,
                                                                       int seconds);

/* Opens `location`: a directory (the embedded store, created if missing) or
 * an Azure Storage connection string (no request is sent). `options` may be
 * NULL (the defaults) and is not kept. */
BLOBTABLE_C_API blobtable_code blobtable_open(const char* location, size_t len,
                                              const blobtable_options* options,
                                              blobtable_store** out);
/* Frees the handle; the store closes once every handle made from it is
 * freed too, after the commits' background finishing has run. */
BLOBTABLE_C_API void blobtable_close(blobtable_store* store);
/* The tables that hold an entity, sorted. */
BLOBTABLE_C_API blobtable_code blobtable_list_tables(blobtable_store* store,
                                                     blobtable_strings** out);
/* Finishes or undoes the transactions whose coordinators died
 * (Store::Recover); *resolved (may be NULL) how many. */
BLOBTABLE_C_API blobtable_code blobtable_recover(blobtable_store* store, int* resolved);

/* ------------------------------------------------------------------------ */
/* Entities                                                                 */

/* The EDM types, in blobtable::EdmType's order. */
typedef enum blobtable_type {
  BLOBTABLE_STRING = 0,
  BLOBTABLE_BINARY = 1,
  BLOBTABLE_BOOLEAN = 2,
  BLOBTABLE_DATETIME = 3, /* int64_t: 100-ns ticks since 1970-01-01T00:00:00Z (may be negative) */
  BLOBTABLE_DOUBLE = 4,
  BLOBTABLE_GUID = 5, /* its text, "xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx" */
  BLOBTABLE_INT32 = 6,
  BLOBTABLE_INT64 = 7
} blobtable_type;

/* A new entity with these keys and no property (NULL when out of memory,
 * or a key is NULL with a non-zero length; the keys are checked when it is
 * written). */
BLOBTABLE_C_API blobtable_entity* blobtable_entity_create(const char* pk, size_t pk_len,
                                                          const char* rk, size_t rk_len);
BLOBTABLE_C_API blobtable_entity* blobtable_entity_clone(const blobtable_entity* entity);
BLOBTABLE_C_API void blobtable_entity_free(blobtable_entity* entity);
BLOBTABLE_C_API const char* blobtable_entity_partition_key(const blobtable_entity* entity,
                                                           size_t* len);
BLOBTABLE_C_API const char* blobtable_entity_row_key(const blobtable_entity* entity, size_t* len);
/* The ETag a read or write gave it ("" for one never stored). */
BLOBTABLE_C_API const char* blobtable_entity_etag(const blobtable_entity* entity, size_t* len);
BLOBTABLE_C_API blobtable_code blobtable_entity_set_etag(blobtable_entity* entity, const char* etag,
                                                         size_t len);
/* The Timestamp storage gave it, as BLOBTABLE_DATETIME ticks (0 if none). */
BLOBTABLE_C_API int64_t blobtable_entity_timestamp(const blobtable_entity* entity);
/* 1 if a read answered it from the cache without reaching storage. */
BLOBTABLE_C_API int blobtable_entity_stale(const blobtable_entity* entity);

/* Setters replace a property of that name (its name and value are checked
 * when the entity is written). */
BLOBTABLE_C_API blobtable_code blobtable_entity_set_string(blobtable_entity* entity,
                                                           const char* name, size_t name_len,
                                                           const char* value, size_t len);
BLOBTABLE_C_API blobtable_code blobtable_entity_set_binary(blobtable_entity* entity,
                                                           const char* name, size_t name_len,
                                                           const void* value, size_t len);
BLOBTABLE_C_API blobtable_code blobtable_entity_set_bool(blobtable_entity* entity, const char* name,
                                                         size_t name_len, int value);
BLOBTABLE_C_API blobtable_code blobtable_entity_set_datetime(blobtable_entity* entity,
                                                             const char* name, size_t name_len,
                                                             int64_t ticks);
BLOBTABLE_C_API blobtable_code blobtable_entity_set_double(blobtable_entity* entity,
                                                           const char* name, size_t name_len,
                                                           double value);
BLOBTABLE_C_API blobtable_code blobtable_entity_set_guid(blobtable_entity* entity, const char* name,
                                                         size_t name_len, const char* value,
                                                         size_t len);
BLOBTABLE_C_API blobtable_code blobtable_entity_set_int32(blobtable_entity* entity,
                                                          const char* name, size_t name_len,
                                                          int32_t value);
BLOBTABLE_C_API blobtable_code blobtable_entity_set_int64(blobtable_entity* entity,
                                                          const char* name, size_t name_len,
                                                          int64_t value);
/* NOT_FOUND if it has no such property. */
BLOBTABLE_C_API blobtable_code blobtable_entity_remove(blobtable_entity* entity, const char* name,
                                                       size_t name_len);

/* Its properties, in name order (byte order of the UTF-8 names). */
BLOBTABLE_C_API size_t blobtable_entity_count(const blobtable_entity* entity);
/* The i-th (i < count): its name (into the entity) and type. */
BLOBTABLE_C_API blobtable_code blobtable_entity_property(const blobtable_entity* entity, size_t i,
                                                         const char** name, size_t* name_len,
                                                         blobtable_type* type);
/* The type of property `name`: NOT_FOUND if absent. */
BLOBTABLE_C_API blobtable_code blobtable_entity_type(const blobtable_entity* entity,
                                                     const char* name, size_t name_len,
                                                     blobtable_type* type);
/* Getters: NOT_FOUND if absent, INVALID_ARGUMENT (naming both types) if it
 * holds another type, except that get_int64 and get_double also read an
 * Int32. Strings and bytes point into the entity, valid until it changes. */
BLOBTABLE_C_API blobtable_code blobtable_entity_get_string(const blobtable_entity* entity,
                                                           const char* name, size_t name_len,
                                                           const char** value, size_t* len);
BLOBTABLE_C_API blobtable_code blobtable_entity_get_binary(const blobtable_entity* entity,
                                                           const char* name, size_t name_len,
                                                           const void** value, size_t* len);
BLOBTABLE_C_API blobtable_code blobtable_entity_get_bool(const blobtable_entity* entity,
                                                         const char* name, size_t name_len,
                                                         int* value);
BLOBTABLE_C_API blobtable_code blobtable_entity_get_datetime(const blobtable_entity* entity,
                                                             const char* name, size_t name_len,
                                                             int64_t* ticks);
BLOBTABLE_C_API blobtable_code blobtable_entity_get_double(const blobtable_entity* entity,
                                                           const char* name, size_t name_len,
                                                           double* value);
BLOBTABLE_C_API blobtable_code blobtable_entity_get_guid(const blobtable_entity* entity,
                                                         const char* name, size_t name_len,
                                                         const char** value, size_t* len);
BLOBTABLE_C_API blobtable_code blobtable_entity_get_int32(const blobtable_entity* entity,
                                                          const char* name, size_t name_len,
                                                          int32_t* value);
BLOBTABLE_C_API blobtable_code blobtable_entity_get_int64(const blobtable_entity* entity,
                                                          const char* name, size_t name_len,
                                                          int64_t* value);

/* ------------------------------------------------------------------------ */
/* Tables                                                                   */

/* A handle on table `name` (Azure table-name rules, case-insensitive; a
 * table exists once it holds an entity). INVALID_ARGUMENT for a bad name. */
BLOBTABLE_C_API blobtable_code blobtable_table_open(blobtable_store* store, const char* name,
                                                    size_t len, blobtable_table** out);
BLOBTABLE_C_API void blobtable_table_close(blobtable_table* table);

/* The entity (*out is the caller's). NOT_FOUND if there is none. */
BLOBTABLE_C_API blobtable_code blobtable_get(blobtable_table* table, const char* pk, size_t pk_len,
                                             const char* rk, size_t rk_len, blobtable_entity** out);
/* Writes. Each gives `entity` the ETag and Timestamp it was stored with.
 * `if_match`: the ETag the caller last saw, or "*" for any version; NULL
 * (length 0): the entity's own ETag (INVALID_ARGUMENT if it has none).
 * Insert: CONFLICT if it exists. Replace, merge: NOT_FOUND if missing,
 * CONFLICT on an ETag mismatch. Upsert: insert or replace, unconditionally;
 * upsert_merge: insert or merge. */
BLOBTABLE_C_API blobtable_code blobtable_insert(blobtable_table* table, blobtable_entity* entity);
BLOBTABLE_C_API blobtable_code blobtable_replace(blobtable_table* table, blobtable_entity* entity,
                                                 const char* if_match, size_t if_match_len);
BLOBTABLE_C_API blobtable_code blobtable_merge(blobtable_table* table, blobtable_entity* entity,
                                               const char* if_match, size_t if_match_len);
BLOBTABLE_C_API blobtable_code blobtable_upsert(blobtable_table* table, blobtable_entity* entity);
BLOBTABLE_C_API blobtable_code blobtable_upsert_merge(blobtable_table* table,
                                                      blobtable_entity* entity);
/* `if_match` as above, but required: "*" deletes any version. */
BLOBTABLE_C_API blobtable_code blobtable_delete(blobtable_table* table, const char* pk,
                                                size_t pk_len, const char* rk, size_t rk_len,
                                                const char* if_match, size_t if_match_len);

/* Read-modify-write (Table::Update): reads the entity (or starts an empty
 * one with these keys: exists 0), calls fn on it, and writes it back at the
 * ETag read (insert if it did not exist), running it all again after a
 * backoff when another writer got there first (up to max_attempts, 1..1000;
 * 0: 10).
 * fn returns BLOBTABLE_OK to write, anything else to stop with that code.
 * *out (may be NULL) receives the entity as written. */
typedef int (*blobtable_update_fn)(blobtable_entity* entity, int exists, void* arg);
BLOBTABLE_C_API blobtable_code blobtable_update(blobtable_table* table, const char* pk,
                                                size_t pk_len, const char* rk, size_t rk_len,
                                                blobtable_update_fn fn, void* arg, int max_attempts,
                                                blobtable_entity** out);

/* ------------------------------------------------------------------------ */
/* Queries                                                                  */

/* A query over `table`: set what it reads, then walk its rows with
 * blobtable_query_next, which fetches page after page. Setters may be
 * called only before the first next (INVALID_ARGUMENT after); the filter,
 * the $select names and the keys are checked by the first next. */
BLOBTABLE_C_API blobtable_code blobtable_query_create(blobtable_table* table,
                                                      blobtable_query** out);
BLOBTABLE_C_API void blobtable_query_free(blobtable_query* query);
/* A $filter expression (docs/api.md#filters). */
BLOBTABLE_C_API blobtable_code blobtable_query_set_filter(blobtable_query* query,
                                                          const char* filter, size_t len);
/* Adds a property to $select (none: every property). */
BLOBTABLE_C_API blobtable_code blobtable_query_add_select(blobtable_query* query, const char* name,
                                                          size_t len);
/* Only this partition. */
BLOBTABLE_C_API blobtable_code blobtable_query_set_partition(blobtable_query* query, const char* pk,
                                                             size_t len);
/* RowKeys from `from` to `to`, both inclusive; NULL: that end open (a
 * non-NULL key of length 0 is the empty key). */
BLOBTABLE_C_API blobtable_code blobtable_query_set_row_range(blobtable_query* query,
                                                             const char* from, size_t from_len,
                                                             const char* to, size_t to_len);
BLOBTABLE_C_API blobtable_code blobtable_query_set_row_prefix(blobtable_query* query,
                                                              const char* prefix, size_t len);
/* Rows a page holds at most, 1..1000 (default 1000). */
BLOBTABLE_C_API blobtable_code blobtable_query_set_page_size(blobtable_query* query, int rows);
/* Stop after this many pages (default 0: all); then
 * blobtable_query_continuation says where to go on. */
BLOBTABLE_C_API blobtable_code blobtable_query_set_page_limit(blobtable_query* query, int pages);
/* Start where an earlier query's continuation said. */
BLOBTABLE_C_API blobtable_code blobtable_query_set_continuation(blobtable_query* query,
                                                                const char* token, size_t len);
/* Read secondary index `name` instead of the table (docs/indexes.md), its
 * entries equal to the values given by blobtable_query_index_equal on its
 * first properties, then within [from, to] on the next one. */
BLOBTABLE_C_API blobtable_code blobtable_query_set_index(blobtable_query* query, const char* name,
                                                         size_t len);
/* A value of `type` (a blobtable_type): `value` points to an int (BOOLEAN), an int32_t, an
 * int64_t (INT64, DATETIME ticks) or a double, and `len` is ignored; or to
 * `len` bytes (STRING, GUID, BINARY). */
BLOBTABLE_C_API blobtable_code blobtable_query_index_equal(blobtable_query* query, int type,
                                                           const void* value, size_t len);
BLOBTABLE_C_API blobtable_code blobtable_query_index_from(blobtable_query* query, int type,
                                                          const void* value, size_t len);
BLOBTABLE_C_API blobtable_code blobtable_query_index_to(blobtable_query* query, int type,
                                                        const void* value, size_t len);
/* The next row: *row points into the query until the next call on it (copy
 * it with blobtable_entity_clone to keep it); NULL at the end. */
BLOBTABLE_C_API blobtable_code blobtable_query_next(blobtable_query* query,
                                                    const blobtable_entity** row);
/* The continuation of the last page fetched: where the page after it
 * starts ("" when there is none). Once next has handed over that page's
 * last row (next returned NULL at the page limit, say), a query given it
 * goes on exactly where this one stopped; taken in the middle of a page,
 * it skips that page's rows not yet handed over. */
BLOBTABLE_C_API const char* blobtable_query_continuation(const blobtable_query* query, size_t* len);
/* 1 if a page came from the cache because storage could not be reached. */
BLOBTABLE_C_API int blobtable_query_stale(const blobtable_query* query);

/* Secondary indexes (docs/indexes.md): creates index `name` on `table` over
 * `count` properties (1..3, checked before the arrays are read), builds it,
 * marks it ready (Store::CreateIndex). Dropping marks it dropping at once
 * (a transaction that read the definitions before may then fail with
 * CONFLICT, and the name stays taken) and deletes its entries in the
 * background, or before it returns with `wait`. */
BLOBTABLE_C_API blobtable_code blobtable_create_index(
    blobtable_store* store, const char* table, size_t table_len, const char* name, size_t name_len,
    const char* const* properties, const size_t* property_lens, size_t count, int unique);
BLOBTABLE_C_API blobtable_code blobtable_drop_index(blobtable_store* store, const char* table,
                                                    size_t table_len, const char* name,
                                                    size_t name_len, int wait);

/* ------------------------------------------------------------------------ */
/* Transactions (docs/transactions.md)                                      */

/* A new transaction: reads through it are recorded, writes buffered; its
 * commit applies every write or none. */
BLOBTABLE_C_API blobtable_code blobtable_txn_begin(blobtable_store* store, blobtable_txn** out);
/* Frees it; one not committed is aborted (nothing of it was written). */
BLOBTABLE_C_API void blobtable_txn_free(blobtable_txn* txn);
BLOBTABLE_C_API blobtable_code blobtable_txn_get(blobtable_txn* txn, blobtable_table* table,
                                                 const char* pk, size_t pk_len, const char* rk,
                                                 size_t rk_len, blobtable_entity** out);
/* Buffered writes; if_match as for blobtable_replace. `table` must be of
 * the transaction's store (INVALID_ARGUMENT otherwise). */
BLOBTABLE_C_API blobtable_code blobtable_txn_insert(blobtable_txn* txn, blobtable_table* table,
                                                    const blobtable_entity* entity);
BLOBTABLE_C_API blobtable_code blobtable_txn_replace(blobtable_txn* txn, blobtable_table* table,
                                                     const blobtable_entity* entity,
                                                     const char* if_match, size_t if_match_len);
BLOBTABLE_C_API blobtable_code blobtable_txn_merge(blobtable_txn* txn, blobtable_table* table,
                                                   const blobtable_entity* entity,
                                                   const char* if_match, size_t if_match_len);
BLOBTABLE_C_API blobtable_code blobtable_txn_upsert(blobtable_txn* txn, blobtable_table* table,
                                                    const blobtable_entity* entity);
BLOBTABLE_C_API blobtable_code blobtable_txn_upsert_merge(blobtable_txn* txn,
                                                          blobtable_table* table,
                                                          const blobtable_entity* entity);
BLOBTABLE_C_API blobtable_code blobtable_txn_delete(blobtable_txn* txn, blobtable_table* table,
                                                    const char* pk, size_t pk_len, const char* rk,
                                                    size_t rk_len, const char* if_match,
                                                    size_t if_match_len);
/* Commits only if this entity still has this ETag, writing nothing to it;
 * an empty ETag: only if it does not exist ("*" is no wildcard here). */
BLOBTABLE_C_API blobtable_code blobtable_txn_check(blobtable_txn* txn, blobtable_table* table,
                                                   const char* pk, size_t pk_len, const char* rk,
                                                   size_t rk_len, const char* etag,
                                                   size_t etag_len);
/* Commits. OUTCOME_UNKNOWN: it may or may not have happened (read what it
 * wrote, or blobtable_recover, then decide); any other failure: nothing was
 * written. After OK, blobtable_txn_written tells each write's new ETag. */
BLOBTABLE_C_API blobtable_code blobtable_txn_commit(blobtable_txn* txn);
BLOBTABLE_C_API size_t blobtable_txn_written_count(const blobtable_txn* txn);
/* The i-th write of the commit: its table, keys and ETag ("" for a delete),
 * each into the transaction. */
BLOBTABLE_C_API blobtable_code blobtable_txn_written(const blobtable_txn* txn, size_t i,
                                                     const char** table, size_t* table_len,
                                                     const char** pk, size_t* pk_len,
                                                     const char** rk, size_t* rk_len,
                                                     const char** etag, size_t* etag_len);

/* Runs fn in a new transaction and commits it; when fn or the commit fails
 * with CONFLICT, BUSY, LOCK_TIMEOUT or LEASE_LOST (nothing committed), runs
 * it again in a fresh one after a backoff, up to max_attempts (1..1000; 0:
 * 10). fn buffers writes (and reads) through the transaction it is given and
 * returns BLOBTABLE_OK, or a code to stop with (one of those four is retried
 * too); that transaction is lent for the call: fn neither commits nor frees
 * it. *attempts (may be NULL) receives how many ran, whatever the outcome
 * (the one out parameter written on a failure). On OK, *committed (may be
 * NULL) receives the committed transaction, for blobtable_txn_written. */
typedef int (*blobtable_txn_fn)(blobtable_txn* txn, void* arg);
BLOBTABLE_C_API blobtable_code blobtable_run_transaction(blobtable_store* store,
                                                         blobtable_txn_fn fn, void* arg,
                                                         int max_attempts, int* attempts,
                                                         blobtable_txn** committed);

/* ------------------------------------------------------------------------ */
/* Coordination (docs/coordination.md)                                      */

/* Takes lock `name`, waiting up to timeout_ms (< 0: 30,000; at most ten
 * years) while another holder has it (LOCK_TIMEOUT then); renewed in the
 * background while held. */
BLOBTABLE_C_API blobtable_code blobtable_lock_acquire(blobtable_store* store, const char* name,
                                                      size_t len, int64_t timeout_ms,
                                                      blobtable_lock** out);
/* Its fencing token: larger than every earlier holder's. */
BLOBTABLE_C_API int64_t blobtable_lock_token(const blobtable_lock* lock);
/* BLOBTABLE_OK while this process may assume it holds the lock; LEASE_LOST
 * (and why) once lost, released, or out of time by this process's clock. */
BLOBTABLE_C_API blobtable_code blobtable_lock_status(blobtable_lock* lock);
/* Releases it. OK again after a release or a loss; fails only if storage
 * could not be reached (the lease then runs out by itself). */
BLOBTABLE_C_API blobtable_code blobtable_lock_release(blobtable_lock* lock);
/* Frees it, releasing it if held. */
BLOBTABLE_C_API void blobtable_lock_free(blobtable_lock* lock);

/* A work queue: items taken are hidden from others for visibility_seconds
 * (15..60; 0: 30), and come back unless completed or extended. An item is
 * completed, abandoned or extended through a handle of the queue it was
 * taken from (INVALID_ARGUMENT otherwise). */
BLOBTABLE_C_API blobtable_code blobtable_queue_open(blobtable_store* store, const char* name,
                                                    size_t len, int visibility_seconds,
                                                    blobtable_queue** out);
BLOBTABLE_C_API void blobtable_queue_close(blobtable_queue* queue);
/* Adds an item; *id (may be NULL) receives its id, which the caller frees
 * with blobtable_strings_free. */
BLOBTABLE_C_API blobtable_code blobtable_queue_put(blobtable_queue* queue, const void* body,
                                                   size_t len, blobtable_strings** id);
/* Takes a visible item (one of the oldest: takers spread over them so as
 * not to race for one); *out NULL if none is visible now. */
BLOBTABLE_C_API blobtable_code blobtable_queue_take(blobtable_queue* queue,
                                                    blobtable_queue_item** out);
BLOBTABLE_C_API const char* blobtable_queue_item_id(const blobtable_queue_item* item, size_t* len);
BLOBTABLE_C_API const void* blobtable_queue_item_body(const blobtable_queue_item* item,
                                                      size_t* len);
/* How many times it was taken, this time included. */
BLOBTABLE_C_API int blobtable_queue_item_dequeue_count(const blobtable_queue_item* item);
/* Done with it: deleted. LEASE_LOST if this delivery's time ran out (it is,
 * or will be, delivered again: do not count the work as done); NOT_FOUND if
 * it is gone already; OUTCOME_UNKNOWN if that could not be told. */
BLOBTABLE_C_API blobtable_code blobtable_queue_complete(blobtable_queue* queue,
                                                        blobtable_queue_item* item);
/* Gives it back at once for another to take (again, or once completed:
 * nothing happens). */
BLOBTABLE_C_API blobtable_code blobtable_queue_abandon(blobtable_queue* queue,
                                                       blobtable_queue_item* item);
/* Another visibility_seconds of holding it. */
BLOBTABLE_C_API blobtable_code blobtable_queue_extend(blobtable_queue* queue,
                                                      blobtable_queue_item* item);
BLOBTABLE_C_API void blobtable_queue_item_free(blobtable_queue_item* item);

/* Counter `name` (made by its first add). */
BLOBTABLE_C_API blobtable_code blobtable_counter_open(blobtable_store* store, const char* name,
                                                      size_t len, blobtable_counter** out);
BLOBTABLE_C_API void blobtable_counter_close(blobtable_counter* counter);
/* Adds delta atomically; *value (may be NULL) the sum after. */
BLOBTABLE_C_API blobtable_code blobtable_counter_add(blobtable_counter* counter, int64_t delta,
                                                     int64_t* value);
/* Its value now (0 before the first add). */
BLOBTABLE_C_API blobtable_code blobtable_counter_get(blobtable_counter* counter, int64_t* value);

#ifdef __cplusplus
}
#endif
#endif /* BLOBTABLE_C_H_ */
