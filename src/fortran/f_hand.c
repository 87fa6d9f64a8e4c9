/* The Fortran entry points no generator rule writes (tools/gen_fortran.py, HAND_WRITTEN):
 * procedures that take Fortran callbacks, attribute values (whose meaning depends on the
 * language that set them), the Fortran-only MPI_F_SYNC_REG, and those not offered yet. */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fortran/f_runtime.h"

/* Both names of every entry point: mpi_xxx_ calls MPI_Xxx, pmpi_xxx_ PMPI_Xxx (prof). */
#define F_ENTRY(name, params, args)                                                                                    \
    void mpi_##name##_ params                                                                                          \
    {                                                                                                                  \
        f_##name(0, args);                                                                                             \
    }                                                                                                                  \
    void pmpi_##name##_ params                                                                                         \
    {                                                                                                                  \
        f_##name(1, args);                                                                                             \
    }
#define F_CALL(prof, fn, ...) ((prof) ? PMPI_##fn(__VA_ARGS__) : MPI_##fn(__VA_ARGS__))
#define COMMA                 ,

typedef void f_fn(void);

static pthread_mutex_t hand_lock = PTHREAD_MUTEX_INITIALIZER;

/* ---- user reductions: a C function per slot calls the slot's Fortran subroutine ----------- */

typedef void f_user_fn(void *in, void *inout, MPI_Fint *len, MPI_Fint *type);
typedef void f_user_fn_c(void *in, void *inout, MPI_Count *len, MPI_Fint *type); /* MPI_Op_create_c's */
#define F_SLOTS 64

/* A table of slots: the Fortran function of each and the op made with it (-1 before it is). */
struct op_slot {
    f_fn *fn;
    MPI_Fint op;
};
static struct op_slot ops[F_SLOTS], ops_c[F_SLOTS];

/* A free slot of t for fn, or -1 when all are taken. */
static int slot_take(struct op_slot *t, f_fn *fn)
{
    pthread_mutex_lock(&hand_lock);
    int i = 0;
    while (i < F_SLOTS && t[i].fn)
        i++;
    if (i < F_SLOTS) {
        t[i].fn = fn;
        t[i].op = -1; /* no handle yet: a free of the slot's last op (its number may come again) misses it */
    }
    pthread_mutex_unlock(&hand_lock);
    return i < F_SLOTS ? i : -1;
}

/* After the C library's op creation: the op recorded (and returned), or the slot free again. */
static void slot_settle(struct op_slot *t, int i, int rc, MPI_Op h, MPI_Fint *op)
{
    pthread_mutex_lock(&hand_lock);
    if (rc == MPI_SUCCESS)
        t[i].op = *op = MPI_Op_toint(h);
    else
        t[i].fn = NULL;
    pthread_mutex_unlock(&hand_lock);
}

/* The slot of t holding op, or -1 (hand_lock held). */
static int slot_find(const struct op_slot *t, MPI_Fint op)
{
    for (int i = 0; i < F_SLOTS; i++)
        if (t[i].fn && t[i].op == op)
            return i;
    return -1;
}

