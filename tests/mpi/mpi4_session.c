/* MPI-4 sessions: process sets, groups from them, communicators from groups (intra and inter),
 * session error handlers, several sessions, and the world model beside them.
 *
 *   mpi4_session            sessions only: MPI_Init is never called
 *   mpi4_session after      a session first, then MPI_Init; MPI_Finalize before the session ends
 *   mpi4_session before     MPI_Init first, then a session; communicators from a group of
 *                           MPI_COMM_WORLD too; the session ends before MPI_Finalize */
#include "mtest.h"

static int handler_calls, handler_code;
static MPI_Session handler_session;

static void session_handler(MPI_Session *s, int *code, ...)
{
    handler_calls++;
    handler_code = *code;
    handler_session = *s;
}

static void check_flags(int init, int fin, const char *when)
{
    int i = -1, f = -1;
    MPI_CHECK(MPI_Initialized(&i));
    MPI_CHECK(MPI_Finalized(&f));
    CHECK(i == init && f == fin, "%s: MPI_Initialized %d, MPI_Finalized %d (expected %d, %d)", when, i, f, init, fin);
}

/* Traffic over an intracommunicator of n processes: a ring exchange and an allreduce. */
static void use_comm(MPI_Comm c, int n)
{
    int size, rank;
    MPI_CHECK(MPI_Comm_size(c, &size));
    MPI_CHECK(MPI_Comm_rank(c, &rank));
    CHECK(size == n, "communicator of %d processes, expected %d", size, n);
    int right = (rank + 1) % size, left = (rank + size - 1) % size, got = -1;
    MPI_CHECK(MPI_Sendrecv(&rank, 1, MPI_INT, right, 7, &got, 1, MPI_INT, left, 7, c, MPI_STATUS_IGNORE));
    CHECK(got == left, "ring: got %d from the left, expected %d", got, left);
    int sum = 0;
    MPI_CHECK(MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, c));
    CHECK(sum == size * (size - 1) / 2, "allreduce: %d", sum);
}

