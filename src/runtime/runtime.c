/* Process-wide state of the library. */
#include <time.h>

#include "runtime/runtime.h"

struct aptus_runtime aptus_rt;

double aptus_wtime(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}
