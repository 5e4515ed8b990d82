/*
 * What libibverbs adds to the sysfs inventory (the active MTU of each port), behind one call so
 * that sparkd builds without rdma-core: rdma_verbs.c when meson finds libibverbs,
 * rdma_verbs_none.c otherwise. Internal to rdma.c.
 */
#pragma once

#include "rdma.h"

/* Matches inv's devices by name with libibverbs' device list and fills in what verbs knows.
 * Whatever fails is said in inv->verbs_error (the first failure); only -ENOMEM is returned. */
int rdma_verbs_enrich(struct rdma_inventory *inv);