static void psets(MPI_Session s, int wsize)
{
    int n = -1;
    MPI_CHECK(MPI_Session_get_num_psets(s, MPI_INFO_NULL, &n));
    CHECK(n >= 2, "%d process sets", n);
    int seen_world = 0, seen_self = 0;
    for (int i = 0; i < n; i++) {
        int len = 0;
        MPI_CHECK(MPI_Session_get_nth_pset(s, MPI_INFO_NULL, i, &len, NULL));
        CHECK(len > 1 && len <= MPI_MAX_PSET_NAME_LEN, "pset %d: length %d", i, len);
        char name[MPI_MAX_PSET_NAME_LEN];
        int len2 = len;
        MPI_CHECK(MPI_Session_get_nth_pset(s, MPI_INFO_NULL, i, &len2, name));
        CHECK(len2 == len && (int)strlen(name) == len - 1, "pset %d: \"%s\", length %d then %d", i, name, len, len2);
        seen_world |= strcmp(name, "mpi://WORLD") == 0;
        seen_self |= strcmp(name, "mpi://SELF") == 0;
        if (strcmp(name, "mpi://WORLD") == 0 && len > 4) {
            /* a short buffer: truncated, null-terminated, the full length returned */
            char small[4] = "xxx";
            int l3 = 4;
            MPI_CHECK(MPI_Session_get_nth_pset(s, MPI_INFO_NULL, i, &l3, small));
            CHECK(strcmp(small, "mpi") == 0, "truncated pset name \"%s\"", small);
#ifndef MPICH_VERSION /* MPICH 4.0.2 returns the truncated length, not the size needed */
            CHECK(l3 == len, "truncated pset name: length %d returned, the name needs %d", l3, len);
#endif
        }
    }
    CHECK(seen_world && seen_self, "mpi://WORLD and mpi://SELF must be listed");

    MPI_Info info;
    char v[64];
    int vlen = sizeof v, flag = 0;
    MPI_CHECK(MPI_Session_get_pset_info(s, "mpi://WORLD", &info));
    MPI_CHECK(MPI_Info_get_string(info, "mpi_size", &vlen, v, &flag));
    CHECK(flag && atoi(v) == wsize, "mpi://WORLD mpi_size \"%s\"", flag ? v : "(none)");
    MPI_CHECK(MPI_Info_free(&info));
    MPI_CHECK(MPI_Session_get_pset_info(s, "mpi://SELF", &info));
    vlen = sizeof v;
    MPI_CHECK(MPI_Info_get_string(info, "mpi_size", &vlen, v, &flag));
    CHECK(flag && atoi(v) == 1, "mpi://SELF mpi_size \"%s\"", flag ? v : "(none)");
    MPI_CHECK(MPI_Info_free(&info));

#if !defined(MPICH_NUMVERSION) || MPICH_NUMVERSION >= 40100000 /* MPICH 4.0 compared them with case */
    /* names are taken without regard to case, as MPICH and Open MPI take them (programs written
     * for them say "mpi://world") */
    static const char *const spellings[][2] = { { "mpi://world", "mpi://WORLD" },
                                                { "MPI://World", "mpi://WORLD" },
                                                { "mpi://self", "mpi://SELF" } };
    for (int i = 0; i < 3; i++) {
        MPI_Group g, ref;
        int res = -1;
        vlen = sizeof v;
        MPI_CHECK(MPI_Session_get_pset_info(s, spellings[i][0], &info));
        MPI_CHECK(MPI_Info_get_string(info, "mpi_size", &vlen, v, &flag));
        MPI_CHECK(MPI_Info_free(&info));
        CHECK(flag && atoi(v) == (i < 2 ? wsize : 1), "%s: mpi_size \"%s\"", spellings[i][0], flag ? v : "(none)");
        MPI_CHECK(MPI_Group_from_session_pset(s, spellings[i][0], &g));
        MPI_CHECK(MPI_Group_from_session_pset(s, spellings[i][1], &ref));
        MPI_CHECK(MPI_Group_compare(g, ref, &res));
        CHECK(res == MPI_IDENT, "%s is not the group of %s (compare %d)", spellings[i][0], spellings[i][1], res);
        MPI_CHECK(MPI_Group_free(&g));
        MPI_CHECK(MPI_Group_free(&ref));
    }
#endif
}

