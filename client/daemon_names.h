/*
 * The daemon's names that `sparkc --help` lists: its probe kinds, its events and the methods that
 * need root or the admin group. The daemon's tables are their source (daemon/config/probe_kinds.c,
 * daemon/base/event.c, the needs_admin flags of the method tables), in the tables' order;
 * tests/lint/check-names.py fails when these lists, the man pages, the completion or the README
 * differ from them.
 */
#pragma once

#define SPARKD_PROBE_KINDS "rtt, tcp, nccl, rdma, pathmtu"

#define SPARKD_EVENTS                                                                                       \
        "daemon-started, daemon-stopping, config-reloaded, config-rejected, state-quarantined,\n"           \
        "    link-down, link-up, link-flapping, link-stable, mtu-corrected, mtu-drift,\n"                   \
        "    admin-state-corrected, admin-state-drift, sysctl-corrected, peer-up, peer-down,\n"             \
        "    peer-rejected, mtu-mismatch, probe-done, probe-degraded, probe-failed, "                       \
        "stale-initialization,\n"                                                                           \
        "    gid-changed, port-errors, sysctl-drift, topology-changed, wiring-problem"

#define SPARKD_ADMIN_METHODS "reload, topology-netplan-write, probe-collective, probe, probe-cancel"
