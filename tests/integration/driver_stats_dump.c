/*
 * Prints a netdev's driver statistics as `ethtool -S IFNAME` does, read through
 * inventory/driver_stats.c, so a test can compare the two on a real netdev.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "inventory/driver_stats.h"

int main(int argc, char **argv)
{
        struct driver_stats stats;
        int r;

        if (argc != 2) {
                fprintf(stderr, "usage: %s IFNAME\n", argv[0]);
                return 2;
        }
        r = driver_stats_read(argv[1], &stats);
        if (r < 0) {
                fprintf(stderr, "%s: cannot read its driver statistics: %s\n", argv[1], strerror(-r));
                return 1;
        }
        printf("NIC statistics:\n");
        for (size_t i = 0; i < stats.n; i++)
                printf("     %s: %" PRIu64 "\n", stats.v[i].name, stats.v[i].value);
        driver_stats_free(&stats);
        return 0;
}
