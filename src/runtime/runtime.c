/* Process-wide state of the library. */
#include <stdarg.h>
#include <stdio.h>
#include <time.h>

#include "runtime/runtime.h"

struct aptus_runtime aptus_rt;

void aptus_startup_error(const char *fmt, ...)
{
    if (aptus_rt.rank > 0 && !aptus_rt.pmi.singleton) {
        struct timespec nap = { 0, 10 * 1000 * 1000 };
        for (int i = 0; i < APTUS_STARTUP_ERROR_WAIT_S * 100; i++)
            nanosleep(&nap, NULL);
    }
    va_list ap;
    va_start(ap, fmt);
    fputs("Aptus MPI: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    fflush(stderr);
}

uint32_t aptus_job_hash(void)
{
    uint32_t h = 2166136261u; /* FNV-1a */
    for (const char *s = aptus_rt.pmi.jobid; *s; s++)
        h = (h ^ (uint8_t)*s) * 16777619u;
    return h;
}

double aptus_wtime(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}
