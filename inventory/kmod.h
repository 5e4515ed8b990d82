/*
 * The kernel modules GPU Direct RDMA needs, as /sys/module shows them: nvidia_peermem, and which of
 * the RDMA stack's modules (ib_core, ib_uverbs, mlx5_core, mlx5_ib, rdma_cm, rdma_ucm) are loaded.
 */
#pragma once

struct hostfacts;

/* Fills has_peermem and the lists of loaded and missing RDMA modules; -ENOMEM is the only error. */
int kmod_read(const char *host_root, struct hostfacts *f);
