/* SPDX-License-Identifier: Apache-2.0 */
/* The C API (include/blobtable/c.h): an entity written and read back, then a
 * query over its partition, with every error reported.
 *   c_orders STORE */
#include <blobtable/c.h>

#include <stdio.h>
#include <string.h>

/* Prints the thread's last failure and returns 1. */
static int Fail(const char* what) {
  fprintf(stderr, "%s: %s\n", what, blobtable_errmsg(NULL));
  return 1;
}

int main(int argc, char** argv) {
  blobtable_store* store = NULL;
  blobtable_table* orders = NULL;
  int status = 0;
  if (argc != 2) {
    fprintf(stderr, "usage: c_orders STORE\n");
    return 2;
  }
  if (blobtable_open(argv[1], strlen(argv[1]), NULL, &store) != BLOBTABLE_OK)
    return Fail("open");
  if (blobtable_table_open(store, "orders", 6, &orders) != BLOBTABLE_OK) {
    blobtable_close(store);
    return Fail("table");
  }
  /* [readme] */
  blobtable_entity* order = blobtable_entity_create("customer-7", 10, "order-0001", 10);
  blobtable_entity_set_double(order, "total", 5, 99.5);
  blobtable_entity_set_int32(order, "items", 5, 3);
  if (blobtable_upsert(orders, order) != BLOBTABLE_OK) status = Fail("upsert");
  blobtable_entity_free(order);

  /* Every order of customer-7 over 50, page after page. */
  blobtable_query* query = NULL;
  const blobtable_entity* row = NULL;
  if (status == 0 && blobtable_query_create(orders, &query) == BLOBTABLE_OK &&
      blobtable_query_set_partition(query, "customer-7", 10) == BLOBTABLE_OK &&
      blobtable_query_set_filter(query, "total gt 50.0", 13) == BLOBTABLE_OK) {
    while (blobtable_query_next(query, &row) == BLOBTABLE_OK && row != NULL) {
      size_t len;
      const char* rk = blobtable_entity_row_key(row, &len);
      double total = 0;
      blobtable_entity_get_double(row, "total", 5, &total);
      printf("%.*s %.2f\n", (int)len, rk, total);
    }
  }
  if (blobtable_errcode() != BLOBTABLE_OK) status = Fail("query");
  blobtable_query_free(query);
  /* [/readme] */
  blobtable_table_close(orders);
  blobtable_close(store);
  return status;
}
