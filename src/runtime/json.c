/* A small JSON writer (runtime/json.h). */
#include "runtime/json.h"

#include <inttypes.h>
#include <math.h>
#include <string.h>

static void put_string(FILE *f, const char *s)
{
    fputc('"', f);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        switch (*p) {
        case '"': fputs("\\\"", f); break;
        case '\\': fputs("\\\\", f); break;
        case '\n': fputs("\\n", f); break;
        case '\r': fputs("\\r", f); break;
        case '\t': fputs("\\t", f); break;
        default:
            if (*p < 0x20)
                fprintf(f, "\\u%04x", *p);
            else
                fputc(*p, f);
        }
    }
    fputc('"', f);
}

static void indent(const struct aptus_json *j)
{
    fputc('\n', j->f);
    for (int i = 0; i < j->depth; i++)
        fputs("  ", j->f);
}

/* The separator, indentation and key of the next member of the innermost level. */
static void member(struct aptus_json *j, const char *key)
{
    if (j->any[j->depth])
        fputc(',', j->f);
    j->any[j->depth] = 1;
    indent(j);
    if (key) {
        put_string(j->f, key);
        fputs(": ", j->f);
    }
}

static void open_level(struct aptus_json *j, const char *key, char open, char close)
{
    if (j->depth + 1 >= APTUS_JSON_DEPTH) {
        j->fault = 1;
        return;
    }
    member(j, key);
    fputc(open, j->f);
    j->depth++;
    j->close[j->depth] = close;
    j->any[j->depth] = 0;
}

void aptus_json_begin(struct aptus_json *j, FILE *f)
{
    memset(j, 0, sizeof *j);
    j->f = f;
    fputc('{', f);
    j->depth = 1;
    j->close[1] = '}';
}

void aptus_json_end(struct aptus_json *j)
{
    while (j->depth > 0)
        aptus_json_close(j);
    fputc('\n', j->f);
}

void aptus_json_object(struct aptus_json *j, const char *key)
{
    open_level(j, key, '{', '}');
}

void aptus_json_array(struct aptus_json *j, const char *key)
{
    open_level(j, key, '[', ']');
}

void aptus_json_close(struct aptus_json *j)
{
    if (j->depth <= 0) {
        j->fault = 1;
        return;
    }
    int had = j->any[j->depth];
    char c = j->close[j->depth];
    j->depth--;
    if (had)
        indent(j);
    fputc(c, j->f);
}

void aptus_json_u64(struct aptus_json *j, const char *key, uint64_t v)
{
    member(j, key);
    fprintf(j->f, "%" PRIu64, v);
}

void aptus_json_int(struct aptus_json *j, const char *key, long long v)
{
    member(j, key);
    fprintf(j->f, "%lld", v);
}

void aptus_json_double(struct aptus_json *j, const char *key, double v)
{
    member(j, key);
    if (isfinite(v))
        fprintf(j->f, "%.9g", v);
    else
        fputs("null", j->f);
}

void aptus_json_bool(struct aptus_json *j, const char *key, int v)
{
    member(j, key);
    fputs(v ? "true" : "false", j->f);
}

void aptus_json_string(struct aptus_json *j, const char *key, const char *s)
{
    member(j, key);
    if (s)
        put_string(j->f, s);
    else
        fputs("null", j->f);
}
