/* aptus-info --mpit: the same variables, read through the MPI tool interface (MPI_T) of the
 * library this program is linked with -- what a performance tool sees: every category with its
 * control variables (type, scope, value, description), performance variables (class, binding,
 * description) and events. Uses MPI_T only (no MPI_Init). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpit_list.h"

static const char *scope_name(int s)
{
    switch (s) {
    case MPI_T_SCOPE_CONSTANT: return "constant";
    case MPI_T_SCOPE_READONLY: return "read-only (fixed at start-up)";
    case MPI_T_SCOPE_LOCAL: return "local (may be written at run time)";
    case MPI_T_SCOPE_GROUP: return "group";
    case MPI_T_SCOPE_GROUP_EQ: return "group, equal";
    case MPI_T_SCOPE_ALL: return "all";
    case MPI_T_SCOPE_ALL_EQ: return "all ranks equal (may be written at run time, the same everywhere)";
    }
    return "?";
}

static const char *class_name(int c)
{
    switch (c) {
    case MPI_T_PVAR_CLASS_STATE: return "state";
    case MPI_T_PVAR_CLASS_LEVEL: return "level";
    case MPI_T_PVAR_CLASS_SIZE: return "size";
    case MPI_T_PVAR_CLASS_PERCENTAGE: return "percentage";
    case MPI_T_PVAR_CLASS_HIGHWATERMARK: return "high-water mark";
    case MPI_T_PVAR_CLASS_LOWWATERMARK: return "low-water mark";
    case MPI_T_PVAR_CLASS_COUNTER: return "counter";
    case MPI_T_PVAR_CLASS_AGGREGATE: return "aggregate";
    case MPI_T_PVAR_CLASS_TIMER: return "timer";
    case MPI_T_PVAR_CLASS_GENERIC: return "generic";
    }
    return "?";
}

static int fail(const char *call, int rc)
{
    char s[MPI_MAX_ERROR_STRING];
    int len = 0;
    MPI_Error_string(rc, s, &len);
    fprintf(stderr, "aptus-info: %s: %s\n", call, s);
    return 2;
}

#define TRY(call)                                                                                                      \
    do {                                                                                                               \
        int rc_ = (call);                                                                                              \
        if (rc_ != MPI_SUCCESS)                                                                                        \
            return fail(#call, rc_);                                                                                   \
    } while (0)

/* The value of control variable i, as text. */
static int cvar_value(int i, MPI_Datatype dt, MPI_T_enum en, char *out, size_t len)
{
    MPI_T_cvar_handle h;
    int count;
    TRY(MPI_T_cvar_handle_alloc(i, NULL, &h, &count));
    char *buf = calloc((size_t)count + 8, 8);
    if (!buf)
        return 2;
    TRY(MPI_T_cvar_read(h, buf));
    TRY(MPI_T_cvar_handle_free(&h));
    if (dt == MPI_CHAR) {
        snprintf(out, len, "\"%s\"", buf);
    } else if (dt == MPI_UNSIGNED_LONG_LONG) {
        unsigned long long v;
        memcpy(&v, buf, sizeof v);
        snprintf(out, len, "%llu", v);
    } else {
        int v;
        memcpy(&v, buf, sizeof v);
        char item[64] = "";
        int ilen = sizeof item, value;
        if (en != MPI_T_ENUM_NULL && MPI_T_enum_get_item(en, v, &value, item, &ilen) == MPI_SUCCESS)
            snprintf(out, len, "%s (item %d)", item, v);
        else
            snprintf(out, len, "%d", v);
    }
    free(buf);
    return 0;
}

static const char *type_of(MPI_Datatype dt, MPI_T_enum en)
{
    return en != MPI_T_ENUM_NULL ? "enum" : dt == MPI_CHAR ? "string" : dt == MPI_UNSIGNED_LONG_LONG ? "size" : "int";
}

int aptus_info_mpit(void)
{
    int provided, ncat, ncvar, npvar, nev;
    TRY(MPI_T_init_thread(MPI_THREAD_SINGLE, &provided));
    TRY(MPI_T_category_get_num(&ncat));
    TRY(MPI_T_cvar_get_num(&ncvar));
    TRY(MPI_T_pvar_get_num(&npvar));
    TRY(MPI_T_event_get_num(&nev));
    printf("Through the MPI tool interface (MPI_T): %d control variables, %d performance variables, %d events, in %d "
           "categories\n",
           ncvar, npvar, nev, ncat);
    for (int c = 0; c < ncat; c++) {
        char cname[64], cdesc[512];
        int clen = sizeof cname, dlen = sizeof cdesc, nc, np, nsub, ne;
        TRY(MPI_T_category_get_info(c, cname, &clen, cdesc, &dlen, &nc, &np, &nsub));
        TRY(MPI_T_category_get_num_events(c, &ne));
        printf("\ncategory %s: %s (%d control, %d performance variables, %d events)\n", cname, cdesc, nc, np, ne);
        int *idx = malloc(sizeof(int) * (size_t)(nc + np + ne + 1));
        if (!idx)
            return 2;
        TRY(MPI_T_category_get_cvars(c, nc, idx));
        for (int k = 0; k < nc; k++) {
            char name[128], desc[4096], value[512];
            int nlen = sizeof name, dl = sizeof desc, verb, bind, scope;
            MPI_Datatype dt;
            MPI_T_enum en;
            TRY(MPI_T_cvar_get_info(idx[k], name, &nlen, &verb, &dt, &en, desc, &dl, &bind, &scope));
            if (cvar_value(idx[k], dt, en, value, sizeof value))
                return 2;
            printf("  cvar %s (%s, %s) = %s\n      %s\n", name, type_of(dt, en), scope_name(scope), value, desc);
        }
        TRY(MPI_T_category_get_pvars(c, np, idx));
        for (int k = 0; k < np; k++) {
            char name[128], desc[512];
            int nlen = sizeof name, dl = sizeof desc, verb, cls, bind, ro, cont, atomic;
            MPI_Datatype dt;
            MPI_T_enum en;
            TRY(MPI_T_pvar_get_info(idx[k], name, &nlen, &verb, &cls, &dt, &en, desc, &dl, &bind, &ro, &cont, &atomic));
            printf("  pvar %s (%s%s%s)\n      %s\n", name, class_name(cls),
                   bind == MPI_T_BIND_MPI_COMM ? ", bound to a communicator" : "",
                   cont ? ", continuous, read-only" : ", started and stopped, resettable", desc);
        }
        TRY(MPI_T_category_get_events(c, ne, idx));
        for (int k = 0; k < ne; k++) {
            char name[128], desc[512];
            int nlen = sizeof name, dl = sizeof desc, verb, bind, nel = 0;
            MPI_T_enum en;
            MPI_Info info;
            TRY(MPI_T_event_get_info(idx[k], name, &nlen, &verb, NULL, NULL, &nel, &en, &info, desc, &dl, &bind));
            printf("  event %s (%d elements)\n      %s\n", name, nel, desc);
        }
        free(idx);
    }
    TRY(MPI_T_finalize());
    return 0;
}
