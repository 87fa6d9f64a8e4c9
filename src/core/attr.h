/* Attribute caching (MPI standard, section 7.7): keyvals and the attribute lists hung on
 * communicators, datatypes and windows.
 *
 * Keyvals are small positive integers (user keyvals start at APTUS_KEYVAL_FIRST, above the
 * predefined ones of the standard ABI) indexing a process-wide table. An attribute list is a
 * singly linked list of (keyval, value) pairs, newest first. A keyval freed while attributes
 * still use it stays alive (each attribute holds a reference) until the last one is deleted. */
#ifndef APTUS_CORE_ATTR_H
#define APTUS_CORE_ATTR_H

#include <mpi.h>

enum { APTUS_ATTR_COMM = 1, APTUS_ATTR_TYPE, APTUS_ATTR_WIN };

struct aptus_attr {
    struct aptus_attr *next;
    int keyval;
    void *value;
};

/* Copies the attribute list `src` of object `old_handle` (an MPI_Comm, MPI_Datatype or MPI_Win
 * handle, per `kind`) for the new object `new_handle` (e.g. on MPI_Comm_dup): every keyval's copy
 * callback runs and the attribute is kept on the new object when it returns flag = 1. *dst
 * receives the new list (*dst is overwritten). Returns 0 on success, MPI_ERR_NO_MEM, or the
 * code a user copy callback returned (not necessarily a class: pass it through
 * aptus_error_class_of); on failure the partial list is deleted again and *dst is NULL. */
int aptus_attr_copy_all(int kind, void *old_handle, struct aptus_attr *src, void *new_handle, struct aptus_attr **dst);

/* Deletes every attribute of object `handle` (calling the delete callbacks) and frees the list;
 * *list is NULL afterwards. Returns 0, or the code the first failing delete callback returned
 * (all attributes are removed all the same). */
int aptus_attr_delete_all(int kind, void *handle, struct aptus_attr **list);

/* ---- used by the API layer (api/attr.c) ---- */

/* Creates a keyval of object kind `kind`. copy/del are the user's callbacks cast to the generic
 * form, or the predefined constants (NULL_COPY_FN = 0, DUP_FN = 1, NULL_DELETE_FN = 0). */
int aptus_keyval_create(int kind, void (*copy)(void), void (*del)(void), void *extra, int *keyval);
/* Marks a keyval freed; it lives on until no attribute uses it. Freeing it again (through a copy
 * of the handle) succeeds and does nothing. Returns MPI_ERR_KEYVAL for a keyval that never
 * existed or is of another kind, else 0. */
int aptus_keyval_free(int kind, int keyval);
/* NULL when keyval is a user keyval of `kind` that may be used, else why not ("was freed", ...).
 * With freed_ok, a keyval the user freed but attributes still hold is accepted (to read and
 * delete those attributes). */
const char *aptus_keyval_problem(int kind, int keyval, int freed_ok);
/* Sets, gets and deletes one attribute (delete accepts a freed keyval still held by attributes).
 * Set and delete return MPI_ERR_KEYVAL, MPI_ERR_NO_MEM, or
 * the code a user delete callback returned (the attribute is then left unchanged); deleting an
 * attribute the object does not have succeeds. Get writes *value only when the attribute is
 * there (*flag = 1) and returns 0. */
int aptus_attr_set(int kind, void *handle, struct aptus_attr **list, int keyval, void *value);
int aptus_attr_get(struct aptus_attr *list, int keyval, void **value, int *flag);
int aptus_attr_delete(int kind, void *handle, struct aptus_attr **list, int keyval);

#endif
