/* Keyvals and attribute lists (see core/attr.h). */
#include "core/attr.h"

#include <stdint.h>
#include <stdlib.h>

/* User keyvals are APTUS_KEYVAL_FIRST + index into the table; the predefined keys of the ABI
 * (501..507, 601..605) are below it. */
#define APTUS_KEYVAL_FIRST 0x1000

struct aptus_keyval {
    int kind;
    int freed;    /* MPI_*_free_keyval was called */
    int refcount; /* 1 for the user until freed, + 1 per attribute using it */
    void (*copy)(void);
    void (*del)(void);
    void *extra;
};

static struct aptus_keyval **keyvals;
static int nkeyvals, capkeyvals;

#define FN_NULL ((void (*)(void))(uintptr_t)0)
#define FN_DUP  ((void (*)(void))(uintptr_t)1)

static struct aptus_keyval *kv_lookup(int keyval)
{
    if (keyval < APTUS_KEYVAL_FIRST || keyval - APTUS_KEYVAL_FIRST >= nkeyvals)
        return NULL;
    return keyvals[keyval - APTUS_KEYVAL_FIRST];
}

/* The keyval if it is a live (not freed) user keyval of `kind`, else NULL. */
static struct aptus_keyval *kv_live(int kind, int keyval)
{
    struct aptus_keyval *k = kv_lookup(keyval);
    return k && !k->freed && k->kind == kind ? k : NULL;
}

/* What a slot holds once its keyval is gone: a marker per object kind, so that a second free
 * through a copy of the handle is recognised (and tolerated) and every other use is refused as
 * "was freed". Slots are not reused. */
/* (indexed by kind; 0 unused) */
static struct aptus_keyval gone[4] = { { .freed = 1 },
                                       { .kind = APTUS_ATTR_COMM, .freed = 1 },
                                       { .kind = APTUS_ATTR_TYPE, .freed = 1 },
                                       { .kind = APTUS_ATTR_WIN, .freed = 1 } };

static int is_gone(const struct aptus_keyval *k)
{
    return k >= gone && k < gone + 4;
}

static void kv_release(int keyval)
{
    struct aptus_keyval *k = kv_lookup(keyval);
    if (k && !is_gone(k) && --k->refcount == 0) {
        keyvals[keyval - APTUS_KEYVAL_FIRST] = &gone[k->kind];
        free(k);
    }
}

int aptus_keyval_create(int kind, void (*copy)(void), void (*del)(void), void *extra, int *keyval)
{
    if (nkeyvals == capkeyvals) {
        int ncap = capkeyvals ? 2 * capkeyvals : 16;
        if (ncap > INT32_MAX / 2 - APTUS_KEYVAL_FIRST)
            return MPI_ERR_NO_MEM;
        struct aptus_keyval **n = realloc(keyvals, (size_t)ncap * sizeof *n);
        if (!n)
            return MPI_ERR_NO_MEM;
        keyvals = n;
        capkeyvals = ncap;
    }
    struct aptus_keyval *k = calloc(1, sizeof *k);
    if (!k)
        return MPI_ERR_NO_MEM;
    k->kind = kind;
    k->refcount = 1;
    k->copy = copy;
    k->del = del;
    k->extra = extra;
    keyvals[nkeyvals] = k;
    *keyval = APTUS_KEYVAL_FIRST + nkeyvals++;
    return MPI_SUCCESS;
}

const char *aptus_keyval_problem(int kind, int keyval, int freed_ok)
{
    static const char *const for_kind[] = { "", "is a communicator keyval", "is a datatype keyval",
                                            "is a window keyval" };
    struct aptus_keyval *k = kv_lookup(keyval);
    if (!k)
        return "does not exist";
    if (k->kind != kind)
        return for_kind[k->kind];
    if (is_gone(k))
        return "was freed";
    if (k->freed && !freed_ok)
        return "was freed";
    return NULL;
}

int aptus_keyval_free(int kind, int keyval)
{
    struct aptus_keyval *k = kv_lookup(keyval);
    if (!k || k->kind != kind)
        return MPI_ERR_KEYVAL;
    if (k->freed)
        return MPI_SUCCESS; /* freed before, through a copy of the handle: nothing to do */
    k->freed = 1;
    kv_release(keyval);
    return MPI_SUCCESS;
}

/* Calls the user's copy callback with the signature of its object kind. */
static int call_copy(const struct aptus_keyval *k, int kind, void *old, int keyval, void *in, void *out, int *flag)
{
    if (k->copy == FN_NULL) {
        *flag = 0;
        return MPI_SUCCESS;
    }
    if (k->copy == FN_DUP) {
        *(void **)out = in;
        *flag = 1;
        return MPI_SUCCESS;
    }
    switch (kind) {
    case APTUS_ATTR_COMM:
        return ((MPI_Comm_copy_attr_function *)k->copy)((MPI_Comm)old, keyval, k->extra, in, out, flag);
    case APTUS_ATTR_TYPE:
        return ((MPI_Type_copy_attr_function *)k->copy)((MPI_Datatype)old, keyval, k->extra, in, out, flag);
    default: return ((MPI_Win_copy_attr_function *)k->copy)((MPI_Win)old, keyval, k->extra, in, out, flag);
    }
}

