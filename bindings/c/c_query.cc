// SPDX-License-Identifier: Apache-2.0
// The C API: queries over a table or one of its indexes, walked row by row
// across pages (include/blobtable/c.h).
#include <string>
#include <utility>
#include <vector>

#include "bindings/c/c_handles.h"

struct blobtable_query {
  std::shared_ptr<const blobtable::Store> store;
  blobtable::Table table;
  blobtable::QueryOptions options;
  std::optional<std::string> index;  // the index read instead of the table
  blobtable::IndexQuery index_query;
  std::vector<blobtable_entity> page;  // the page being walked
  size_t next = 0;                     // its next row
  int pages = 0;                       // pages fetched
  int page_limit = 0;                  // 0: all
  bool started = false;                // next was called: the setters are closed
  bool last_page = false;              // the page held has no continuation
  bool stale = false;
};

namespace blobtable::internal::c_api {
namespace {

// A setter's check: the query exists and has not started.
blobtable_code Settable(const blobtable_query* query) {
  if (query == nullptr) return NullArgument("query");
  if (query->started) return Invalid("the query has started: set it up before the first next");
  return BLOBTABLE_OK;
}

// The value a C caller gave for an index bound (c.h: blobtable_query_index_equal).
blobtable_code ValueOf(int type, const void* value, size_t len, PropertyValue* out) {
  if (value == nullptr && !(len == 0 && (type == BLOBTABLE_STRING || type == BLOBTABLE_BINARY ||
                                         type == BLOBTABLE_GUID)))
    return NullArgument("value");
  const char* bytes = static_cast<const char*>(value);
  std::string text = bytes == nullptr ? std::string() : std::string(bytes, len);
  switch (type) {
    case BLOBTABLE_STRING: *out = std::move(text); break;
    case BLOBTABLE_BINARY: *out = Binary{std::move(text)}; break;
    case BLOBTABLE_GUID: *out = Guid{std::move(text)}; break;
    case BLOBTABLE_BOOLEAN: *out = *static_cast<const int*>(value) != 0; break;
    case BLOBTABLE_DATETIME: *out = DateTime(Ticks(*static_cast<const int64_t*>(value))); break;
    case BLOBTABLE_DOUBLE: *out = *static_cast<const double*>(value); break;
    case BLOBTABLE_INT32: *out = *static_cast<const int32_t*>(value); break;
    case BLOBTABLE_INT64: *out = *static_cast<const int64_t*>(value); break;
    default: return Invalid("type " + std::to_string(type) + " is unknown");
  }
  return BLOBTABLE_OK;
}

// Fetches the query's next page into query->page.
blobtable_code Fetch(blobtable_query* query) {
  Result<QueryPage> page =
      query->index ? query->table.QueryIndex(*query->index, query->index_query, query->options)
                   : query->table.Query(query->options);
  if (!page.ok()) return Record(page.status());
  query->page.clear();
  query->page.reserve(page->entities.size());
  for (Entity& e : page->entities) query->page.push_back(blobtable_entity{std::move(e)});
  query->next = 0;
  query->pages += 1;
  query->stale = query->stale || page->stale;
  query->options.continuation = std::move(page->continuation);
  query->last_page = query->options.continuation.empty();
  return BLOBTABLE_OK;
}

template <typename Setter>
blobtable_code Set(blobtable_query* query, Setter&& set) {
  return Call([&] {
    if (blobtable_code c = Settable(query); c != BLOBTABLE_OK) return c;
    return set();
  });
}

// Sets `field` to the string (p, len).
blobtable_code SetString(blobtable_query* query, const char* p, size_t len, const char* what,
                         std::optional<std::string> QueryOptions::*field) {
  return Set(query, [&] {
    std::string_view v;
    if (!View(p, len, &v)) return BadString(what);
    query->options.*field = std::string(v);
    return Ok();
  });
}

}  // namespace
}  // namespace blobtable::internal::c_api

using namespace blobtable::internal::c_api;  // NOLINT: the entry points below are C's
using blobtable::PropertyValue;
using blobtable::QueryOptions;

