/* A small JSON writer for the documents the library writes (the statistics file,
 * APTUS_STATS_FILE: docs/STATS.md). Objects and arrays nest up to APTUS_JSON_DEPTH levels;
 * members are written in the order of the calls, one per line, indented. A key is given for a
 * member of an object and NULL for an element of an array. The writer does not check the
 * stream: the caller tests ferror / fclose at the end (and `fault`, set when a level was
 * opened beyond APTUS_JSON_DEPTH or closed that was not open: a fault of the caller, the
 * document is then not valid). */
#ifndef APTUS_RUNTIME_JSON_H
#define APTUS_RUNTIME_JSON_H

#include <stdint.h>
#include <stdio.h>

#define APTUS_JSON_DEPTH 16

struct aptus_json {
    FILE *f;
    int depth;                           /* open objects and arrays (the document's is 1) */
    char close[APTUS_JSON_DEPTH];        /* the bracket that closes each level */
    unsigned char any[APTUS_JSON_DEPTH]; /* whether the level has a member yet (a comma is due) */
    int fault;
};

/* Opens the document (an object) on f / closes it (and whatever was left open), with a newline. */
void aptus_json_begin(struct aptus_json *j, FILE *f);
void aptus_json_end(struct aptus_json *j);
/* Opens an object or an array as a member (key) or an element (key NULL); aptus_json_close
 * closes the innermost one. */
void aptus_json_object(struct aptus_json *j, const char *key);
void aptus_json_array(struct aptus_json *j, const char *key);
void aptus_json_close(struct aptus_json *j);
/* Scalars. A double that is not finite is written as null, and so is a NULL string. */
void aptus_json_u64(struct aptus_json *j, const char *key, uint64_t v);
void aptus_json_int(struct aptus_json *j, const char *key, long long v);
void aptus_json_double(struct aptus_json *j, const char *key, double v);
void aptus_json_bool(struct aptus_json *j, const char *key, int v);
void aptus_json_string(struct aptus_json *j, const char *key, const char *s);

#endif
