/*
 * support.h - helpers the unit tests share: reading the frozen model with
 * a test failure (not a crash) when something is missing, and building
 * byte streams for codec framing. Include after <cmocka.h>.
 */
#ifndef OP_TEST_SUPPORT_H
#define OP_TEST_SUPPORT_H

#include <stddef.h>
#include <stdint.h>

#include "model.h"

/* ---- the model ------------------------------------------------------------ */

const mentry *tm_get(const mmap *map, const char *key);
int tm_has(const mmap *map, const char *key);
/* A number (integer or float); fails the test when missing. */
double tm_num(const mmap *map, const char *key);
/* An exact integer; fails the test when missing or not an integer. */
int64_t tm_inum(const mmap *map, const char *key);
/* A string; fails the test when missing or not a string. */
const char *tm_str(const mmap *map, const char *key);
/* A node of the run; fails the test when missing. */
const struct op_node *tm_node(const struct op_run *r, const char *id);
/* A node's distribution of metric, or NULL. */
const op_dist *tm_dist(const struct op_node *n, const char *metric);
/* Whether one of the run's warnings contains needle. */
int tm_has_warning(const struct op_run *r, const char *needle);

/* A new frozen model the engine tests share (see support.c); free with
 * model_free(). */
model *tm_fixture_model(void);

/* ---- a scratch directory ------------------------------------------------ */

/* A group setup / teardown pair for cmocka_run_group_tests: tm_tmpdir is a
 * new directory under /tmp for the group's tests, removed with all it
 * holds afterwards. */
extern char tm_tmpdir[64];
int tm_tmpdir_setup(void **state);
int tm_tmpdir_teardown(void **state);

/* ---- byte buffers ----------------------------------------------------------- */

/* A growing, NUL-terminated byte buffer; free p when done. */
typedef struct dbuf {
    unsigned char *p;
    size_t n, cap;
} dbuf;

void db_add(dbuf *b, const void *src, size_t n);
void db_u8(dbuf *b, unsigned v);
void db_le32(dbuf *b, uint32_t v);
void db_be32(dbuf *b, uint32_t v);
void db_be16(dbuf *b, unsigned v);

#endif
