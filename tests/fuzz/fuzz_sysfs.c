/*
 * The text the inventory reads from sysfs, /proc and /etc, through the parsers rdma.c, pcie.c and
 * hostfacts.c use on each file. The first byte picks the file kind, the rest is its content.
 */
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "inventory/gpu.h"
#include "inventory/hostfacts.h"
#include "inventory/memlock.h"
#include "inventory/pcie.h"
#include "inventory/rdma.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        char name[32], gid[40], ipv4[16], version[64], *text;
        unsigned num, gbps;
        double gts;
        uint64_t u;
        bool is_open;

        if (size < 1)
                return 0;
        text = malloc(size);
        if (!text)
                abort();
        memcpy(text, data + 1, size - 1);
        text[size - 1] = '\0';
        switch (data[0] % 7) {
        case 0: /* infiniband/DEV/ports/N/state, phys_state */
                if (rdma_parse_state(text, &num, name, sizeof(name)) == 0 && strlen(name) >= sizeof(name))
                        abort();
                break;
        case 1: /* infiniband/DEV/ports/N/rate */
                (void)rdma_parse_rate_gbps(text, &gbps);
                break;
        case 2: /* infiniband/DEV/ports/N/gids/I */
                if (rdma_parse_gid(text, gid, sizeof(gid), ipv4, sizeof(ipv4)) == 0 &&
                    (strlen(gid) >= sizeof(gid) || strlen(ipv4) >= sizeof(ipv4)))
                        abort();
                break;
        case 3: /* PCI current_link_speed, max_link_speed */
                (void)pcie_parse_speed(text, &gts);
                break;
        case 4: /* PCI aer_dev_fatal */
                (void)pcie_parse_aer_total(text, "TOTAL_ERR_FATAL", &u);
                break;
        case 5: /* /proc/driver/nvidia/version */
                (void)hostfacts_parse_driver_version(text, version, sizeof(version), &is_open);
                break;
        case 6: /* /etc/security/limits.conf, one line at a time as hostfacts reads it */
                for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n"))
                        (void)hostfacts_parse_limits_line(line, &u);
                break;
        }
        free(text);
        return 0;
}
