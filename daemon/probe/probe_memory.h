/*
 * The memory guard of probes whose buffers grow with their parameters (nccl, rdma): a probe
 * that would leave less than a margin of the node's available memory is refused with the
 * numbers, not run, because exhausting GB10's unified memory freezes the node rather than
 * failing one allocation. Each kind says what its parameters need (probe_kind.memory_needed);
 * what is available is MemAvailable of /proc/meminfo under the host root. On a unified-memory
 * GPU, the device's buffers come out of the same memory, so they count too.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <json-c/json.h>

#include "daemon/config/conf.h"
#include "daemon/config/probe_kinds.h"

/* The margin is the config's [probe] memory_margin, CONF_PROBE_MEMORY_MARGIN_DEFAULT unless set. */

/* MemAvailable, in bytes, from the text of a meminfo file; -ENOENT without that line, -EINVAL
 * for one that is not "MemAvailable: N kB". */
int probe_memory_parse_meminfo(const char *text, uint64_t *available);
/* Reads HOST_ROOT/proc/meminfo; err says what failed. */
int probe_memory_available(const char *host_root, uint64_t *available, char *err, size_t err_size);

/* 0 when needed bytes leave at least margin of available; else -ENOMEM with the numbers in err
 * ("the nccl probe needs 16.0 GiB but 12.3 GiB is available and 8.0 GiB must stay free"). */
int probe_memory_check(const char *kind, uint64_t needed, uint64_t available, uint64_t margin, char *err,
                       size_t err_size);

/* The whole guard for a probe about to run on this node: nothing for kinds without a memory
 * function; else reads what is available and checks. -ENOMEM refused, or the read's error,
 * each with err set. */
int probe_memory_guard(const struct probe_kind *kind, json_object *params, bool unified_memory,
                       const char *host_root, uint64_t margin, char *err, size_t err_size);