extern "C" {

blobtable_code blobtable_query_create(blobtable_table* table, blobtable_query** out) {
  return Call([&] {
    if (out == nullptr) return NullArgument("out");
    *out = nullptr;
    if (table == nullptr) return NullArgument("table");
    auto* query = new blobtable_query{};
    query->store = table->store;
    query->table = table->table;
    *out = query;
    return Ok();
  });
}

void blobtable_query_free(blobtable_query* query) { delete query; }

blobtable_code blobtable_query_set_filter(blobtable_query* query, const char* filter, size_t len) {
  return Set(query, [&] {
    std::string_view v;
    if (!View(filter, len, &v)) return BadString("filter");
    query->options.filter = std::string(v);
    return Ok();
  });
}

blobtable_code blobtable_query_add_select(blobtable_query* query, const char* name, size_t len) {
  return Set(query, [&] {
    std::string_view v;
    if (!View(name, len, &v)) return BadString("name");
    query->options.select.emplace_back(v);
    return Ok();
  });
}

blobtable_code blobtable_query_set_partition(blobtable_query* query, const char* pk, size_t len) {
  return SetString(query, pk, len, "pk", &QueryOptions::partition_key);
}

blobtable_code blobtable_query_set_row_range(blobtable_query* query, const char* from,
                                             size_t from_len, const char* to, size_t to_len) {
  return Set(query, [&] {
    std::string_view f, t;
    if (!View(from, from_len, &f)) return BadString("from");
    if (!View(to, to_len, &t)) return BadString("to");
    query->options.row_key_from = from == nullptr ? std::nullopt : std::optional(std::string(f));
    query->options.row_key_to = to == nullptr ? std::nullopt : std::optional(std::string(t));
    return Ok();
  });
}

blobtable_code blobtable_query_set_row_prefix(blobtable_query* query, const char* prefix,
                                              size_t len) {
  return SetString(query, prefix, len, "prefix", &QueryOptions::row_key_prefix);
}

blobtable_code blobtable_query_set_page_size(blobtable_query* query, int rows) {
  return Set(query, [&] {
    if (rows < 1 || rows > 1000)
      return Invalid("page size " + std::to_string(rows) + " is outside 1..1000");
    query->options.top = rows;
    return Ok();
  });
}

blobtable_code blobtable_query_set_page_limit(blobtable_query* query, int pages) {
  return Set(query, [&] {
    if (pages < 0) return Invalid("page limit " + std::to_string(pages) + " is negative");
    query->page_limit = pages;
    return Ok();
  });
}

blobtable_code blobtable_query_set_continuation(blobtable_query* query, const char* token,
                                                size_t len) {
  return Set(query, [&] {
    std::string_view v;
    if (!View(token, len, &v)) return BadString("token");
    query->options.continuation = std::string(v);
    return Ok();
  });
}

blobtable_code blobtable_query_set_index(blobtable_query* query, const char* name, size_t len) {
  return Set(query, [&] {
    std::string_view v;
    if (!View(name, len, &v)) return BadString("name");
    query->index = std::string(v);
    return Ok();
  });
}

blobtable_code blobtable_query_index_equal(blobtable_query* query, int type, const void* value,
                                           size_t len) {
  return Set(query, [&] {
    PropertyValue v;
    if (blobtable_code c = ValueOf(type, value, len, &v); c != BLOBTABLE_OK) return c;
    query->index_query.equal.push_back(std::move(v));
    return Ok();
  });
}

blobtable_code blobtable_query_index_from(blobtable_query* query, int type, const void* value,
                                          size_t len) {
  return Set(query, [&] {
    PropertyValue v;
    if (blobtable_code c = ValueOf(type, value, len, &v); c != BLOBTABLE_OK) return c;
    query->index_query.from = std::move(v);
    return Ok();
  });
}

blobtable_code blobtable_query_index_to(blobtable_query* query, int type, const void* value,
                                        size_t len) {
  return Set(query, [&] {
    PropertyValue v;
    if (blobtable_code c = ValueOf(type, value, len, &v); c != BLOBTABLE_OK) return c;
    query->index_query.to = std::move(v);
    return Ok();
  });
}

blobtable_code blobtable_query_next(blobtable_query* query, const blobtable_entity** row) {
  return Call([&] {
    if (row == nullptr) return NullArgument("row");
    *row = nullptr;
    if (query == nullptr) return NullArgument("query");
    if (!query->started &&
        (query->index_query.from || query->index_query.to || !query->index_query.equal.empty()) &&
        !query->index)
      return Invalid("index values were given but no index (blobtable_query_set_index)");
    query->started = true;
    // An empty page with a continuation is possible (a filter that matched
    // nothing in the rows one page read): fetch on.
    while (query->next >= query->page.size()) {
      bool over = query->pages > 0 && query->last_page;
      bool limited = query->page_limit > 0 && query->pages >= query->page_limit;
      if (over || limited) return Ok();
      if (blobtable_code c = Fetch(query); c != BLOBTABLE_OK) return c;
    }
    *row = &query->page[query->next++];
    return Ok();
  });
}

const char* blobtable_query_continuation(const blobtable_query* query, size_t* len) {
  static const std::string empty;
  if (query == nullptr || query->pages == 0) return Out(empty, len);
  return Out(query->options.continuation, len);
}

int blobtable_query_stale(const blobtable_query* query) { return query != nullptr && query->stale; }

}  // extern "C"
