/* The JSON writer of the statistics file (runtime/json.h): nesting, commas, empty objects and
 * arrays, escapes, numbers, non-finite doubles, and the fault flag. */
#include "runtime/json.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "unit_check.h"

/* The document fn writes, as a string (the caller frees it). */
static char *written(void (*fn)(struct aptus_json *j), int *fault)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    struct aptus_json j;
    aptus_json_begin(&j, f);
    fn(&j);
    aptus_json_end(&j);
    *fault = j.fault;
    fclose(f);
    return buf;
}

static void doc(struct aptus_json *j)
{
    aptus_json_int(j, "schema", 1);
    aptus_json_string(j, "host", "a\"b\\c\nd\x01");
    aptus_json_object(j, "empty");
    aptus_json_close(j);
    aptus_json_array(j, "list");
    aptus_json_u64(j, NULL, UINT64_MAX);
    aptus_json_object(j, NULL);
    aptus_json_bool(j, "t", 1);
    aptus_json_double(j, "x", 0.5);
    aptus_json_double(j, "nan", NAN);
    aptus_json_string(j, "null", NULL);
    aptus_json_close(j);
    aptus_json_int(j, NULL, -3);
    aptus_json_close(j);
}

static void left_open(struct aptus_json *j)
{
    aptus_json_object(j, "a");
    aptus_json_array(j, "b");
}

static void too_deep(struct aptus_json *j)
{
    for (int i = 0; i < APTUS_JSON_DEPTH + 2; i++)
        aptus_json_object(j, "d");
}

int main(void)
{
    int fault;
    char *s = written(doc, &fault);
    const char *want = "{\n"
                       "  \"schema\": 1,\n"
                       "  \"host\": \"a\\\"b\\\\c\\nd\\u0001\",\n"
                       "  \"empty\": {},\n"
                       "  \"list\": [\n"
                       "    18446744073709551615,\n"
                       "    {\n"
                       "      \"t\": true,\n"
                       "      \"x\": 0.5,\n"
                       "      \"nan\": null,\n"
                       "      \"null\": null\n"
                       "    },\n"
                       "    -3\n"
                       "  ]\n"
                       "}\n";
    CHECK(!fault);
    CHECK(strcmp(s, want) == 0);
    if (strcmp(s, want) != 0)
        fprintf(stderr, "written:\n%s\nwanted:\n%s\n", s, want);
    free(s);
    /* levels left open are closed by the end */
    s = written(left_open, &fault);
    CHECK(!fault && strcmp(s, "{\n  \"a\": {\n    \"b\": []\n  }\n}\n") == 0);
    free(s);
    /* nesting beyond the limit is the caller's fault, flagged */
    s = written(too_deep, &fault);
    CHECK(fault);
    free(s);
    if (failures) {
        fprintf(stderr, "test_json: %d failure(s)\n", failures);
        return 1;
    }
    printf("test_json: all passed\n");
    return 0;
}
