/* Small text helpers shared by the configuration reader and the send-rule parser. */
#ifndef APTUS_RUNTIME_TEXT_H
#define APTUS_RUNTIME_TEXT_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* Whether s[0..n) equals the lower-case `word`, ignoring the case of s. */
static inline int aptus_text_eq_nocase(const char *s, size_t n, const char *word)
{
    if (strlen(word) != n)
        return 0;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (c >= 'A' && c <= 'Z')
            c = (char)(c - 'A' + 'a');
        if (c != word[i])
            return 0;
    }
    return 1;
}

/* s[0..n) as NUMBER[K|M|G] (powers of 1024). Returns 0, 1 if it is not such a number, 2 if it
 * does not fit in 64 bits. */
static inline int aptus_text_bytes(const char *s, size_t n, uint64_t *out)
{
    size_t i = 0;
    uint64_t acc = 0;
    int too_large = 0;
    if (n == 0 || s[0] < '0' || s[0] > '9')
        return 1;
    for (; i < n && s[i] >= '0' && s[i] <= '9'; i++) {
        unsigned d = (unsigned)(s[i] - '0');
        if (acc > (UINT64_MAX - d) / 10)
            too_large = 1;
        else
            acc = acc * 10 + d;
    }
    unsigned shift = 0;
    if (i < n) {
        switch (s[i]) {
        case 'k':
        case 'K': shift = 10; break;
        case 'm':
        case 'M': shift = 20; break;
        case 'g':
        case 'G': shift = 30; break;
        default: return 1;
        }
        i++;
    }
    if (i != n)
        return 1;
    if (too_large || (shift && acc > (UINT64_MAX >> shift)))
        return 2;
    *out = acc << shift;
    return 0;
}

#endif
