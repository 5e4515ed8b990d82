/*
 * The network profiles that will configure a fabric netdev again on its next reconnect, and the
 * MTU each will apply: NetworkManager keyfiles (the .nmconnection files of
 * HOST/etc/NetworkManager/system-connections) and netplan YAML (the .yaml files of
 * HOST/etc/netplan, merged in file name order as netplan does). sparkd keeps the runtime MTU, but
 * NetworkManager or networkd re-apply their profile's MTU when the link comes back, quietly undoing it; the
 * doctor compares these with the wanted MTU. Read only: sparkd never changes a profile. A file that cannot
 * be parsed is a warning with its file and line, never a guess.
 */
#pragma once

#include <net/if.h>
#include <stdbool.h>
#include <stddef.h>

enum netprofile_manager {
        NETPROFILE_NETWORKMANAGER,
        NETPROFILE_NETPLAN,
};

struct netprofile {
        enum netprofile_manager manager;
        char name[128];       /* NetworkManager: the connection id; netplan: the ethernets key */
        char file[256];       /* as the host sees it: "/etc/netplan/50-cloud-init.yaml" */
        char ifname[64];      /* the interface name it applies to (netplan: a glob), "" any */
        char mac[24];         /* the MAC address it applies to, "" any */
        char other_match[32]; /* a netplan match key sparkd does not judge ("driver"), or "" */
        unsigned mtu;         /* 0: the profile sets none (the kernel's MTU stays on reconnect) */
        unsigned line;        /* of the mtu setting, or of the profile when it sets none */
        char renderer[32];    /* netplan: "networkd" or "NetworkManager" */
};

struct netprofiles {
        struct netprofile *v;
        size_t n;
        char **warnings;   /* "FILE:LINE: what is wrong" per file that could not be parsed or read */
        char **unreadable; /* host paths of files sparkd may not read (EACCES: root's only) */
};

/* Reads both kinds under host_root. Missing directories are no profiles, not errors. */
int netprofiles_read(const char *host_root, struct netprofiles *out);
void netprofiles_free(struct netprofiles *profiles);
/* Does p configure the netdev ifname whose MAC address is mac ("" unknown)? A profile that
 * names neither, or matches by a key sparkd does not judge (other_match), matches none. */
bool netprofile_matches(const struct netprofile *p, const char *ifname, const char *mac);

/* Pure parsers, for tests. file is the host path used in profiles and warnings. A parse error
 * adds a warning and returns -EINVAL; profiles found before it stay. */
int netprofiles_parse_keyfile(struct netprofiles *out, const char *file, const char *text);
int netprofiles_parse_netplan(struct netprofiles *out, const char *file, const char *text, size_t len);
