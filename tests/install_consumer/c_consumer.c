/* SPDX-License-Identifier: Apache-2.0 */
/* A C program on an installed blobtable (docs/api.md#the-c-api): writes an
 * entity and reads it back. Args: STORE */
#include <blobtable/c.h>

#include <stdio.h>
#include <string.h>

int main(int argc, char** argv) {
  blobtable_store* store = NULL;
  blobtable_table* table = NULL;
  blobtable_entity* e = NULL;
  int32_t n = 0;
  int ok;
  if (argc != 2) return 2;
  ok = blobtable_open(argv[1], strlen(argv[1]), NULL, &store) == BLOBTABLE_OK &&
       blobtable_table_open(store, "things", 6, &table) == BLOBTABLE_OK &&
       (e = blobtable_entity_create("p", 1, "r", 1)) != NULL &&
       blobtable_entity_set_int32(e, "n", 1, 42) == BLOBTABLE_OK &&
       blobtable_upsert(table, e) == BLOBTABLE_OK;
  blobtable_entity_free(e);
  e = NULL;
  ok = ok && blobtable_get(table, "p", 1, "r", 1, &e) == BLOBTABLE_OK &&
       blobtable_entity_get_int32(e, "n", 1, &n) == BLOBTABLE_OK && n == 42;
  if (!ok) fprintf(stderr, "c consumer: %s\n", blobtable_errmsg(NULL));
  blobtable_entity_free(e);
  blobtable_table_close(table);
  blobtable_close(store);
  if (ok) printf("c consumer: %s\n", blobtable_version());
  return ok ? 0 : 1;
}
