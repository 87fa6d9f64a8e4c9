/* The unit tests' check: counts a failure with the file, line and condition, and goes on; each
 * test's main returns failures != 0. */
#ifndef APTUS_TESTS_UNIT_CHECK_H
#define APTUS_TESTS_UNIT_CHECK_H

#include <stdio.h>

static int failures;

#define CHECK(cond)                                                                                                    \
    do {                                                                                                               \
        if (!(cond)) {                                                                                                 \
            fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond);                                   \
            failures++;                                                                                                \
        }                                                                                                              \
    } while (0)

#endif
