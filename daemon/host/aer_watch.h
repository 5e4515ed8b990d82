/*
 * Whether fatal PCIe AER errors are rising: the kernel counts them since boot, so one look
 * cannot tell a fault that is still happening from one that happened once. The watch remembers,
 * per PCI function, the fatal count at the daemon's first look and at its previous look, and
 * writes into each RDMA device's pcie facts how many came since each. A function seen for the
 * first time has no earlier look (-1); a count that went down (the device was reset, or it is
 * another device at that address) starts over from the new count.
 */
#pragma once

#include <stdint.h>

#include "inventory/rdma.h"

struct aer_watch;

int aer_watch_new(struct aer_watch **ret);
void aer_watch_free(struct aer_watch *w);
/* Compares inv's AER counts with the remembered ones (filling aer_fatal_since_*), then
 * remembers inv's counts as the previous look. -ENOMEM only. */
int aer_watch_observe(struct aer_watch *w, struct rdma_inventory *inv);
