/* Per-peer state stays small (issue 8): a peer record under 64 bytes, its endpoints apart.
 * Prints the sizes so that a change shows in the test log, and fails when the record reaches
 * 64 bytes (one cache line). */
#include <stdio.h>

#include "channel/channel.h"

int main(void)
{
    printf("sizeof(struct aptus_peer) = %zu\n", sizeof(struct aptus_peer));
    printf("sizeof(struct aptus_ep) = %zu\n", sizeof(struct aptus_ep));
    printf("sizeof(struct aptus_peer_stats) = %zu (APTUS_STATS only)\n", sizeof(struct aptus_peer_stats));
    if (sizeof(struct aptus_peer) >= 64) {
        fprintf(stderr, "FAIL %s:%d: struct aptus_peer is %zu bytes: a peer record must stay under 64\n", __FILE__,
                __LINE__, sizeof(struct aptus_peer));
        return 1;
    }
    return 0;
}