#define F_OP_TRAMPOLINE(i)                                                                                             \
    static void op_##i(void *in, void *inout, int *len, MPI_Datatype *type)                                            \
    {                                                                                                                  \
        MPI_Fint t = MPI_Type_toint(*type);                                                                            \
        ((f_user_fn *)ops[0##i].fn)(in, inout, len, &t);                                                               \
    }                                                                                                                  \
    static void opc_##i(void *in, void *inout, MPI_Count *len, MPI_Datatype *type)                                     \
    {                                                                                                                  \
        MPI_Fint t = MPI_Type_toint(*type);                                                                            \
        ((f_user_fn_c *)ops_c[0##i].fn)(in, inout, len, &t);                                                           \
    }
#define F_SLOTS_8(X, b) X(b##0) X(b##1) X(b##2) X(b##3) X(b##4) X(b##5) X(b##6) X(b##7)
#define F_SLOTS_64(X)                                                                                                  \
    F_SLOTS_8(X, )                                                                                                     \
    F_SLOTS_8(X, 1) F_SLOTS_8(X, 2) F_SLOTS_8(X, 3) F_SLOTS_8(X, 4) F_SLOTS_8(X, 5) F_SLOTS_8(X, 6) F_SLOTS_8(X, 7)
/* slots 0-7, 10-17, ..., 70-77: 64 names, each read as an octal index (0##i) */
F_SLOTS_64(F_OP_TRAMPOLINE)
#define F_OP_NAME(i)  op_##i,
#define F_OPC_NAME(i) opc_##i,
static MPI_User_function *const op_trampolines[F_SLOTS] = { F_SLOTS_64(F_OP_NAME) };
static MPI_User_function_c *const opc_trampolines[F_SLOTS] = { F_SLOTS_64(F_OPC_NAME) };

static void f_op_create(int prof, f_user_fn *fn, MPI_Fint *commute, MPI_Fint *op, MPI_Fint *ierror)
{
    int i = slot_take(ops, (f_fn *)fn);
    if (i < 0) {
        *ierror = aptus_f_unsupported("MPI_Op_create", "more than 64 reductions written in Fortran at once");
        return;
    }
    MPI_Op h = MPI_OP_NULL;
    *ierror = F_CALL(prof, Op_create, op_trampolines[i], aptus_f_logical_in(*commute), &h);
    slot_settle(ops, i, *ierror, h, op);
}
F_ENTRY(op_create, (f_user_fn * fn, MPI_Fint *commute, MPI_Fint *op, MPI_Fint *ierror),
        fn COMMA commute COMMA op COMMA ierror)

static void f_op_create_c(int prof, f_user_fn_c *fn, MPI_Fint *commute, MPI_Fint *op, MPI_Fint *ierror)
{
    int i = slot_take(ops_c, (f_fn *)fn);
    if (i < 0) {
        *ierror =
            aptus_f_unsupported("MPI_Op_create_c", "more than 64 large-count reductions written in Fortran at once");
        return;
    }
    MPI_Op h = MPI_OP_NULL;
    *ierror = F_CALL(prof, Op_create_c, opc_trampolines[i], aptus_f_logical_in(*commute), &h);
    slot_settle(ops_c, i, *ierror, h, op);
}
F_ENTRY(op_create_c, (f_user_fn_c * fn, MPI_Fint *commute, MPI_Fint *op, MPI_Fint *ierror),
        fn COMMA commute COMMA op COMMA ierror)

static void f_op_free(int prof, MPI_Fint *op, MPI_Fint *ierror)
{
    /* the slot is found while the op lives (its number is its own until the C library frees
     * it), and given back by index: after the free, another thread's new op may have the number */
    pthread_mutex_lock(&hand_lock);
    int k = slot_find(ops, *op), kc = slot_find(ops_c, *op);
    pthread_mutex_unlock(&hand_lock);
    MPI_Op h = MPI_Op_fromint(*op);
    int rc = F_CALL(prof, Op_free, &h);
    *op = MPI_Op_toint(h);
    if (rc == MPI_SUCCESS && (k >= 0 || kc >= 0)) {
        pthread_mutex_lock(&hand_lock);
        if (k >= 0)
            ops[k].fn = NULL;
        if (kc >= 0)
            ops_c[kc].fn = NULL;
        pthread_mutex_unlock(&hand_lock);
    }
    *ierror = rc;
}
F_ENTRY(op_free, (MPI_Fint * op, MPI_Fint *ierror), op COMMA ierror)

/* ---- error handlers: the same, a slot each (kept: the handler may outlive its handle) ------ */

typedef void f_errh_fn(MPI_Fint *handle, MPI_Fint *code);
static struct {
    f_errh_fn *fn;
    int kind; /* APTUS_F_COMM, _WIN, _SESSION or _FILE */
} errhs[F_SLOTS];
static int nerrhs;

static MPI_Fint errh_toint(int kind, void *h)
{
    switch (kind) {
    case APTUS_F_COMM: return MPI_Comm_toint(h);
    case APTUS_F_WIN: return MPI_Win_toint(h);
    case APTUS_F_SESSION: return MPI_Session_toint(h);
    default: return MPI_File_toint(h);
    }
}

#define F_ERRH_TRAMPOLINE(i)                                                                                           \
    static void errh_##i(void *h, int *code, ...)                                                                      \
    {                                                                                                                  \
        MPI_Fint f = errh_toint(errhs[0##i].kind, *(void **)h);                                                        \
        errhs[0##i].fn(&f, code);                                                                                      \
    }
F_SLOTS_64(F_ERRH_TRAMPOLINE)
#define F_ERRH_NAME(i) errh_##i,
static void (*const errh_trampolines[F_SLOTS])(void *, int *, ...) = { F_SLOTS_64(F_ERRH_NAME) };

static int errh_slot(const char *call, f_errh_fn *fn, int kind, MPI_Fint *ierror)
{
    pthread_mutex_lock(&hand_lock);
    int i = nerrhs < F_SLOTS ? nerrhs++ : -1;
    if (i >= 0) {
        errhs[i].fn = fn;
        errhs[i].kind = kind;
    }
    pthread_mutex_unlock(&hand_lock);
    if (i < 0)
        *ierror = aptus_f_unsupported(call, "more than 64 error handlers written in Fortran");
    return i;
}

#define F_CREATE_ERRHANDLER(lname, Name, KIND, CT)                                                                     \
    static void f_##lname##_create_errhandler(int prof, f_errh_fn *fn, MPI_Fint *errh, MPI_Fint *ierror)               \
    {                                                                                                                  \
        int i = errh_slot("MPI_" #Name "_create_errhandler", fn, KIND, ierror);                                        \
        if (i < 0)                                                                                                     \
            return;                                                                                                    \
        MPI_Errhandler h = MPI_ERRHANDLER_NULL;                                                                        \
        *ierror = F_CALL(prof, Name##_create_errhandler, (CT *)(void (*)(void))errh_trampolines[i], &h);               \
        if (*ierror == MPI_SUCCESS)                                                                                    \
            *errh = MPI_Errhandler_toint(h);                                                                           \
    }                                                                                                                  \
    F_ENTRY(lname##_create_errhandler, (f_errh_fn * fn, MPI_Fint * errh, MPI_Fint * ierror), fn COMMA errh COMMA ierror)
F_CREATE_ERRHANDLER(comm, Comm, APTUS_F_COMM, MPI_Comm_errhandler_function)
F_CREATE_ERRHANDLER(win, Win, APTUS_F_WIN, MPI_Win_errhandler_function)
F_CREATE_ERRHANDLER(session, Session, APTUS_F_SESSION, MPI_Session_errhandler_function)
F_CREATE_ERRHANDLER(file, File, APTUS_F_FILE, MPI_File_errhandler_function)

/* ---- attribute keys: copy and delete callbacks found by key --------------------------------- */

/* The predefined callbacks a Fortran program names (mpif.h declares them EXTERNAL): given to
 * the C library as its own constants when a key is made with them (recognised by address), and
 * callable as what the standard says they do (a program may call them from its own callback). */
#define F_NULL_COPY(name, VT)                                                                                          \
    void name(MPI_Fint *old, MPI_Fint *keyval, VT *extra, VT *in, VT *out, MPI_Fint *flag, MPI_Fint *ierror);          \
    void name(MPI_Fint *old, MPI_Fint *keyval, VT *extra, VT *in, VT *out, MPI_Fint *flag, MPI_Fint *ierror)           \
    {                                                                                                                  \
        (void)old, (void)keyval, (void)extra, (void)in, (void)out;                                                     \
        *flag = aptus_f_logical_out(0);                                                                                \
        *ierror = MPI_SUCCESS;                                                                                         \
    }
#define F_DUP(name, VT)                                                                                                \
    void name(MPI_Fint *old, MPI_Fint *keyval, VT *extra, VT *in, VT *out, MPI_Fint *flag, MPI_Fint *ierror);          \
    void name(MPI_Fint *old, MPI_Fint *keyval, VT *extra, VT *in, VT *out, MPI_Fint *flag, MPI_Fint *ierror)           \
    {                                                                                                                  \
        (void)old, (void)keyval, (void)extra;                                                                          \
        *out = *in;                                                                                                    \
        *flag = aptus_f_logical_out(1);                                                                                \
        *ierror = MPI_SUCCESS;                                                                                         \
    }
#define F_NULL_DELETE(name, VT)                                                                                        \
    void name(MPI_Fint *h, MPI_Fint *keyval, VT *value, VT *extra, MPI_Fint *ierror);                                  \
    void name(MPI_Fint *h, MPI_Fint *keyval, VT *value, VT *extra, MPI_Fint *ierror)                                   \
    {                                                                                                                  \
        (void)h, (void)keyval, (void)value, (void)extra;                                                               \
        *ierror = MPI_SUCCESS;                                                                                         \
    }
F_NULL_COPY(mpi_comm_null_copy_fn_, MPI_Aint)
F_NULL_DELETE(mpi_comm_null_delete_fn_, MPI_Aint)
F_DUP(mpi_comm_dup_fn_, MPI_Aint)
F_NULL_COPY(mpi_type_null_copy_fn_, MPI_Aint)
F_NULL_DELETE(mpi_type_null_delete_fn_, MPI_Aint)
F_DUP(mpi_type_dup_fn_, MPI_Aint)
F_NULL_COPY(mpi_win_null_copy_fn_, MPI_Aint)
F_NULL_DELETE(mpi_win_null_delete_fn_, MPI_Aint)
F_DUP(mpi_win_dup_fn_, MPI_Aint)
/* MPI_KEYVAL_CREATE's: INTEGER state and values */
F_NULL_COPY(mpi_null_copy_fn_, MPI_Fint)
F_NULL_DELETE(mpi_null_delete_fn_, MPI_Fint)
F_DUP(mpi_dup_fn_, MPI_Fint)
/* MPI_CONVERSION_FN_NULL: names "no conversion" to MPI_REGISTER_DATAREP; never called */
void mpi_conversion_fn_null_(void);
void mpi_conversion_fn_null_(void)
{
}

/* A copy function in Fortran: (old, keyval, extra_state, value_in, value_out, flag, ierror), the
 * state and values INTEGER(KIND=MPI_ADDRESS_KIND) -- INTEGER for MPI_KEYVAL_CREATE's (narrow). */
typedef void f_copy_fn(MPI_Fint *old, MPI_Fint *keyval, void *extra, void *in, void *out, MPI_Fint *flag,
                       MPI_Fint *ierror);
typedef void f_delete_fn(MPI_Fint *h, MPI_Fint *keyval, void *value, void *extra, MPI_Fint *ierror);

struct f_keyval {
    int keyval, kind, narrow, copy_mode;
    f_copy_fn *copy;
    f_delete_fn *del;
};
static struct f_keyval *keyvals;
static int nkeyvals, capkeyvals;

static struct f_keyval key_find(int keyval)
{
    struct f_keyval k = { 0 };
    pthread_mutex_lock(&hand_lock);
    for (int i = 0; i < nkeyvals; i++)
        if (keyvals[i].keyval == keyval)
            k = keyvals[i];
    pthread_mutex_unlock(&hand_lock);
    return k;
}

static int key_add(struct f_keyval k)
{
    int ok = 1;
    pthread_mutex_lock(&hand_lock);
    int i = 0;
    while (i < nkeyvals && keyvals[i].keyval != k.keyval)
        i++;
    if (i == nkeyvals) {
        if (nkeyvals == capkeyvals) {
            int cap = capkeyvals ? 2 * capkeyvals : 16;
            struct f_keyval *v = realloc(keyvals, sizeof *v * (size_t)cap);
            if (v) {
                keyvals = v;
                capkeyvals = cap;
            }
        }
        if (nkeyvals < capkeyvals)
            nkeyvals++;
        else
            ok = 0;
    }
    if (ok)
        keyvals[i] = k;
    pthread_mutex_unlock(&hand_lock);
    return ok;
}

/* A communicator, datatype or window as an INTEGER. */
static MPI_Fint obj_toint(int kind, void *h)
{
    return kind == APTUS_F_TYPE ? MPI_Type_toint(h) : kind == APTUS_F_WIN ? MPI_Win_toint(h) : MPI_Comm_toint(h);
}

/* ---- attribute values set in Fortran: cells ---------------------------------------------------
 * A value set from Fortran is kept in a cell of this library and the C library stores the
 * cell's address: a C program reading the attribute gets a pointer to the integer, as MPI 4.1
 * 19.3.7 has it (and as MPICH and Open MPI do); a Fortran program reading it gets the integer
 * back. A value set from C is a pointer, which Fortran reads as its address-sized integer. The
 * cells live in a set, so that a pointer set by C is never taken for one. A cell goes when its
 * attribute is replaced or deleted from Fortran, or when the C library deletes it through a key
 * made in Fortran (whose callbacks are always this library's). */
struct f_cell {
    MPI_Aint value; /* first: the C library's pointer points at the integer */
};
static struct f_cell **cells; /* open addressing; NULL free, CELL_GONE deleted */
static size_t ncells_cap, ncells_used;
#define CELL_GONE ((struct f_cell *)1)

static size_t cell_hash(const void *p, size_t cap)
{
    return (size_t)(((uintptr_t)p >> 4) * 0x9e3779b97f4a7c15ull) & (cap - 1);
}

/* Whether p is a live cell (hand_lock held). */
static int cell_is(const void *p)
{
    if (!p || !ncells_cap)
        return 0;
    for (size_t i = cell_hash(p, ncells_cap);; i = (i + 1) & (ncells_cap - 1)) {
        if (cells[i] == p)
            return 1;
        if (!cells[i])
            return 0;
    }
}

static int cell_insert(struct f_cell *c) /* hand_lock held; 0 when out of memory */
{
    if (2 * (ncells_used + 1) > ncells_cap) {
        size_t cap = ncells_cap ? 2 * ncells_cap : 64;
        struct f_cell **t = calloc(cap, sizeof *t);
        if (!t)
            return 0;
        for (size_t j = 0; j < ncells_cap; j++)
            if (cells[j] && cells[j] != CELL_GONE)
                for (size_t i = cell_hash(cells[j], cap);; i = (i + 1) & (cap - 1))
                    if (!t[i]) {
                        t[i] = cells[j];
                        break;
                    }
        free(cells);
        cells = t;
        ncells_cap = cap;
        ncells_used = 0;
        for (size_t j = 0; j < cap; j++)
            ncells_used += t[j] != NULL;
    }
    size_t i = cell_hash(c, ncells_cap);
    while (cells[i] && cells[i] != CELL_GONE)
        i = (i + 1) & (ncells_cap - 1);
    ncells_used += !cells[i];
    cells[i] = c;
    return 1;
}

/* A new cell holding v, or NULL when out of memory. */
static struct f_cell *cell_new(MPI_Aint v)
{
    struct f_cell *c = malloc(sizeof *c);
    if (!c)
        return NULL;
    c->value = v;
    pthread_mutex_lock(&hand_lock);
    int ok = cell_insert(c);
    pthread_mutex_unlock(&hand_lock);
    if (!ok) {
        free(c);
        return NULL;
    }
    return c;
}

/* The integer a stored attribute stands for: a cell's value, or a pointer set by C. */
static MPI_Aint cell_value(void *p)
{
    pthread_mutex_lock(&hand_lock);
    MPI_Aint v = cell_is(p) ? ((struct f_cell *)p)->value : (MPI_Aint)p;
    pthread_mutex_unlock(&hand_lock);
    return v;
}

/* Frees p if it is a cell. */
static void cell_drop(void *p)
{
    pthread_mutex_lock(&hand_lock);
    int is = 0;
    if (p && ncells_cap)
        for (size_t i = cell_hash(p, ncells_cap); cells[i]; i = (i + 1) & (ncells_cap - 1))
            if (cells[i] == p) {
                cells[i] = CELL_GONE;
                is = 1;
                break;
            }
    pthread_mutex_unlock(&hand_lock);
    if (is)
        free(p);
}

/* ---- keys made in Fortran: their callbacks ---------------------------------------------------- */

enum { KEEP_NONE, KEEP_DUP, KEEP_USER }; /* a key's copy: MPI_*_NULL_COPY_FN, MPI_*_DUP_FN, the program's */

static int f_copy(int kind, void *old, int keyval, void *extra, void *in, void *out, int *flag)
{
    struct f_keyval k = key_find(keyval);
    MPI_Fint h = obj_toint(kind, old), fflag = 0, ierr = MPI_SUCCESS;
    MPI_Aint vin = cell_value(in), vout = 0;
    if (k.copy_mode == KEEP_NONE) {
        *flag = 0;
        return MPI_SUCCESS;
    }
    if (k.copy_mode == KEEP_DUP) {
        vout = vin;
        fflag = aptus_f_logical_out(1);
    } else if (k.narrow) {
        MPI_Fint e = (MPI_Fint)(intptr_t)extra, nin = (MPI_Fint)vin, nout = 0;
        k.copy(&h, &keyval, &e, &nin, &nout, &fflag, &ierr);
        vout = nout;
    } else {
        MPI_Aint e = (MPI_Aint)extra;
        k.copy(&h, &keyval, &e, &vin, &vout, &fflag, &ierr);
    }
    *flag = aptus_f_logical_in(fflag);
    if (*flag) {
        struct f_cell *c = cell_new(vout);
        if (!c)
            return MPI_ERR_NO_MEM;
        *(void **)out = c;
    }
    return ierr;
}

static int f_delete(int kind, void *obj, int keyval, void *value, void *extra)
{
    struct f_keyval k = key_find(keyval);
    MPI_Fint h = obj_toint(kind, obj), ierr = MPI_SUCCESS;
    MPI_Aint v = cell_value(value);
    if (k.del && k.narrow) {
        MPI_Fint e = (MPI_Fint)(intptr_t)extra, nv = (MPI_Fint)v;
        k.del(&h, &keyval, &nv, &e, &ierr);
    } else if (k.del) {
        MPI_Aint e = (MPI_Aint)extra;
        k.del(&h, &keyval, &v, &e, &ierr);
    }
    if (ierr == MPI_SUCCESS)
        cell_drop(value);
    return ierr;
}

static int comm_copy(MPI_Comm old, int keyval, void *extra, void *in, void *out, int *flag)
{
    return f_copy(APTUS_F_COMM, old, keyval, extra, in, out, flag);
}
static int comm_delete(MPI_Comm c, int keyval, void *value, void *extra)
{
    return f_delete(APTUS_F_COMM, c, keyval, value, extra);
}
static int type_copy(MPI_Datatype old, int keyval, void *extra, void *in, void *out, int *flag)
{
    return f_copy(APTUS_F_TYPE, old, keyval, extra, in, out, flag);
}
static int type_delete(MPI_Datatype t, int keyval, void *value, void *extra)
{
    return f_delete(APTUS_F_TYPE, t, keyval, value, extra);
}
static int win_copy(MPI_Win old, int keyval, void *extra, void *in, void *out, int *flag)
{
    return f_copy(APTUS_F_WIN, old, keyval, extra, in, out, flag);
}
static int win_delete(MPI_Win w, int keyval, void *value, void *extra)
{
    return f_delete(APTUS_F_WIN, w, keyval, value, extra);
}

/* A key made in Fortran: always this library's callbacks (they keep the cells right), which
 * call the program's own or do what the predefined ones do. */
#define F_CREATE_KEYVAL(lname, Name, KIND, CT, NULLCOPY, DUP, NULLDEL, NARROW, ET)                                     \
    static void f_##lname(int prof, f_copy_fn *copy, f_delete_fn *del, MPI_Fint *keyval, ET *extra, MPI_Fint *ierror)  \
    {                                                                                                                  \
        int mode = (f_fn *)copy == (f_fn *)NULLCOPY##_ ? KEEP_NONE                                                     \
                   : (f_fn *)copy == (f_fn *)DUP##_    ? KEEP_DUP                                                      \
                                                       : KEEP_USER;                                                       \
        f_delete_fn *d = (f_fn *)del == (f_fn *)NULLDEL##_ ? NULL : del;                                               \
        int k = MPI_KEYVAL_INVALID;                                                                                    \
        *ierror = F_CALL(prof, Name##_create_keyval, CT##_copy_fn, CT##_delete_fn, &k, (void *)(intptr_t)*extra);      \
        if (*ierror != MPI_SUCCESS)                                                                                    \
            return;                                                                                                    \
        if (!key_add((struct f_keyval){ k, APTUS_F_##KIND, NARROW, mode, mode == KEEP_USER ? copy : NULL, d })) {      \
            *ierror = aptus_f_nomem("MPI_" #Name "_create_keyval");                                                    \
            return;                                                                                                    \
        }                                                                                                              \
        *keyval = k;                                                                                                   \
    }                                                                                                                  \
    F_ENTRY(lname, (f_copy_fn * copy, f_delete_fn * del, MPI_Fint * keyval, ET * extra, MPI_Fint * ierror),            \
            copy COMMA del COMMA keyval COMMA extra COMMA ierror)

#define Comm_copy_fn   comm_copy
#define Comm_delete_fn comm_delete
#define Type_copy_fn   type_copy
#define Type_delete_fn type_delete
#define Win_copy_fn    win_copy
#define Win_delete_fn  win_delete
F_CREATE_KEYVAL(comm_create_keyval, Comm, COMM, Comm, mpi_comm_null_copy_fn, mpi_comm_dup_fn, mpi_comm_null_delete_fn,
                0, MPI_Aint)
F_CREATE_KEYVAL(type_create_keyval, Type, TYPE, Type, mpi_type_null_copy_fn, mpi_type_dup_fn, mpi_type_null_delete_fn,
                0, MPI_Aint)
F_CREATE_KEYVAL(win_create_keyval, Win, WIN, Win, mpi_win_null_copy_fn, mpi_win_dup_fn, mpi_win_null_delete_fn, 0,
                MPI_Aint)
F_CREATE_KEYVAL(keyval_create, Comm, COMM, Comm, mpi_null_copy_fn, mpi_dup_fn, mpi_null_delete_fn, 1, MPI_Fint)

/* ---- attribute values ------------------------------------------------------------------------ */

/* The predefined attributes are stored by the C library as pointers to their values; a Fortran
 * program gets the values (MPI 4.1, 19.3.7). MPI_WIN_BASE is the address itself. */
static MPI_Aint attr_value(int kind, int keyval, void *v)
{
    if (kind == APTUS_F_COMM &&
        (keyval == MPI_TAG_UB || keyval == MPI_HOST || keyval == MPI_IO || keyval == MPI_WTIME_IS_GLOBAL ||
         keyval == MPI_APPNUM || keyval == MPI_UNIVERSE_SIZE || keyval == MPI_LASTUSEDCODE))
        return *(int *)v;
    if (kind == APTUS_F_WIN &&
        (keyval == MPI_WIN_DISP_UNIT || keyval == MPI_WIN_CREATE_FLAVOR || keyval == MPI_WIN_MODEL))
        return *(int *)v;
    if (kind == APTUS_F_WIN && keyval == MPI_WIN_SIZE)
        return *(MPI_Aint *)v;
    if (kind == APTUS_F_WIN && keyval == MPI_WIN_BASE)
        return (MPI_Aint)v;
    return cell_value(v);
}

/* get: the value; set: a new cell, the one it replaces dropped (after the C library's delete
 * callback has seen it); delete: likewise. */
#define F_ATTR(lname, Name, KIND, HT, ET)                                                                              \
    static void f_##lname##_get_attr(int prof, MPI_Fint *h, MPI_Fint *keyval, ET *value, MPI_Fint *flag,               \
                                     MPI_Fint *ierror)                                                                 \
    {                                                                                                                  \
        void *v = NULL;                                                                                                \
        int found = 0;                                                                                                 \
        *ierror = F_CALL(prof, Name##_get_attr, MPI_##HT##_fromint(*h), *keyval, &v, &found);                          \
        if (*ierror == MPI_SUCCESS) {                                                                                  \
            *flag = aptus_f_logical_out(found);                                                                        \
            if (found)                                                                                                 \
                *value = (ET)attr_value(APTUS_F_##KIND, *keyval, v);                                                   \
        }                                                                                                              \
    }                                                                                                                  \
    F_ENTRY(lname##_get_attr, (MPI_Fint * h, MPI_Fint * keyval, ET * value, MPI_Fint * flag, MPI_Fint * ierror),       \
            h COMMA keyval COMMA value COMMA flag COMMA ierror)                                                        \
    static void f_##lname##_set_attr(int prof, MPI_Fint *h, MPI_Fint *keyval, ET *value, MPI_Fint *ierror)             \
    {                                                                                                                  \
        HT##_handle_t_ obj = MPI_##HT##_fromint(*h);                                                                   \
        void *old = NULL;                                                                                              \
        int had = 0;                                                                                                   \
        struct f_cell *c = cell_new((MPI_Aint)*value);                                                                 \
        if (!c) {                                                                                                      \
            *ierror = aptus_f_nomem("MPI_" #Name "_set_attr");                                                         \
            return;                                                                                                    \
        }                                                                                                              \
        if (PMPI_##Name##_get_attr(obj, *keyval, &old, &had) != MPI_SUCCESS)                                           \
            had = 0;                                                                                                   \
        *ierror = F_CALL(prof, Name##_set_attr, obj, *keyval, c);                                                      \
        cell_drop(*ierror == MPI_SUCCESS ? (had ? old : NULL) : (void *)c);                                            \
    }                                                                                                                  \
    F_ENTRY(lname##_set_attr, (MPI_Fint * h, MPI_Fint * keyval, ET * value, MPI_Fint * ierror),                        \
            h COMMA keyval COMMA value COMMA ierror)                                                                   \
    static void f_##lname##_delete_attr(int prof, MPI_Fint *h, MPI_Fint *keyval, MPI_Fint *ierror)                     \
    {                                                                                                                  \
        HT##_handle_t_ obj = MPI_##HT##_fromint(*h);                                                                   \
        void *old = NULL;                                                                                              \
        int had = 0;                                                                                                   \
        if (PMPI_##Name##_get_attr(obj, *keyval, &old, &had) != MPI_SUCCESS)                                           \
            had = 0;                                                                                                   \
        *ierror = F_CALL(prof, Name##_delete_attr, obj, *keyval);                                                      \
        if (*ierror == MPI_SUCCESS && had)                                                                             \
            cell_drop(old);                                                                                            \
    }                                                                                                                  \
    F_ENTRY(lname##_delete_attr, (MPI_Fint * h, MPI_Fint * keyval, MPI_Fint * ierror), h COMMA keyval COMMA ierror)
typedef MPI_Comm Comm_handle_t_;
typedef MPI_Datatype Type_handle_t_;
typedef MPI_Win Win_handle_t_;
F_ATTR(comm, Comm, COMM, Comm, MPI_Aint)
F_ATTR(type, Type, TYPE, Type, MPI_Aint)
F_ATTR(win, Win, WIN, Win, MPI_Aint)

/* MPI_ATTR_GET / MPI_ATTR_PUT / MPI_ATTR_DELETE: the same on communicators, INTEGER values. */
static void f_attr_get(int prof, MPI_Fint *h, MPI_Fint *keyval, MPI_Fint *value, MPI_Fint *flag, MPI_Fint *ierror)
{
    MPI_Aint v = 0;
    f_comm_get_attr(prof, h, keyval, &v, flag, ierror);
    if (*ierror == MPI_SUCCESS && aptus_f_logical_in(*flag))
        *value = (MPI_Fint)v;
}
F_ENTRY(attr_get, (MPI_Fint * h, MPI_Fint *keyval, MPI_Fint *value, MPI_Fint *flag, MPI_Fint *ierror),
        h COMMA keyval COMMA value COMMA flag COMMA ierror)
static void f_attr_put(int prof, MPI_Fint *h, MPI_Fint *keyval, MPI_Fint *value, MPI_Fint *ierror)
{
    MPI_Aint v = *value;
    f_comm_set_attr(prof, h, keyval, &v, ierror);
}
F_ENTRY(attr_put, (MPI_Fint * h, MPI_Fint *keyval, MPI_Fint *value, MPI_Fint *ierror),
        h COMMA keyval COMMA value COMMA ierror)
static void f_attr_delete(int prof, MPI_Fint *h, MPI_Fint *keyval, MPI_Fint *ierror)
{
    f_comm_delete_attr(prof, h, keyval, ierror);
}
F_ENTRY(attr_delete, (MPI_Fint * h, MPI_Fint *keyval, MPI_Fint *ierror), h COMMA keyval COMMA ierror)

/* ---- generalized requests: the Fortran callbacks and state travel as the C extra state -------
 * The callbacks get the program's own EXTRA_STATE variable (its address is kept), as MPICH and
 * Open MPI give it: a callback that changes it changes the caller's variable. */

typedef void f_query_fn(MPI_Aint *extra, MPI_Fint *status, MPI_Fint *ierror);
typedef void f_free_fn(MPI_Aint *extra, MPI_Fint *ierror);
typedef void f_cancel_fn(MPI_Aint *extra, MPI_Fint *complete, MPI_Fint *ierror);
struct f_greq {
    f_query_fn *query;
    f_free_fn *free_fn;
    f_cancel_fn *cancel;
    MPI_Aint *extra;
};

static int greq_query(void *state, MPI_Status *status)
{
    struct f_greq *g = state;
    MPI_Fint ierr = MPI_SUCCESS;
    g->query(g->extra, (MPI_Fint *)(void *)status, &ierr); /* eight INTEGERs: the C status */
    return ierr;
}

static int greq_free(void *state)
{
    struct f_greq *g = state;
    MPI_Fint ierr = MPI_SUCCESS;
    g->free_fn(g->extra, &ierr);
    free(g);
    return ierr;
}

static int greq_cancel(void *state, int complete)
{
    struct f_greq *g = state;
    MPI_Fint ierr = MPI_SUCCESS, c = aptus_f_logical_out(complete);
    g->cancel(g->extra, &c, &ierr);
    return ierr;
}

static void f_grequest_start(int prof, f_query_fn *query, f_free_fn *free_fn, f_cancel_fn *cancel, MPI_Aint *extra,
                             MPI_Fint *request, MPI_Fint *ierror)
{
    struct f_greq *g = malloc(sizeof *g);
    if (!g) {
        *ierror = aptus_f_nomem("MPI_Grequest_start");
        return;
    }
    *g = (struct f_greq){ query, free_fn, cancel, extra };
    MPI_Request h = MPI_REQUEST_NULL;
    *ierror = F_CALL(prof, Grequest_start, greq_query, greq_free, greq_cancel, g, &h);
    if (*ierror == MPI_SUCCESS)
        *request = MPI_Request_toint(h);
    else
        free(g);
}
F_ENTRY(grequest_start,
        (f_query_fn * query, f_free_fn *free_fn, f_cancel_fn *cancel, MPI_Aint *extra, MPI_Fint *request,
         MPI_Fint *ierror),
        query COMMA free_fn COMMA cancel COMMA extra COMMA request COMMA ierror)

/* ---- the detached buffer's address for mpi_f08 (a TYPE(C_PTR) there; mpif.h's entry points
 * receive it in a C variable: the Fortran argument is the buffer, maybe smaller than a pointer) */
#define F08_BUFFER_DETACH(sfx, Sfx, ST)                                                                                \
    static void f08_buffer_detach##sfx(int prof, void **addr, ST *size, MPI_Fint *ierror)                              \
    {                                                                                                                  \
        *ierror = F_CALL(prof, Buffer_detach##Sfx, addr, size);                                                        \
    }                                                                                                                  \
    void aptus_f08_buffer_detach##sfx##_(void **addr, ST *size, MPI_Fint *ierror)                                      \
    {                                                                                                                  \
        f08_buffer_detach##sfx(0, addr, size, ierror);                                                                 \
    }                                                                                                                  \
    void aptus_f08_pbuffer_detach##sfx##_(void **addr, ST *size, MPI_Fint *ierror)                                     \
    {                                                                                                                  \
        f08_buffer_detach##sfx(1, addr, size, ierror);                                                                 \
    }
F08_BUFFER_DETACH(, , MPI_Fint)
F08_BUFFER_DETACH(_c, _c, MPI_Count)
#define F08_DETACH(lname, Name, HT, sfx, Sfx, ST)                                                                      \
    static void f08_##lname##_detach_buffer##sfx(int prof, MPI_Fint *h, void **addr, ST *size, MPI_Fint *ierror)       \
    {                                                                                                                  \
        *ierror = F_CALL(prof, Name##_detach_buffer##Sfx, MPI_##HT##_fromint(*h), addr, size);                         \
    }                                                                                                                  \
    void aptus_f08_##lname##_detach_buffer##sfx##_(MPI_Fint *h, void **addr, ST *size, MPI_Fint *ierror)               \
    {                                                                                                                  \
        f08_##lname##_detach_buffer##sfx(0, h, addr, size, ierror);                                                    \
    }                                                                                                                  \
    void aptus_f08_p##lname##_detach_buffer##sfx##_(MPI_Fint *h, void **addr, ST *size, MPI_Fint *ierror)              \
    {                                                                                                                  \
        f08_##lname##_detach_buffer##sfx(1, h, addr, size, ierror);                                                    \
    }
F08_DETACH(comm, Comm, Comm, , , MPI_Fint)
F08_DETACH(comm, Comm, Comm, _c, _c, MPI_Count)
F08_DETACH(session, Session, Session, , , MPI_Fint)
F08_DETACH(session, Session, Session, _c, _c, MPI_Count)

/* ---- a non-contiguous section given to a call that keeps its buffer (mpi_f08's specifics) ---- */

/* The calls' names, kept: an error code is made once per call and reason. */
void aptus_f08_noncontig_(const char *name, MPI_Fint *ierror, size_t len)
{
    *ierror = aptus_f_error(MPI_ERR_BUFFER, aptus_f_intern(name, len),
                            "a non-contiguous array section cannot be this buffer: window memory, attached buffers "
                            "and the buffers of the collectives with one datatype per process need contiguous "
                            "storage; pass a contiguous array");
}

/* ---- the TYPE(C_PTR) forms the module mpi overloads MPI_ALLOC_MEM and the window allocations
 * with: the same eight bytes as INTEGER(KIND=MPI_ADDRESS_KIND), so the same entry points. */
#define F_CPTR(name, params, args)                                                                                     \
    void mpi_##name##_ params;                                                                                         \
    void pmpi_##name##_ params;                                                                                        \
    void mpi_##name##_cptr_ params;                                                                                    \
    void pmpi_##name##_cptr_ params;                                                                                   \
    void mpi_##name##_cptr_ params                                                                                     \
    {                                                                                                                  \
        mpi_##name##_ args;                                                                                            \
    }                                                                                                                  \
    void pmpi_##name##_cptr_ params                                                                                    \
    {                                                                                                                  \
        pmpi_##name##_ args;                                                                                           \
    }
F_CPTR(alloc_mem, (MPI_Aint * size, MPI_Fint *info, void *baseptr, MPI_Fint *ierror), (size, info, baseptr, ierror))
F_CPTR(win_allocate,
       (MPI_Aint * size, MPI_Fint *disp_unit, MPI_Fint *info, MPI_Fint *comm, void *baseptr, MPI_Fint *win,
        MPI_Fint *ierror),
       (size, disp_unit, info, comm, baseptr, win, ierror))
F_CPTR(win_allocate_shared,
       (MPI_Aint * size, MPI_Fint *disp_unit, MPI_Fint *info, MPI_Fint *comm, void *baseptr, MPI_Fint *win,
        MPI_Fint *ierror),
       (size, disp_unit, info, comm, baseptr, win, ierror))
F_CPTR(win_shared_query,
       (MPI_Fint * win, MPI_Fint *rank, MPI_Aint *size, MPI_Fint *disp_unit, void *baseptr, MPI_Fint *ierror),
       (win, rank, size, disp_unit, baseptr, ierror))

/* ---- the rest ------------------------------------------------------------------------------ */

/* MPI_INFO_GET_STRING: in Fortran BUFLEN counts no terminator -- on input the characters wanted
 * (0: VALUE left alone), on return the value's length -- and VALUE gets the first BUFLEN
 * characters, padded with blanks. */
static void f_info_get_string(int prof, MPI_Fint *info, char *key, MPI_Fint *buflen, char *value, MPI_Fint *flag,
                              MPI_Fint *ierror, size_t key_len, size_t value_len)
{
    size_t want = *buflen > 0 ? (size_t)*buflen : 0;
    char *k = aptus_f_string_in(key, key_len, 1);
    char *v = k ? malloc(want + 1) : NULL;
    if (!v) {
        free(k);
        *ierror = aptus_f_nomem("MPI_Info_get_string");
        return;
    }
    int cbuflen = (int)want + 1, found = 0;
    *ierror = F_CALL(prof, Info_get_string, MPI_Info_fromint(*info), k, &cbuflen, v, &found);
    if (*ierror == MPI_SUCCESS) {
        *flag = aptus_f_logical_out(found);
        if (found) {
            *buflen = cbuflen - 1;
            if (want > 0) {
                size_t n = strlen(v);
                n = n < want ? n : want;
                n = n < value_len ? n : value_len;
                memcpy(value, v, n);
                memset(value + n, ' ', value_len - n);
            }
        }
    }
    free(k);
    free(v);
}
F_ENTRY(info_get_string,
        (MPI_Fint * info, char *key, MPI_Fint *buflen, char *value, MPI_Fint *flag, MPI_Fint *ierror, size_t key_len,
         size_t value_len),
        info COMMA key COMMA buflen COMMA value COMMA flag COMMA ierror COMMA key_len COMMA value_len)

static void f_info_create_env(int prof, MPI_Fint *info, MPI_Fint *ierror)
{
    MPI_Info h = MPI_INFO_NULL;
    *ierror = F_CALL(prof, Info_create_env, 0, NULL, &h);
    if (*ierror == MPI_SUCCESS)
        *info = MPI_Info_toint(h);
}
F_ENTRY(info_create_env, (MPI_Fint * info, MPI_Fint *ierror), info COMMA ierror)

/* MPI_F_SYNC_REG: its whole effect is to be a call the compiler cannot see into. */
void mpi_f_sync_reg_(void *buf)
{
    (void)buf;
}
void pmpi_f_sync_reg_(void *buf)
{
    (void)buf;
}

/* Not offered yet: the arguments are named for the reader only. */
#define F_NOT_YET(name, Name, why, params, ierr)                                                                       \
    void mpi_##name##_ params                                                                                          \
    {                                                                                                                  \
        *(ierr) = aptus_f_unsupported("MPI_" #Name, why);                                                              \
    }                                                                                                                  \
    void pmpi_##name##_ params                                                                                         \
    {                                                                                                                  \
        *(ierr) = aptus_f_unsupported("MPI_" #Name, why);                                                              \
    }
/* ---- MPI_COMM_SPAWN, MPI_COMM_SPAWN_MULTIPLE: commands and argument lists from Fortran ----
 * An argument list is an array of strings of one length, ended by a blank one (MPI 4.1, 11.8.2);
 * for MPI_COMM_SPAWN_MULTIPLE, ARRAY_OF_ARGV(COUNT, *) holds command i's in row i. They are read
 * at the root only (they are significant there alone, and may be anything elsewhere). */
extern char aptus_f_argv_null_[1], aptus_f_argvs_null_[1], aptus_f08_argv_null[1], aptus_f08_argvs_null[1];

static int f_blank(const char *s, size_t len)
{
    for (size_t i = 0; i < len; i++)
        if (s[i] != ' ')
            return 0;
    return 1;
}

static void f_argv_free(char **v)
{
    for (char **a = v; a && *a; a++)
        free(*a);
    free(v);
}

/* Row `row` of `rows` (column-major, elements of len characters) as a C argv; NULL only out of
 * memory. */
static char **f_argv_in(const char *a, size_t len, int row, int rows)
{
    size_t n = 0;
    while (!f_blank(a + ((size_t)n * (size_t)rows + (size_t)row) * len, len))
        n++;
    char **v = calloc(n + 1, sizeof *v);
    for (size_t k = 0; v && k < n; k++)
        if (!(v[k] = aptus_f_string_in(a + (k * (size_t)rows + (size_t)row) * len, len, 0))) {
            f_argv_free(v);
            return NULL;
        }
    return v;
}

static int f_is_root(MPI_Fint *root, MPI_Fint *comm)
{
    int r = -1;
    return MPI_Comm_rank(MPI_Comm_f2c(*comm), &r) == MPI_SUCCESS && r == *root;
}

static void f_comm_spawn(int prof, char *c, char *a, MPI_Fint *m, MPI_Fint *i, MPI_Fint *r, MPI_Fint *cm, MPI_Fint *ic,
                         MPI_Fint *e, MPI_Fint *ierror, size_t cl, size_t al)
{
    int root = f_is_root(r, cm), given = a != aptus_f_argv_null_ && a != aptus_f08_argv_null;
    char *cmd = root ? aptus_f_string_in(c, cl, 1) : NULL;
    char **argv = root && given ? f_argv_in(a, al, 0, 1) : NULL;
    if (root && (!cmd || (given && !argv))) {
        free(cmd);
        *ierror = aptus_f_nomem("MPI_Comm_spawn");
        return;
    }
    MPI_Comm h = MPI_COMM_NULL;
    *ierror = F_CALL(prof, Comm_spawn, cmd ? cmd : "", argv, *m, MPI_Info_f2c(*i), *r, MPI_Comm_f2c(*cm), &h,
                     aptus_f_errcodes(e));
    *ic = MPI_Comm_c2f(h);
    free(cmd);
    f_argv_free(argv);
}
F_ENTRY(comm_spawn,
        (char *c, char *a, MPI_Fint *m, MPI_Fint *i, MPI_Fint *r, MPI_Fint *cm, MPI_Fint *ic, MPI_Fint *e,
         MPI_Fint *ierror, size_t cl, size_t al),
        c COMMA a COMMA m COMMA i COMMA r COMMA cm COMMA ic COMMA e COMMA ierror COMMA cl COMMA al)

static void f_comm_spawn_multiple(int prof, MPI_Fint *n, char *c, char *a, MPI_Fint *m, MPI_Fint *i, MPI_Fint *r,
                                  MPI_Fint *cm, MPI_Fint *ic, MPI_Fint *e, MPI_Fint *ierror, size_t cl, size_t al)
{
    int root = f_is_root(r, cm), count = root && *n > 0 ? (int)*n : 0, bad = 0;
    char **cmds = count ? calloc((size_t)count, sizeof *cmds) : NULL;
    char ***argvs =
        count && a != aptus_f_argvs_null_ && a != aptus_f08_argvs_null ? calloc((size_t)count, sizeof *argvs) : NULL;
    MPI_Info *infos = count ? calloc((size_t)count, sizeof *infos) : NULL;
    bad = count && (!cmds || !infos || (a != aptus_f_argvs_null_ && a != aptus_f08_argvs_null && !argvs));
    for (int k = 0; k < count && !bad; k++) {
        infos[k] = MPI_Info_f2c(i[k]);
        bad = !(cmds[k] = aptus_f_string_in(c + (size_t)k * cl, cl, 1));
        if (!bad && argvs && !(argvs[k] = f_argv_in(a, al, k, count)))
            bad = 1;
    }
    if (!bad) {
        MPI_Comm h = MPI_COMM_NULL;
        *ierror = F_CALL(prof, Comm_spawn_multiple, root ? count : (int)*n, cmds, argvs, m, infos, *r,
                         MPI_Comm_f2c(*cm), &h, aptus_f_errcodes(e));
        *ic = MPI_Comm_c2f(h);
    } else {
        *ierror = aptus_f_nomem("MPI_Comm_spawn_multiple");
    }
    for (int k = 0; k < count; k++) {
        if (cmds)
            free(cmds[k]);
        if (argvs)
            f_argv_free(argvs[k]);
    }
    free(cmds);
    free(argvs);
    free(infos);
}
F_ENTRY(comm_spawn_multiple,
        (MPI_Fint * n, char *c, char *a, MPI_Fint *m, MPI_Fint *i, MPI_Fint *r, MPI_Fint *cm, MPI_Fint *ic, MPI_Fint *e,
         MPI_Fint *ierror, size_t cl, size_t al),
        n COMMA c COMMA a COMMA m COMMA i COMMA r COMMA cm COMMA ic COMMA e COMMA ierror COMMA cl COMMA al)
F_NOT_YET(sizeof, Sizeof, "not available yet", (void *x, MPI_Fint *size, MPI_Fint *ierror), ierror)

/* ---- user data representations: C functions call the Fortran ones (the registration lives as
 * long as the process, and so does its copy of EXTRA_STATE) ---------------------------------- */

typedef void f_conv_fn(void *userbuf, MPI_Fint *datatype, MPI_Fint *count, void *filebuf, MPI_Offset *position,
                       MPI_Aint *extra, MPI_Fint *ierror);
typedef void f_extent_fn(MPI_Fint *datatype, MPI_Aint *extent, MPI_Aint *extra, MPI_Fint *ierror);
struct f_datarep {
    f_conv_fn *rd, *wr;
    f_extent_fn *extent;
    MPI_Aint extra;
};

static int datarep_conv(f_conv_fn *fn, void *userbuf, MPI_Datatype t, int count, void *filebuf, MPI_Offset position,
                        struct f_datarep *r)
{
    MPI_Fint ft = MPI_Type_c2f(t), n = count, ierr = MPI_SUCCESS;
    fn(userbuf, &ft, &n, filebuf, &position, &r->extra, &ierr);
    return ierr;
}
static int datarep_read(void *u, MPI_Datatype t, int count, void *f, MPI_Offset pos, void *state)
{
    return datarep_conv(((struct f_datarep *)state)->rd, u, t, count, f, pos, state);
}
static int datarep_write(void *u, MPI_Datatype t, int count, void *f, MPI_Offset pos, void *state)
{
    return datarep_conv(((struct f_datarep *)state)->wr, u, t, count, f, pos, state);
}
static int datarep_extent(MPI_Datatype t, MPI_Aint *extent, void *state)
{
    struct f_datarep *r = state;
    MPI_Fint ft = MPI_Type_c2f(t), ierr = MPI_SUCCESS;
    r->extent(&ft, extent, &r->extra, &ierr);
    return ierr;
}

static void f_register_datarep(int prof, char *d, f_conv_fn *rd, f_conv_fn *wr, f_extent_fn *extent, MPI_Aint *extra,
                               MPI_Fint *ierror, size_t dl)
{
    struct f_datarep *r = malloc(sizeof *r);
    char *name = aptus_f_string_in(d, dl, 0);
    if (!r || !name) {
        free(r);
        free(name);
        *ierror = aptus_f_nomem("MPI_Register_datarep");
        return;
    }
    f_conv_fn *null = (f_conv_fn *)(void *)mpi_conversion_fn_null_;
    *r = (struct f_datarep){ rd == null ? NULL : rd, wr == null ? NULL : wr, extent, *extra };
    *ierror = F_CALL(prof, Register_datarep, name, r->rd ? datarep_read : MPI_CONVERSION_FN_NULL,
                     r->wr ? datarep_write : MPI_CONVERSION_FN_NULL, extent ? datarep_extent : NULL, r);
    if (*ierror != MPI_SUCCESS)
        free(r);
    free(name);
}
F_ENTRY(register_datarep,
        (char *d, f_conv_fn *rd, f_conv_fn *wr, f_extent_fn *extent, MPI_Aint *extra, MPI_Fint *ierror, size_t dl),
        d COMMA rd COMMA wr COMMA extent COMMA extra COMMA ierror COMMA dl)

/* The f08 status is laid out as the INTEGER one (and as the C one). */
static void f_status_f2f08(int prof, MPI_Fint *f, MPI_F08_status *f08, MPI_Fint *ierror)
{
    *ierror = F_CALL(prof, Status_f2f08, f, f08);
}
F_ENTRY(status_f2f08, (MPI_Fint * f, MPI_F08_status *f08, MPI_Fint *ierror), f COMMA f08 COMMA ierror)
static void f_status_f082f(int prof, MPI_F08_status *f08, MPI_Fint *f, MPI_Fint *ierror)
{
    *ierror = F_CALL(prof, Status_f082f, f08, f);
}
F_ENTRY(status_f082f, (MPI_F08_status * f08, MPI_Fint *f, MPI_Fint *ierror), f08 COMMA f COMMA ierror)

/* ---- MPI-1 routines removed in MPI 3.0 that old programs still call (mpif.h and `mpi` only) ---
 * Their addresses and displacements are default INTEGERs: a value that does not fit is
 * refused with MPI_ERR_ARG (never silently cut). The C library keeps them (api/legacy.c). */

/* An address-sized value into an INTEGER, or the error of `call`. */
static int narrow(MPI_Aint v, MPI_Fint *out, const char *call)
{
    if (v != (MPI_Aint)(MPI_Fint)v)
        return aptus_f_error(MPI_ERR_ARG, call, "the value does not fit a default INTEGER (use the MPI-2 routine)");
    *out = (MPI_Fint)v;
    return MPI_SUCCESS;
}

static void f_address(int prof, void *location, MPI_Fint *address, MPI_Fint *ierror)
{
    MPI_Aint a = 0;
    *ierror = F_CALL(prof, Get_address, aptus_f_buf(location), &a);
    if (*ierror == MPI_SUCCESS)
        *ierror = narrow(a, address, "MPI_Address");
}
F_ENTRY(address, (void *location, MPI_Fint *address, MPI_Fint *ierror), location COMMA address COMMA ierror)

#define F_TYPE_BOUND(lname, Name)                                                                                      \
    static void f_##lname(int prof, MPI_Fint *type, MPI_Fint *out, MPI_Fint *ierror)                                   \
    {                                                                                                                  \
        MPI_Aint v = 0;                                                                                                \
        *ierror = F_CALL(prof, Name, MPI_Type_fromint(*type), &v);                                                     \
        if (*ierror == MPI_SUCCESS)                                                                                    \
            *ierror = narrow(v, out, "MPI_" #Name);                                                                    \
    }                                                                                                                  \
    F_ENTRY(lname, (MPI_Fint * type, MPI_Fint * out, MPI_Fint * ierror), type COMMA out COMMA ierror)
F_TYPE_BOUND(type_extent, Type_extent)
F_TYPE_BOUND(type_lb, Type_lb)
F_TYPE_BOUND(type_ub, Type_ub)

static void f_type_hvector(int prof, MPI_Fint *count, MPI_Fint *blocklen, MPI_Fint *stride, MPI_Fint *oldtype,
                           MPI_Fint *newtype, MPI_Fint *ierror)
{
    MPI_Datatype h = MPI_DATATYPE_NULL;
    *ierror = F_CALL(prof, Type_create_hvector, *count, *blocklen, (MPI_Aint)*stride, MPI_Type_fromint(*oldtype), &h);
    if (*ierror == MPI_SUCCESS)
        *newtype = MPI_Type_toint(h);
}
F_ENTRY(type_hvector,
        (MPI_Fint * count, MPI_Fint *blocklen, MPI_Fint *stride, MPI_Fint *oldtype, MPI_Fint *newtype,
         MPI_Fint *ierror),
        count COMMA blocklen COMMA stride COMMA oldtype COMMA newtype COMMA ierror)

/* MPI_TYPE_HINDEXED and MPI_TYPE_STRUCT: INTEGER displacements widened; types: one, or an array. */
static void f_legacy_h(int prof, int structured, MPI_Fint *count, MPI_Fint *blocklens, MPI_Fint *displs,
                       MPI_Fint *types, MPI_Fint *newtype, MPI_Fint *ierror)
{
    int n = *count > 0 ? *count : 0;
    MPI_Aint *d = malloc(sizeof *d * (size_t)(n ? n : 1));
    MPI_Datatype *t = structured ? malloc(sizeof *t * (size_t)(n ? n : 1)) : NULL;
    if (!d || (structured && !t)) {
        free(d);
        free(t);
        *ierror = aptus_f_nomem(structured ? "MPI_Type_struct" : "MPI_Type_hindexed");
        return;
    }
    for (int i = 0; i < n; i++) {
        d[i] = displs[i];
        if (structured)
            t[i] = MPI_Type_fromint(types[i]);
    }
    MPI_Datatype h = MPI_DATATYPE_NULL;
    if (structured)
        *ierror = F_CALL(prof, Type_create_struct, *count, blocklens, d, t, &h);
    else
        *ierror = F_CALL(prof, Type_create_hindexed, *count, blocklens, d, MPI_Type_fromint(*types), &h);
    if (*ierror == MPI_SUCCESS)
        *newtype = MPI_Type_toint(h);
    free(d);
    free(t);
}
static void f_type_hindexed(int prof, MPI_Fint *count, MPI_Fint *blocklens, MPI_Fint *displs, MPI_Fint *oldtype,
                            MPI_Fint *newtype, MPI_Fint *ierror)
{
    f_legacy_h(prof, 0, count, blocklens, displs, oldtype, newtype, ierror);
}
F_ENTRY(type_hindexed,
        (MPI_Fint * count, MPI_Fint *blocklens, MPI_Fint *displs, MPI_Fint *oldtype, MPI_Fint *newtype,
         MPI_Fint *ierror),
        count COMMA blocklens COMMA displs COMMA oldtype COMMA newtype COMMA ierror)
static void f_type_struct(int prof, MPI_Fint *count, MPI_Fint *blocklens, MPI_Fint *displs, MPI_Fint *types,
                          MPI_Fint *newtype, MPI_Fint *ierror)
{
    f_legacy_h(prof, 1, count, blocklens, displs, types, newtype, ierror);
}
F_ENTRY(type_struct,
        (MPI_Fint * count, MPI_Fint *blocklens, MPI_Fint *displs, MPI_Fint *types, MPI_Fint *newtype, MPI_Fint *ierror),
        count COMMA blocklens COMMA displs COMMA types COMMA newtype COMMA ierror)

/* MPI_ERRHANDLER_CREATE: MPI_COMM_CREATE_ERRHANDLER's old name; _SET and _GET on communicators. */
static void f_errhandler_create(int prof, f_errh_fn *fn, MPI_Fint *errh, MPI_Fint *ierror)
{
    f_comm_create_errhandler(prof, fn, errh, ierror);
}
F_ENTRY(errhandler_create, (f_errh_fn * fn, MPI_Fint *errh, MPI_Fint *ierror), fn COMMA errh COMMA ierror)
static void f_errhandler_set(int prof, MPI_Fint *comm, MPI_Fint *errh, MPI_Fint *ierror)
{
    *ierror = F_CALL(prof, Comm_set_errhandler, MPI_Comm_fromint(*comm), MPI_Errhandler_fromint(*errh));
}
F_ENTRY(errhandler_set, (MPI_Fint * comm, MPI_Fint *errh, MPI_Fint *ierror), comm COMMA errh COMMA ierror)
static void f_errhandler_get(int prof, MPI_Fint *comm, MPI_Fint *errh, MPI_Fint *ierror)
{
    MPI_Errhandler h = MPI_ERRHANDLER_NULL;
    *ierror = F_CALL(prof, Comm_get_errhandler, MPI_Comm_fromint(*comm), &h);
    if (*ierror == MPI_SUCCESS)
        *errh = MPI_Errhandler_toint(h);
}
F_ENTRY(errhandler_get, (MPI_Fint * comm, MPI_Fint *errh, MPI_Fint *ierror), comm COMMA errh COMMA ierror)
