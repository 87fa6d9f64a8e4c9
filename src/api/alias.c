/* Aliased buffers of a collective: sets of buffers against sets (see alias.h). */
#include "api/alias.h"

#include <stdlib.h>

/* The bytes known to be data of a span: all of it when dense, else its first and its last. */
struct iv {
    uintptr_t lo, hi;
    int side;
};

static int iv_cmp(const void *x, const void *y)
{
    const struct iv *a = x, *b = y;
    return a->lo < b->lo ? -1 : a->lo > b->lo;
}

static size_t certain(const struct aptus_span *s, size_t n, int side, struct iv *out)
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i].lo >= s[i].hi)
            continue;
        if (s[i].dense) {
            out[k++] = (struct iv){ s[i].lo, s[i].hi, side };
        } else {
            out[k++] = (struct iv){ s[i].lo, s[i].lo + 1, side };
            out[k++] = (struct iv){ s[i].hi - 1, s[i].hi, side };
        }
    }
    return k;
}

static void hull(const struct aptus_span *s, size_t n, uintptr_t *lo, uintptr_t *hi)
{
    *lo = UINTPTR_MAX;
    *hi = 0;
    for (size_t i = 0; i < n; i++)
        if (s[i].lo < s[i].hi) {
            *lo = s[i].lo < *lo ? s[i].lo : *lo;
            *hi = s[i].hi > *hi ? s[i].hi : *hi;
        }
}

int aptus_spans_alias(const struct aptus_span *a, size_t na, const struct aptus_span *b, size_t nb)
{
    uintptr_t alo, ahi, blo, bhi;
    hull(a, na, &alo, &ahi);
    hull(b, nb, &blo, &bhi);
    if (alo >= bhi || blo >= ahi)
        return 0;
    if (na == 1 || nb == 1) { /* one against many: pair by pair */
        const struct aptus_span *one = na == 1 ? a : b, *many = na == 1 ? b : a;
        size_t n = na == 1 ? nb : na;
        for (size_t i = 0; i < n; i++)
            if (aptus_span_alias(*one, many[i]))
                return 1;
        return 0;
    }
    /* Many against many: two intervals of known data bytes, one of each side, meet iff, in the
     * order of their starts, the later one starts before the earlier one ends -- so a sweep that
     * keeps each side's farthest end so far finds a meeting if there is one. */
    struct iv *v = malloc(sizeof *v * 2 * (na + nb));
    if (!v)
        return 0; /* no memory for the check: let the call go on */
    size_t n = certain(a, na, 0, v);
    n += certain(b, nb, 1, v + n);
    qsort(v, n, sizeof *v, iv_cmp);
    uintptr_t reach[2] = { 0, 0 };
    int found = 0;
    for (size_t i = 0; i < n && !found; i++) {
        if (reach[!v[i].side] > v[i].lo)
            found = 1;
        if (v[i].hi > reach[v[i].side])
            reach[v[i].side] = v[i].hi;
    }
    free(v);
    return found;
}
