/* MPI_Info_create_env gives the same contents before and after MPI_Init (MPI 4.1: it may be
 * called before initialization), and MPI_INFO_ENV too: every key with the same value. */
#include "mtest.h"

#define MAXKEYS 32

struct pairs {
    int n;
    char key[MAXKEYS][MPI_MAX_INFO_KEY + 1];
    char val[MAXKEYS][1024];
};

static void read_info(MPI_Info info, struct pairs *p, const char *what)
{
    MPI_CHECK(MPI_Info_get_nkeys(info, &p->n));
    CHECK(p->n <= MAXKEYS, "%s: %d keys", what, p->n);
    for (int i = 0; i < p->n; i++) {
        int flag = 0, len = (int)sizeof p->val[i];
        MPI_CHECK(MPI_Info_get_nthkey(info, i, p->key[i]));
        MPI_CHECK(MPI_Info_get_string(info, p->key[i], &len, p->val[i], &flag));
        CHECK(flag, "%s: key %s listed but not found", what, p->key[i]);
    }
}

static void same(const struct pairs *a, const struct pairs *b, const char *what)
{
    CHECK(a->n == b->n, "%s: %d keys before MPI_Init, %d after", what, a->n, b->n);
    for (int i = 0; i < a->n; i++) {
        int j = 0;
        while (j < b->n && strcmp(a->key[i], b->key[j]) != 0)
            j++;
        CHECK(j < b->n, "%s: key %s before MPI_Init only", what, a->key[i]);
        CHECK(strcmp(a->val[i], b->val[j]) == 0, "%s: %s = \"%s\" before MPI_Init, \"%s\" after", what, a->key[i],
              a->val[i], b->val[j]);
    }
}

static struct pairs before_args, after_args, before_env, after_env;

int main(int argc, char **argv)
{
    MPI_Info info;
    MPI_CHECK(MPI_Info_create_env(argc, argv, &info));
    read_info(info, &before_args, "MPI_Info_create_env");
    MPI_CHECK(MPI_Info_free(&info));
    read_info(MPI_INFO_ENV, &before_env, "MPI_INFO_ENV");

    MPI_Init(&argc, &argv);
    MPI_CHECK(MPI_Info_create_env(argc, argv, &info));
    read_info(info, &after_args, "MPI_Info_create_env");
    MPI_CHECK(MPI_Info_free(&info));
    read_info(MPI_INFO_ENV, &after_env, "MPI_INFO_ENV");

    same(&before_args, &after_args, "MPI_Info_create_env");
    same(&before_env, &after_env, "MPI_INFO_ENV");
    if (getenv("MTEST_APTUS")) {
        /* What Aptus fills in: at least the command and the number of processes. */
        int size, found = 0;
        MPI_Comm_size(MPI_COMM_WORLD, &size);
        for (int i = 0; i < after_args.n; i++)
            if (strcmp(after_args.key[i], "maxprocs") == 0) {
                CHECK(atoi(after_args.val[i]) == size, "maxprocs %s, want %d", after_args.val[i], size);
                found = 1;
            }
        CHECK(found, "no maxprocs key");
    }
    MPI_Finalize();
    return 0;
}