/* Communicators from the session's process sets; returns this process's world rank. */
static int from_session(MPI_Session s, int *wsize_out)
{
    MPI_Group world, self;
    MPI_CHECK(MPI_Group_from_session_pset(s, "mpi://WORLD", &world));
    MPI_CHECK(MPI_Group_from_session_pset(s, "mpi://SELF", &self));
    int wsize, wrank, ssize, srank;
    MPI_CHECK(MPI_Group_size(world, &wsize));
    MPI_CHECK(MPI_Group_rank(world, &wrank));
    MPI_CHECK(MPI_Group_size(self, &ssize));
    MPI_CHECK(MPI_Group_rank(self, &srank));
    CHECK(wsize >= 1 && wrank >= 0 && wrank < wsize, "world group: rank %d of %d", wrank, wsize);
    CHECK(ssize == 1 && srank == 0, "self group: rank %d of %d", srank, ssize);
    psets(s, wsize);

    MPI_Comm wc, sc, dup, half;
    MPI_CHECK(MPI_Comm_create_from_group(world, "org.aptus.test.world", MPI_INFO_NULL, MPI_ERRORS_RETURN, &wc));
    use_comm(wc, wsize);
    MPI_CHECK(MPI_Comm_create_from_group(self, "org.aptus.test.self", MPI_INFO_NULL, MPI_ERRORS_RETURN, &sc));
    use_comm(sc, 1);
    /* the error handler given is the new communicator's */
    MPI_Errhandler eh;
    MPI_CHECK(MPI_Comm_get_errhandler(wc, &eh));
    CHECK(eh == MPI_ERRORS_RETURN, "the communicator from the group must have MPI_ERRORS_RETURN");
    MPI_CHECK(MPI_Errhandler_free(&eh));
    /* derived communicators work as usual */
    MPI_CHECK(MPI_Comm_dup(wc, &dup));
    use_comm(dup, wsize);
    MPI_CHECK(MPI_Comm_split(wc, wrank % 2, -wrank, &half));
    use_comm(half, (wsize + 1 - wrank % 2) / 2);
    /* a second communicator with the same tag and group: a fresh context, no mix-up */
    MPI_Comm wc2;
    MPI_CHECK(MPI_Comm_create_from_group(world, "org.aptus.test.world", MPI_INFO_NULL, MPI_ERRORS_RETURN, &wc2));
    int res;
    MPI_CHECK(MPI_Comm_compare(wc, wc2, &res));
    CHECK(res == MPI_CONGRUENT, "two communicators from one group: compare %d", res);
    if (wsize > 1) {
        /* messages on wc and wc2 must not match each other */
        int a = 1, b = 2, ra = 0, rb = 0, peer = wrank ^ 1;
        if (peer < wsize) {
            MPI_Request rq[2];
            MPI_CHECK(MPI_Irecv(&rb, 1, MPI_INT, peer, 0, wc2, &rq[0]));
            MPI_CHECK(MPI_Irecv(&ra, 1, MPI_INT, peer, 0, wc, &rq[1]));
            MPI_CHECK(MPI_Send(&a, 1, MPI_INT, peer, 0, wc));
            MPI_CHECK(MPI_Send(&b, 1, MPI_INT, peer, 0, wc2));
            MPI_CHECK(MPI_Waitall(2, rq, MPI_STATUSES_IGNORE));
            CHECK(ra == 1 && rb == 2, "messages crossed communicators: %d %d", ra, rb);
        }
    }

#ifndef MPICH_VERSION /* not tried with MPICH 4.0.2 */
    /* a process outside the group is refused (the members are not involved) */
    if (wsize > 1 && wrank == 1) {
        MPI_Group g0;
        MPI_Comm c0 = MPI_COMM_NULL;
        int zero = 0;
        MPI_CHECK(MPI_Group_incl(world, 1, &zero, &g0));
        int rc = MPI_Comm_create_from_group(g0, "org.aptus.test.outside", MPI_INFO_NULL, MPI_ERRORS_RETURN, &c0);
        CHECK_ERRCLASS(rc, MPI_ERR_GROUP, "MPI_Comm_create_from_group by a non-member");
        rc = MPI_Comm_create_from_group(world, NULL, MPI_INFO_NULL, MPI_ERRORS_RETURN, &c0);
        CHECK_ERRCLASS(rc, MPI_ERR_ARG, "MPI_Comm_create_from_group without a string tag");
        MPI_CHECK(MPI_Group_free(&g0));
    }
#endif
    /* an intercommunicator between the even and the odd world ranks */
    if (wsize > 1) {
        MPI_Group even, odd;
        int ne = (wsize + 1) / 2, no = wsize / 2;
        int r[64];
        for (int i = 0; i < ne; i++)
            r[i] = 2 * i;
        MPI_CHECK(MPI_Group_incl(world, ne, r, &even));
        for (int i = 0; i < no; i++)
            r[i] = 2 * i + 1;
        MPI_CHECK(MPI_Group_incl(world, no, r, &odd));
        MPI_Comm ic, merged;
        int mine = wrank % 2;
        MPI_CHECK(MPI_Intercomm_create_from_groups(mine ? odd : even, 0, mine ? even : odd, 0, "org.aptus.test.inter",
                                                   MPI_INFO_NULL, MPI_ERRORS_RETURN, &ic));
        int flag, lsize, rsize, lrank;
        MPI_CHECK(MPI_Comm_test_inter(ic, &flag));
        MPI_CHECK(MPI_Comm_size(ic, &lsize));
        MPI_CHECK(MPI_Comm_remote_size(ic, &rsize));
        MPI_CHECK(MPI_Comm_rank(ic, &lrank));
        CHECK(flag && lsize == (mine ? no : ne) && rsize == (mine ? ne : no) && lrank == wrank / 2,
              "intercommunicator: inter %d, local %d (rank %d), remote %d", flag, lsize, lrank, rsize);
        /* each process of the smaller side exchanges with its counterpart */
        if (lrank < no) {
            int out = wrank, in = -1;
            MPI_CHECK(MPI_Sendrecv(&out, 1, MPI_INT, lrank, 3, &in, 1, MPI_INT, lrank, 3, ic, MPI_STATUS_IGNORE));
            CHECK(in == (wrank ^ 1), "intercommunicator exchange: got %d", in);
        }
        MPI_CHECK(MPI_Intercomm_merge(ic, mine, &merged));
        use_comm(merged, wsize);
        int mrank;
        MPI_CHECK(MPI_Comm_rank(merged, &mrank));
        CHECK(mrank == (mine ? ne + wrank / 2 : wrank / 2), "merged rank %d", mrank);
        MPI_CHECK(MPI_Comm_free(&merged));
        MPI_CHECK(MPI_Comm_free(&ic));
        MPI_CHECK(MPI_Group_free(&even));
        MPI_CHECK(MPI_Group_free(&odd));
    }
    MPI_CHECK(MPI_Comm_free(&wc2));
    MPI_CHECK(MPI_Comm_free(&half));
    MPI_CHECK(MPI_Comm_free(&dup));
    MPI_CHECK(MPI_Comm_free(&sc));
    MPI_CHECK(MPI_Comm_free(&wc));
    MPI_CHECK(MPI_Group_free(&self));
    MPI_CHECK(MPI_Group_free(&world));
    *wsize_out = wsize;
    return wrank;
}