static int call_delete(const struct aptus_keyval *k, int kind, void *h, int keyval, void *value)
{
    if (k->del == FN_NULL)
        return MPI_SUCCESS;
    switch (kind) {
    case APTUS_ATTR_COMM: return ((MPI_Comm_delete_attr_function *)k->del)((MPI_Comm)h, keyval, value, k->extra);
    case APTUS_ATTR_TYPE: return ((MPI_Type_delete_attr_function *)k->del)((MPI_Datatype)h, keyval, value, k->extra);
    default: return ((MPI_Win_delete_attr_function *)k->del)((MPI_Win)h, keyval, value, k->extra);
    }
}

int aptus_attr_copy_all(int kind, void *old_handle, struct aptus_attr *src, void *new_handle, struct aptus_attr **dst)
{
    struct aptus_attr *head = NULL, **tail = &head;
    int rc = MPI_SUCCESS;
    for (struct aptus_attr *a = src; a; a = a->next) {
        struct aptus_keyval *k = kv_lookup(a->keyval);
        if (!k || is_gone(k))
            continue;
        void *out = NULL;
        int flag = 0;
        rc = call_copy(k, kind, old_handle, a->keyval, a->value, &out, &flag);
        if (rc != MPI_SUCCESS)
            break;
        if (!flag)
            continue;
        struct aptus_attr *n = malloc(sizeof *n);
        if (!n) {
            /* The copy exists but cannot be attached: give it to its delete callback. */
            call_delete(k, kind, new_handle, a->keyval, out);
            rc = MPI_ERR_NO_MEM;
            break;
        }
        n->next = NULL;
        n->keyval = a->keyval;
        n->value = out;
        k->refcount++;
        *tail = n;
        tail = &n->next;
    }
    if (rc != MPI_SUCCESS) {
        aptus_attr_delete_all(kind, new_handle, &head);
        *dst = NULL;
        return rc;
    }
    *dst = head;
    return MPI_SUCCESS;
}

int aptus_attr_delete_all(int kind, void *handle, struct aptus_attr **list)
{
    int rc = MPI_SUCCESS;
    while (*list) {
        struct aptus_attr *a = *list;
        *list = a->next; /* unlinked first: a callback may look at the remaining attributes */
        struct aptus_keyval *k = kv_lookup(a->keyval);
        if (k && !is_gone(k)) {
            int r = call_delete(k, kind, handle, a->keyval, a->value);
            if (r != MPI_SUCCESS && rc == MPI_SUCCESS)
                rc = r;
            kv_release(a->keyval);
        }
        free(a);
    }
    return rc;
}

int aptus_attr_get(struct aptus_attr *list, int keyval, void **value, int *flag)
{
    for (struct aptus_attr *a = list; a; a = a->next)
        if (a->keyval == keyval) {
            *value = a->value;
            *flag = 1;
            return MPI_SUCCESS;
        }
    *flag = 0;
    return MPI_SUCCESS;
}

int aptus_attr_set(int kind, void *handle, struct aptus_attr **list, int keyval, void *value)
{
    struct aptus_keyval *k = kv_live(kind, keyval);
    if (!k)
        return MPI_ERR_KEYVAL;
    for (struct aptus_attr *a = *list; a; a = a->next)
        if (a->keyval == keyval) {
            /* Replacing a value deletes the old one first (its callback may refuse). */
            int rc = call_delete(k, kind, handle, keyval, a->value);
            if (rc != MPI_SUCCESS)
                return rc;
            a->value = value;
            return MPI_SUCCESS;
        }
    struct aptus_attr *a = malloc(sizeof *a);
    if (!a)
        return MPI_ERR_NO_MEM;
    a->keyval = keyval;
    a->value = value;
    a->next = *list;
    *list = a;
    k->refcount++;
    return MPI_SUCCESS;
}

int aptus_attr_delete(int kind, void *handle, struct aptus_attr **list, int keyval)
{
    /* A freed keyval stays usable here while attributes hold it (MPI 4.1, section 7.7.2). */
    struct aptus_keyval *k = kv_lookup(keyval);
    if (!k || is_gone(k) || k->kind != kind)
        return MPI_ERR_KEYVAL;
    for (struct aptus_attr **p = list; *p; p = &(*p)->next)
        if ((*p)->keyval == keyval) {
            struct aptus_attr *a = *p;
            int rc = call_delete(k, kind, handle, keyval, a->value);
            if (rc != MPI_SUCCESS)
                return rc; /* the attribute stays, as the standard requires */
            *p = a->next;
            free(a);
            kv_release(keyval);
            return MPI_SUCCESS;
        }
    return MPI_SUCCESS; /* nothing to delete */
}
