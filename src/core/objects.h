/* Internal objects behind MPI handles: communicators, datatypes, ops, error handlers.
 *
 * Handles are pointers to these structs, allocated in the handle arena (core/arena.h), so that
 * a conversion can refuse any other value without reading it; predefined handles are the small
 * integers of the standard ABI (all below APTUS_PREDEF_LIMIT) and index static tables. */
#ifndef APTUS_CORE_OBJECTS_H
#define APTUS_CORE_OBJECTS_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

#include "core/arena.h"

#define APTUS_PREDEF_LIMIT 0x400u
#define APTUS_IS_PREDEF(h) ((uintptr_t)(h) < APTUS_PREDEF_LIMIT)

enum {
    APTUS_MAGIC_COMM = 0x436f6d6d,
    APTUS_MAGIC_DTYPE = 0x44747970,
    APTUS_MAGIC_OP = 0x4f705f5f,
    APTUS_MAGIC_ERRH = 0x45727248,
    APTUS_MAGIC_REQ = 0x52657175,
    APTUS_MAGIC_GROUP = 0x47727570,
    APTUS_MAGIC_FILE = 0x46696c65
};

/* ---- error handlers ---- */
enum aptus_errh_kind { APTUS_ERRH_FATAL, APTUS_ERRH_ABORT, APTUS_ERRH_RETURN, APTUS_ERRH_USER };
/* The object kind a user error handler was created for (MPI_<Kind>_create_errhandler). */
enum aptus_errh_obj { APTUS_ERRH_FOR_COMM, APTUS_ERRH_FOR_FILE, APTUS_ERRH_FOR_WIN, APTUS_ERRH_FOR_SESSION };
struct aptus_errhandler {
    uint32_t magic;
    enum aptus_errh_kind kind;
    int refcount;
    MPI_Comm_errhandler_function *comm_fn;
    enum aptus_errh_obj obj; /* user handlers: which of the functions below is set */
    MPI_File_errhandler_function *file_fn;
    MPI_Win_errhandler_function *win_fn;
    MPI_Session_errhandler_function *session_fn;
};
APTUS_OBJ_FITS(struct aptus_errhandler, ERRH);

/* ---- files (MPI-IO, src/io/): the start of every struct aptus_file, what the error handler
 * calls of the layers below need ---- */
struct aptus_file_head {
    uint32_t magic;
    struct aptus_errhandler *errh; /* MPI_File_set_errhandler's (a reference) */
};
APTUS_OBJ_FITS(struct aptus_file_head, FILE);
/* The file behind handle h, or NULL (any value is safe: core/arena.h). */
static inline struct aptus_file_head *aptus_file_head_get(MPI_File h)
{
    struct aptus_file_head *f = (struct aptus_file_head *)h;
    return aptus_obj_in(h, APTUS_OBJ_FILE) && f->magic == APTUS_MAGIC_FILE ? f : NULL;
}

/* ---- groups: an ordered list of world ranks ---- */
struct aptus_group {
    uint32_t magic;
    int refcount;
    int size;
    int *world; /* world rank of each member */
};
APTUS_OBJ_FITS(struct aptus_group, GROUP);

/* ---- communicators ---- */
struct aptus_attr; /* attribute list (core/attr.h) */
struct aptus_topo; /* virtual topology (Cartesian, graph, distributed graph) */
/* a session (core/session.h) */
struct aptus_session;

struct aptus_comm {
    uint32_t magic;
    int refcount;
    int rank, size; /* in the local group */
    int *world;     /* world rank of each local-group member; NULL means identity (COMM_WORLD) */
    int npeers;     /* ranks point-to-point addresses: size, or the remote group's size */
    int *peers;     /* world rank of each addressable rank: == world for intracommunicators,
                       the remote group for intercommunicators (NULL: identity) */
    int is_inter;
    struct aptus_comm *local_comm; /* intercommunicator: an intracommunicator over the local group */
    struct aptus_topo *topo;
    struct aptus_attr *attrs;
    uint16_t ctx;      /* point-to-point context; collectives use ctx + 1, communicator management and
                          neighborhood collectives ctx + 2, partitioned communication ctx + 3 (core/context.h) */
    uint16_t ctx_slot; /* context-id slot, freed with the communicator */
    int coll_seq;      /* sequence for internal collective tags */
    int nbc_seq;       /* the same for nonblocking and persistent collectives (coll/nbc.h) */
    uint32_t mgmt_seq; /* communicator-creation calls so far (tags on ctx + 2; comm/create.c) */
    MPI_Info info;     /* hints (MPI_Comm_set_info), or MPI_INFO_NULL */
    struct aptus_errhandler *errh;
    /* the session it derives from (core/session.h); NULL: the world model */
    struct aptus_session *session;
    struct aptus_bsend_pool *bsend_pool; /* MPI_Comm_attach_buffer's (pt2pt/bsend.c), or NULL */
    MPI_Comm handle;                     /* the handle the user sees */
    char name[MPI_MAX_OBJECT_NAME];
};
APTUS_OBJ_FITS(struct aptus_comm, COMM);