static void errors(MPI_Session s)
{
    MPI_Group g = MPI_GROUP_NULL;
    int rc = MPI_SUCCESS;
    (void)rc;
    (void)g;
#ifndef MPICH_VERSION /* MPICH 4.0.2 raises these on MPI_ERRORS_ARE_FATAL, not on the session */
    /* with MPI_ERRORS_RETURN on the session, bad arguments come back as codes */
    rc = MPI_Group_from_session_pset(s, "mpi://NO-SUCH-SET", &g);
    CHECK(rc != MPI_SUCCESS, "an unknown process set must be refused");
    int n = 0;
    MPI_CHECK(MPI_Session_get_num_psets(s, MPI_INFO_NULL, &n));
    int len = 0;
    rc = MPI_Session_get_nth_pset(s, MPI_INFO_NULL, n, &len, NULL);
    CHECK(rc != MPI_SUCCESS, "process set number %d (of %d) must be refused", n, n);
#endif

    /* a user handler: called by MPI_Session_call_errhandler with the session and the code */
    MPI_Errhandler eh, got;
    MPI_CHECK(MPI_Session_create_errhandler(session_handler, &eh));
    MPI_CHECK(MPI_Session_set_errhandler(s, eh));
    MPI_CHECK(MPI_Session_get_errhandler(s, &got));
    CHECK(got == eh, "MPI_Session_get_errhandler returned another handler");
    MPI_CHECK(MPI_Errhandler_free(&got));
    MPI_CHECK(MPI_Session_call_errhandler(s, MPI_ERR_OTHER));
    CHECK(handler_calls == 1 && handler_code == MPI_ERR_OTHER && handler_session == s,
          "session handler: %d calls, code %d", handler_calls, handler_code);
#ifndef MPICH_VERSION
    /* an error on the session goes to it */
    rc = MPI_Group_from_session_pset(s, "mpi://NO-SUCH-SET", &g);
    CHECK(rc != MPI_SUCCESS && handler_calls == 2 && handler_session == s,
          "an error in MPI_Group_from_session_pset must call the session's handler (%d calls)", handler_calls);
#endif
    MPI_CHECK(MPI_Session_set_errhandler(s, MPI_ERRORS_RETURN));
    MPI_CHECK(MPI_Errhandler_free(&eh));
}

