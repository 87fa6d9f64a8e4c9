/* The buffer of MPI_Buffer_attach, carved into pieces for buffered sends. A piece stays in use
 * until its send has left (its request completes). Each piece costs a small header, well
 * within MPI_BSEND_OVERHEAD. */
#include <stdint.h>
#include <stdlib.h>

#include "pt2pt/pt2pt.h"

struct piece {
    struct piece *next; /* next piece in address order */
    size_t size;        /* bytes including this header */
    uint64_t pad;
};

static struct {
    char *base;
    size_t size;
    struct piece *used; /* in-use pieces sorted by address */
} bs;

int aptus_bsend_attach(void *buf, size_t size)
{
    if (bs.base)
        return MPI_ERR_BUFFER;
    bs.base = buf;
    bs.size = size;
    bs.used = NULL;
    return 0;
}

int aptus_bsend_detach(void **buf, size_t *size)
{
    if (!bs.base) {
        *buf = NULL;
        *size = 0;
        return MPI_ERR_BUFFER;
    }
    unsigned idle = 0;
    while (bs.used)
        aptus_wait_step(&idle);
    *buf = bs.base;
    *size = bs.size;
    bs.base = NULL;
    bs.size = 0;
    return 0;
}

void *aptus_bsend_alloc(size_t bytes)
{
    if (!bs.base)
        return NULL;
    size_t need = sizeof(struct piece) + ((bytes + 15) & ~(size_t)15);
    char *start = (char *)(((uintptr_t)bs.base + 15) & ~(uintptr_t)15);
    char *end = bs.base + bs.size;
    struct piece **link = &bs.used;
    char *cursor = start;
    for (;;) {
        char *limit = *link ? (char *)*link : end;
        if (limit >= cursor && (size_t)(limit - cursor) >= need) {
            struct piece *p = (struct piece *)cursor;
            p->size = need;
            p->next = *link;
            *link = p;
            return p + 1;
        }
        if (!*link)
            return NULL;
        cursor = (char *)*link + (*link)->size;
        link = &(*link)->next;
    }
}

void aptus_bsend_release(void *data)
{
    struct piece *p = (struct piece *)data - 1;
    for (struct piece **link = &bs.used; *link; link = &(*link)->next)
        if (*link == p) {
            *link = p->next;
            return;
        }
}