static inline int aptus_comm_world_rank(const struct aptus_comm *c, int r)
{
    return c->world ? c->world[r] : r;
}

/* World rank of point-to-point rank r (the remote group's member r on an intercommunicator). */
static inline int aptus_comm_peer_world(const struct aptus_comm *c, int r)
{
    return c->peers ? c->peers[r] : r;
}

/* ---- datatypes ---- */
enum aptus_basic {
    APTUS_B_NONE = 0,
    APTUS_B_INT8,
    APTUS_B_UINT8,
    APTUS_B_INT16,
    APTUS_B_UINT16,
    APTUS_B_INT32,
    APTUS_B_UINT32,
    APTUS_B_INT64,
    APTUS_B_UINT64,
    APTUS_B_FLOAT,
    APTUS_B_DOUBLE,
    APTUS_B_LONG_DOUBLE,
    APTUS_B_BOOL,
    APTUS_B_BYTE,
    APTUS_B_CHAR,
    APTUS_B_C_FLOAT_COMPLEX,
    APTUS_B_C_DOUBLE_COMPLEX,
    APTUS_B_C_LONG_DOUBLE_COMPLEX,
    APTUS_B_FLOAT_INT,
    APTUS_B_DOUBLE_INT,
    APTUS_B_LONG_INT,
    APTUS_B_2INT,
    APTUS_B_SHORT_INT,
    APTUS_B_LONG_DOUBLE_INT,
    APTUS_B_2FLOAT,
    APTUS_B_2DOUBLE,
    APTUS_B_COUNT
};

/* One piece of a flattened type map: `count` runs of `len` bytes, at disp, disp + stride, ...
 * (count >= 1; stride is meaningful only when count > 1). */
struct aptus_dt_seg {
    MPI_Aint disp;
    MPI_Aint stride;
    size_t len;
    size_t count;
};

struct aptus_dt_priv; /* how a derived type was built, its contents (core/datatype.c) */

struct aptus_dtype {
    uint32_t magic;
    int refcount;        /* handle + containing types + pending operations */
    size_t size;         /* bytes of data in one element (= packed bytes) */
    MPI_Aint lb, extent; /* extent = ub - lb */
    MPI_Aint true_lb, true_extent;
    int contig; /* data of `count` elements is one contiguous run at buf + true_lb */
    int basic;  /* enum aptus_basic for predefined types (reductions), else 0 */
    int predefined;
    int committed;
    int combiner;
    /* Flattened type map of one element (see core/datatype.h): nsegs pieces in type-map order,
     * seg_pos[i] = packed offset of piece i within the element, seg_pos[nsegs] = size.
     * Always present for predefined types; built at commit (or when a containing type is
     * committed) for derived ones (segs == NULL until then, unless size == 0). */
    size_t nsegs;
    struct aptus_dt_seg *segs;
    size_t *seg_pos;
    MPI_Datatype reduce_type; /* see aptus_dt_reduce_type() */
    size_t reduce_n;
    size_t nelem; /* basic elements in one element (pair types count 2) */
    struct aptus_dt_priv *priv;
    struct aptus_attr *attrs;
    struct aptus_dt_seg seg_inl[2]; /* storage of segs/seg_pos for predefined types */
    size_t pos_inl[3];
    char name[MPI_MAX_OBJECT_NAME];
};
APTUS_OBJ_FITS(struct aptus_dtype, DTYPE);

/* ---- reduction ops ---- */
typedef void (*aptus_op_fn)(const void *in, void *inout, size_t n, int basic);
struct aptus_op {
    uint32_t magic;
    int refcount;
    int commute;
    int predefined; /* index of predefined op, or 0 */
    MPI_User_function *user_fn;
    MPI_User_function_c *user_fn_c;
};
APTUS_OBJ_FITS(struct aptus_op, OP);

/* Handle conversions. Return NULL for null or invalid handles. */
struct aptus_op *aptus_op_get(MPI_Op h);
struct aptus_errhandler *aptus_errh_get(MPI_Errhandler h);
struct aptus_group *aptus_group_get(MPI_Group h);

extern struct aptus_comm aptus_comm_world_obj, aptus_comm_self_obj;
extern struct aptus_dtype *aptus_dtype_predef[APTUS_PREDEF_LIMIT];

/* These two are on every communication call: inline. */
static inline struct aptus_comm *aptus_comm_get(MPI_Comm h)
{
    if (h == MPI_COMM_WORLD)
        return &aptus_comm_world_obj;
    if (h == MPI_COMM_SELF)
        return &aptus_comm_self_obj;
    struct aptus_comm *c = (struct aptus_comm *)h;
    return aptus_obj_in(h, APTUS_OBJ_COMM) && c->magic == APTUS_MAGIC_COMM ? c : NULL;
}

static inline struct aptus_dtype *aptus_dtype_get(MPI_Datatype h)
{
    if (APTUS_IS_PREDEF(h))
        return aptus_dtype_predef[(uintptr_t)h];
    struct aptus_dtype *d = (struct aptus_dtype *)h;
    return aptus_obj_in(h, APTUS_OBJ_DTYPE) && d->magic == APTUS_MAGIC_DTYPE ? d : NULL;
}

#endif
