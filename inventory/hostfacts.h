/*
 * Facts about this host's software that decide how NCCL may run, read without linking CUDA or
 * NCCL: the NVIDIA driver (version, open or proprietary kernel module), the GPUs (GB10 means
 * unified memory), nvidia_peermem, whether DMA-BUF GPU Direct is possible, the RDMA kernel
 * modules, the NCCL library and its version, and the memlock limit login sessions get. Read
 * under the host root (HOST/proc, HOST/sys, HOST/etc, HOST/usr, HOST/var/lib/dpkg); anything
 * missing is a fact ("no driver"), never an error. This is the whole of them; gpu.h, kmod.h,
 * dmabuf.h, nccl_lib.h and memlock.h each read their part.
 */
#pragma once

#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "elf_machine.h"

#define HOSTFACTS_MAX_GPUS  16
#define HOSTFACTS_UNLIMITED UINT64_MAX

struct gpu_info {
        char model[64];         /* "NVIDIA GB10" */
        char bus[32];           /* PCI address from /proc/driver/nvidia/gpus/BUS */
        bool is_unified_memory; /* GB10 and other coherent CPU-GPU memory parts */
};

struct hostfacts {
        bool has_nvidia_driver;
        char driver_version[32]; /* "580.95.05" */
        bool is_open_kernel_module;
        bool has_peermem; /* nvidia_peermem loaded */
        struct gpu_info gpus[HOSTFACTS_MAX_GPUS];
        size_t n_gpus;
        bool has_unified_memory; /* any GPU is */
        bool is_dmabuf_possible; /* open module 580+ and a kernel with dma-buf */
        char dmabuf_reason[160]; /* why (not) */

        char **rdma_modules_loaded; /* of ib_core, ib_uverbs, mlx5_core, mlx5_ib, rdma_cm, rdma_ucm */
        char **rdma_modules_missing;

        bool has_nccl;
        char nccl_path[256];   /* as the host sees it: "/usr/local/cuda/lib64/libnccl.so.2" */
        char nccl_version[32]; /* "2.28.9", "" when the library is there but its version is not known */
        /* The machine the file the loader takes is built for (its ELF header); when it cannot be
         * read, nccl_machine_error < 0 (-EBADMSG: not an ELF file) and machine 0. */
        struct elf_machine nccl_machine;
        int nccl_machine_error;

        /* Bytes from limits.conf/limits.d for all users ("*"), UNLIMITED, 0 unknown; the line it came
         * from as "/etc/security/limits.d/x.conf:3" (host paths), "" when nothing sets it. */
        uint64_t memlock_login;
        char memlock_login_source[256];
        /* The soft and the hard line apart (0 and "" when no line sets it), so a fix names the
         * one that is low and never asks for a line that is already there. */
        uint64_t memlock_login_soft, memlock_login_hard;
        char memlock_login_soft_source[256], memlock_login_hard_source[256];
        /* LimitMEMLOCK of sparkd's systemd unit as its files under the host root say (the last
         * line of the unit and its drop-ins), UNLIMITED for infinity, 0 when none sets it. */
        uint64_t memlock_unit;
        char memlock_unit_source[256];
};

int hostfacts_read(const char *host_root, struct hostfacts *out);
void hostfacts_free(struct hostfacts *facts);
json_object *hostfacts_to_json(const struct hostfacts *facts);
