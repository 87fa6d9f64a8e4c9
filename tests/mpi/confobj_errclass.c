/* MPI 4.1's MPI_Remove_error_class/_code/_string make room for new classes and codes: adding and
 * removing them in a loop (as MPICH's errhan/adderr does, 1.9 million additions) neither runs
 * out nor leaves stale strings or classes behind; removal in the wrong order (a class that still
 * has codes or a string, a code that still has a string) is refused with MPI_ERR_ARG and leaves
 * everything as it was. With MTEST_APTUS=1 also: values are reused, so MPI_LASTUSEDCODE stays
 * bounded by the most classes and codes alive at once, and covers every class in use. */
#include "mtest.h"

#define NCLASSES 32
#define NCODES   5
#define ROUNDS   10000

#if MPI_VERSION > 4 || (MPI_VERSION == 4 && MPI_SUBVERSION >= 1)
static int lastused(void)
{
    int *p, flag;
    MPI_CHECK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_LASTUSEDCODE, &p, &flag));
    CHECK(flag, "MPI_LASTUSEDCODE missing");
    return *p;
}
#endif

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
#if MPI_VERSION > 4 || (MPI_VERSION == 4 && MPI_SUBVERSION >= 1)
    int aptus = getenv("MTEST_APTUS") != NULL;
    int cls[NCLASSES], code[NCLASSES][NCODES], c, len, maxval = 0;
    char str[MPI_MAX_ERROR_STRING];
    int last0 = lastused();

    for (int k = 0; k < ROUNDS; k++) {
        for (int i = 0; i < NCLASSES; i++) {
            MPI_CHECK(MPI_Add_error_class(&cls[i]));
            if (cls[i] > maxval)
                maxval = cls[i];
            for (int j = 0; j < NCODES; j++) {
                MPI_CHECK(MPI_Add_error_code(cls[i], &code[i][j]));
                if (code[i][j] > maxval)
                    maxval = code[i][j];
                if (k % 1000 == 0)
                    MPI_CHECK(MPI_Add_error_string(code[i][j], "a transient string"));
            }
        }
        if (k % 1000 == 0) {
            /* Everything added this round is what it should be, with no leftovers. */
            for (int i = 0; i < NCLASSES; i++) {
                MPI_CHECK(MPI_Error_class(cls[i], &c));
                CHECK(c == cls[i], "round %d: class of class %d is %d", k, cls[i], c);
                MPI_CHECK(MPI_Error_string(cls[i], str, &len));
                CHECK(len == 0, "round %d: new class %d has the string \"%s\"", k, cls[i], str);
                for (int j = 0; j < NCODES; j++) {
                    MPI_CHECK(MPI_Error_class(code[i][j], &c));
                    CHECK(c == cls[i], "round %d: class of code %d is %d, want %d", k, code[i][j], c, cls[i]);
                }
            }
            if (aptus) {
                int last = lastused();
                for (int i = 0; i < NCLASSES; i++)
                    CHECK(last >= cls[i], "MPI_LASTUSEDCODE %d below the class %d in use", last, cls[i]);
            }
        }
        for (int i = 0; i < NCLASSES; i++) {
            for (int j = 0; j < NCODES; j++) {
                if (k % 1000 == 0)
                    MPI_CHECK(MPI_Remove_error_string(code[i][j]));
                MPI_CHECK(MPI_Remove_error_code(code[i][j]));
            }
            MPI_CHECK(MPI_Remove_error_class(cls[i]));
        }
    }
    if (aptus) {
        /* Removed values are handed out again: no more than the most alive at once. */
        int alive = NCLASSES * (NCODES + 1);
        CHECK(maxval < last0 + 1 + 2 * alive, "values grow: largest %d after %d rounds (started at %d)", maxval, ROUNDS,
              last0);
        CHECK(lastused() < last0 + 1 + 2 * alive, "MPI_LASTUSEDCODE grows: %d (started at %d)", lastused(), last0);
    }

    /* Removal in the wrong order is refused and changes nothing. */
    MPI_CHECK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));
    MPI_CHECK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    int k1, k2, e1;
    MPI_CHECK(MPI_Add_error_class(&k1));
    MPI_CHECK(MPI_Add_error_class(&k2));
    MPI_CHECK(MPI_Add_error_code(k1, &e1));
    MPI_CHECK(MPI_Add_error_string(k2, "class two"));
    MPI_CHECK(MPI_Add_error_string(e1, "code one"));
    if (aptus) {
        int rc = MPI_Remove_error_class(k1);
        CHECK_ERRCLASS(rc, MPI_ERR_ARG, "removing a class that still has a code");
        rc = MPI_Remove_error_class(k2);
        CHECK_ERRCLASS(rc, MPI_ERR_ARG, "removing a class that still has a string");
        rc = MPI_Remove_error_code(e1);
        CHECK_ERRCLASS(rc, MPI_ERR_ARG, "removing a code that still has a string");
        MPI_CHECK(MPI_Error_string(k2, str, &len));
        CHECK(strcmp(str, "class two") == 0, "string of the class after a refused removal: \"%s\"", str);
        MPI_CHECK(MPI_Error_class(e1, &c));
        CHECK(c == k1, "class of the code after a refused removal: %d, want %d", c, k1);
    }
    MPI_CHECK(MPI_Remove_error_string(e1));
    MPI_CHECK(MPI_Remove_error_code(e1));
    MPI_CHECK(MPI_Remove_error_class(k1));
    MPI_CHECK(MPI_Remove_error_string(k2));
    MPI_CHECK(MPI_Remove_error_class(k2));
    if (aptus) {
        int rc = MPI_Error_class(k2, &c);
        CHECK_ERRCLASS(rc, MPI_ERR_ARG, "class of a removed class");
    }
    MPI_CHECK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_ARE_FATAL));
    MPI_CHECK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
#else
    if (getenv("MTEST_APTUS"))
        FAILF("Aptus MPI implements MPI 4.1: the removal calls must be tested");
#endif
    MPI_Finalize();
    return 0;
}