static void session_info(MPI_Session s)
{
    MPI_Info info;
    char v[MPI_MAX_INFO_VAL];
    int vlen = sizeof v, flag = 0;
    MPI_CHECK(MPI_Session_get_info(s, &info));
    MPI_CHECK(MPI_Info_get_string(info, "thread_level", &vlen, v, &flag));
    CHECK(flag && strncmp(v, "MPI_THREAD_", 11) == 0, "thread_level \"%s\"", flag ? v : "(none)");
    MPI_CHECK(MPI_Info_free(&info));
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "only";
    int before = strcmp(mode, "before") == 0, after = strcmp(mode, "after") == 0;
    if (before) {
        MPI_CHECK(MPI_Init(&argc, &argv));
        check_flags(1, 0, "after MPI_Init");
    } else {
        check_flags(0, 0, "at start");
    }

    MPI_Info hints;
    MPI_CHECK(MPI_Info_create(&hints));
    MPI_CHECK(MPI_Info_set(hints, "thread_level", "MPI_THREAD_SINGLE"));
    MPI_Session s1, s2;
    MPI_CHECK(MPI_Session_init(hints, MPI_ERRORS_RETURN, &s1));
    MPI_CHECK(MPI_Info_free(&hints));
    if (!before)
        check_flags(0, 0, "after MPI_Session_init");
    session_info(s1);
    int wsize, wrank = from_session(s1, &wsize);
    errors(s1);

    /* a second session beside the first */
    MPI_CHECK(MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &s2));
    int wsize2, wrank2 = from_session(s2, &wsize2);
    CHECK(wrank2 == wrank && wsize2 == wsize, "the two sessions see different worlds");
    MPI_CHECK(MPI_Session_finalize(&s2));
    CHECK(s2 == MPI_SESSION_NULL, "MPI_Session_finalize must set the handle to MPI_SESSION_NULL");

    if (after) {
        MPI_CHECK(MPI_Init(&argc, &argv));
        check_flags(1, 0, "MPI_Init after a session");
    }
    if (before || after) {
        /* the world model: MPI_COMM_WORLD, and a communicator from one of its groups */
        int r, n;
        MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &r));
        MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &n));
        CHECK(r == wrank && n == wsize, "MPI_COMM_WORLD rank %d of %d, session world rank %d of %d", r, n, wrank,
              wsize);
        use_comm(MPI_COMM_WORLD, wsize);
        MPI_Group wg;
        MPI_Comm c;
        MPI_CHECK(MPI_Comm_group(MPI_COMM_WORLD, &wg));
        MPI_CHECK(MPI_Comm_create_from_group(wg, "org.aptus.test.fromworld", MPI_INFO_NULL, MPI_ERRORS_ARE_FATAL, &c));
        use_comm(c, wsize);
        MPI_CHECK(MPI_Comm_free(&c));
        MPI_CHECK(MPI_Group_free(&wg));
    }
    if (after) {
        MPI_CHECK(MPI_Finalize());
        check_flags(1, 1, "after MPI_Finalize, a session still open");
        /* the session still works */
        MPI_Group g;
        MPI_Comm c;
        MPI_CHECK(MPI_Group_from_session_pset(s1, "mpi://WORLD", &g));
        MPI_CHECK(MPI_Comm_create_from_group(g, "org.aptus.test.late", MPI_INFO_NULL, MPI_ERRORS_RETURN, &c));
        use_comm(c, wsize);
        MPI_CHECK(MPI_Comm_free(&c));
        MPI_CHECK(MPI_Group_free(&g));
    }
    MPI_CHECK(MPI_Session_finalize(&s1));
    if (before) {
        check_flags(1, 0, "after MPI_Session_finalize, before MPI_Finalize");
        MPI_CHECK(MPI_Finalize());
        check_flags(1, 1, "at the end");
    } else if (after) {
        check_flags(1, 1, "at the end");
    } else {
        check_flags(0, 0, "at the end (sessions only)");
    }
    if (wrank == 0)
        printf("mpi4_session %s: OK (%d processes)\n", mode, wsize);
    return 0;
}
