/*
 * The software a job runs on this node, as far as it must be the same on every node of a job:
 * the NCCL libraries a job may load (the system's, found as nccl_lib.h finds it, and pip's
 * nvidia-nccl-* wheels in the system pythons' site-packages and dist-packages) with each one's
 * version and ELF build id, the NVIDIA driver version, the kernel release and each RDMA
 * device's firmware (fw_ver). Read under the host root, never loading a library; what is
 * missing is left empty.
 */
#pragma once

#include <json-c/json.h>
#include <stddef.h>

#include "elf_note.h"

#define SOFTWARE_MAX_NCCL     8
#define SOFTWARE_MAX_FIRMWARE 16

struct software_nccl {
        char path[256];   /* as the host sees it: "/usr/lib/x86_64-linux-gnu/libnccl.so.2" */
        char origin[16];  /* "system" or "pip" */
        char version[32]; /* "2.28.9"; "" when unknown */
        char build_id[ELF_BUILD_ID_HEX_MAX]; /* "" when unknown; build_id_error says why */
        char build_id_error[64];
};

struct software_firmware {
        char device[64]; /* "mlx5_0" */
        char fw_ver[64]; /* "28.45.1020" */
};

struct software_facts {
        struct software_nccl nccl[SOFTWARE_MAX_NCCL]; /* the system's first: the one a job loads */
        size_t n_nccl;
        char driver_version[32]; /* "580.95.05", "" without the driver */
        char kernel[128];        /* proc/sys/kernel/osrelease */
        struct software_firmware firmware[SOFTWARE_MAX_FIRMWARE];
        size_t n_firmware;
};

/* Fills out from host_root; -ENOMEM is the only error. */
int software_read(const char *host_root, struct software_facts *out);
/* {"sparkd", "kernel", "driver", "nccl": [{path, origin, version, build_id}], "firmware":
 * [{device, fw_ver}]}: the "software" section peers compare. */
json_object *software_to_json(const struct software_facts *s, const char *sparkd_version);
