/* The judges of single variables: the RDMA devices and ports a variable names (NCCL_IB_HCA,
 * UCX_NET_DEVICES), the socket interfaces (NCCL_SOCKET_IFNAME, GLOO_SOCKET_IFNAME, Open MPI's
 * if_include), the GID index, GPU Direct RDMA on a unified-memory GPU, and the addresses vLLM and
 * SGLang announce. */
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/macro.h"
#include "common/strutil.h"
#include "env_check_judge.h"
#include "inventory/hostif.h"

/* The fabric netdevs with an IPv4 address, for messages: "enp1s0f1np1, enP2p1s0f1np1". */
static void addressed_fabric(const struct fabric_facts *f, char *buf, size_t size)
{
        char ipv4[16];

        buf[0] = '\0';
        for (size_t i = 0; i < f->netifs.n; i++)
                if (fabric_ipv4_of(f, f->netifs.v[i].name, ipv4, sizeof(ipv4)))
                        snprintf(buf + strlen(buf), size - strlen(buf), "%s%s", buf[0] ? ", " : "",
                                 f->netifs.v[i].name);
        if (!buf[0])
                snprintf(buf, size, "none");
}

static void rdma_devices_list(const struct fabric_facts *f, char *buf, size_t size)
{
        buf[0] = '\0';
        for (size_t i = 0; i < f->rdma.n; i++)
                snprintf(buf + strlen(buf), size - strlen(buf), "%s%s", buf[0] ? ", " : "",
                         f->rdma.v[i].name);
        if (!buf[0])
                snprintf(buf, size, "none");
}

/* One netdev a socket variable names, as a place for the job's sockets. */
static void judge_netdev(struct env_judge *j, const struct env_setting *s, const char *name)
{
        const struct fabric_facts *f = j->f;
        const struct hostif *h = hostif_list_find(&f->hostifs, name);
        const struct netif *n = netif_list_find(&f->netifs, name);
        char fabric[256], ipv4[16];

        /* The job plan puts NCCL's bootstrap on this management netdev: as `sparkc env` gives it. */
        if (j->bootstrap_ifname && j->bootstrap_ifname[0] && strcmp(name, j->bootstrap_ifname) == 0)
                return;
        addressed_fabric(f, fabric, sizeof(fabric));
        if (!h && !n) {
                env_finding(j, true, s, NULL,
                            "this node has no netdev %s (a value from another node?); its fabric netdevs "
                            "with an address: %s",
                            name, fabric);
                return;
        }
        if (h && !n && h->kind != HOSTIF_PHYSICAL) {
                bool is_virtual = h->kind == HOSTIF_VIRTUAL;

                env_finding(j, !is_virtual, s, NULL, "%s is %s: %s", name,
                            h->kind == HOSTIF_WIRELESS   ? "Wi-Fi"
                            : h->kind == HOSTIF_BRIDGE   ? "a bridge"
                            : h->kind == HOSTIF_LOOPBACK ? "the loopback"
                                                         : "a virtual netdev",
                            h->kind == HOSTIF_WIRELESS
                                    ? "the job's traffic leaves the fabric and dies with the Wi-Fi"
                            : h->kind == HOSTIF_LOOPBACK ? "no other node can reach it"
                                                         : "a container's network, not the fabric");
                return;
        }
        if (!fabric_ipv4_of(f, name, ipv4, sizeof(ipv4))) {
                env_finding(j, true, s, NULL, "%s has no IPv4 address here: nothing to bind to", name);
                return;
        }
        if (!n && strcmp(fabric, "none") != 0)
                env_finding(j, false, s, NULL,
                            "%s is not a fabric netdev: the job's socket traffic goes over the management "
                            "network (the fabric netdevs: %s)",
                            name, fabric);
}

/* NCCL's interface lists: "^" excludes, "=" names exactly, else each entry is a prefix. */
static void judge_nccl_ifname(struct env_judge *j, const struct env_setting *s)
{
        _cleanup_strv_ char **items = NULL;
        const char *v = s->value;
        bool exact = false;
        char ipv4[16];

        if (v[0] == '^')
                return; /* what is left is NCCL's own choice */
        if (v[0] == '=') {
                exact = true;
                v++;
        }
        if (strv_split(v, &items) < 0)
                return;
        for (char **it = items; it && *it; it++) {
                size_t matches = 0;

                if (exact) {
                        judge_netdev(j, s, *it);
                        continue;
                }
                for (size_t i = 0; i < j->f->hostifs.n; i++) {
                        const char *name = j->f->hostifs.v[i].name;

                        if (strncmp(name, *it, strlen(*it)) != 0 ||
                            !fabric_ipv4_of(j->f, name, ipv4, sizeof(ipv4)))
                                continue;
                        matches++;
                        judge_netdev(j, s, name);
                }
                if (matches == 0)
                        judge_netdev(j, s, *it);
        }
}

/* A comma-separated list of exact netdev names, or (Open MPI) CIDR subnets. */
static void judge_netdev_list(struct env_judge *j, const struct env_setting *s)
{
        _cleanup_strv_ char **items = NULL;

        if (strv_split(s->value, &items) < 0)
                return;
        for (char **it = items; it && *it; it++) {
                char net[64], *slash;
                struct in_addr want, have;
                uint64_t prefix;
                bool found = false;

                if (!strchr(*it, '/')) {
                        judge_netdev(j, s, *it);
                        continue;
                }
                snprintf(net, sizeof(net), "%s", *it);
                /* An entry longer than any subnet loses its '/' to the cut: not a subnet either. */
                slash = strchr(net, '/');
                if (slash)
                        *slash = '\0';
                if (!slash || inet_pton(AF_INET, net, &want) != 1 ||
                    parse_uint64(slash + 1, 10, 0, 32, &prefix) < 0) {
                        env_finding(j, true, s, NULL, "%s is neither a netdev name nor an IPv4 subnet", *it);
                        continue;
                }
                for (size_t i = 0; i < j->f->n_addresses && !found; i++) {
                        char a[64];
                        uint32_t mask = prefix ? htonl(~0U << (32 - prefix)) : 0;

                        snprintf(a, sizeof(a), "%s", j->f->addresses[i].address);
                        a[strcspn(a, "/")] = '\0';
                        if (inet_pton(AF_INET, a, &have) == 1 &&
                            (have.s_addr & mask) == (want.s_addr & mask)) {
                                found = true;
                                judge_netdev(j, s, j->f->addresses[i].ifname);
                        }
                }
                if (!found)
                        env_finding(j, true, s, NULL,
                                    "no address of this node is in %s (a subnet of another node?)", *it);
        }
}

static bool port_is_active(const struct rdma_device *d)
{
        for (size_t p = 0; p < d->n_ports; p++)
                if (d->ports[p].state == RDMA_PORT_ACTIVE)
                        return true;
        return false;
}

/* One "dev[:port]" entry: the device (exactly, or every device it prefixes), its port. Returns
 * how many devices it names. */
static size_t judge_hca_entry(struct env_judge *j, const struct env_setting *s, const char *entry,
                              bool exact, bool *listed)
{
        char dev[64], devices[512];
        uint64_t port = 0;
        const char *colon = strchr(entry, ':');
        size_t matches = 0;

        snprintf(dev, sizeof(dev), "%.*s", colon ? (int)(colon - entry) : (int)strlen(entry), entry);
        if (colon && parse_uint64(colon + 1, 10, 1, 255, &port) < 0) {
                env_finding(j, true, s, NULL, "%s: the port after ':' is not a number", entry);
                return 0;
        }
        for (size_t i = 0; i < j->f->rdma.n; i++) {
                const struct rdma_device *d = &j->f->rdma.v[i];
                bool has_port = false;

                if (exact ? strcmp(d->name, dev) != 0 : strncmp(d->name, dev, strlen(dev)) != 0)
                        continue;
                matches++;
                listed[i] = true;
                for (size_t p = 0; p < d->n_ports; p++) {
                        if (port && d->ports[p].num != port)
                                continue;
                        has_port = true;
                        if (port && d->ports[p].state != RDMA_PORT_ACTIVE)
                                env_finding(j, false, s, NULL, "%s port %u is %s, not ACTIVE (no cable?)",
                                            d->name, (unsigned)port,
                                            d->ports[p].state_name[0] ? d->ports[p].state_name : "down");
                }
                if (!has_port)
                        env_finding(j, true, s, NULL, "%s has no port %u here", d->name, (unsigned)port);
        }
        if (matches == 0) {
                rdma_devices_list(j->f, devices, sizeof(devices));
                env_finding(j, true, s, NULL,
                            "this node has no RDMA device %s%s (a value from another node, whose HCA names "
                            "differ?); its devices: %s",
                            exact ? "" : "whose name starts with ", dev, devices);
        }
        return matches;
}

static void judge_ib_hca(struct env_judge *j, const struct env_setting *s)
{
        _cleanup_strv_ char **items = NULL;
        _cleanup_free_ bool *listed = calloc(j->f->rdma.n + 1, sizeof(bool));
        const char *v = s->value;
        bool exact = false, any_active = false;
        size_t known = 0;

        if (!listed || v[0] == '^')
                return;
        if (v[0] == '=') {
                exact = true;
                v++;
        }
        if (strv_split(v, &items) < 0)
                return;
        for (char **it = items; it && *it; it++)
                known += judge_hca_entry(j, s, *it, exact, listed);
        for (size_t i = 0; i < j->f->rdma.n; i++) {
                const struct rdma_device *d = &j->f->rdma.v[i], *twin;

                if (!listed[i] || !port_is_active(d))
                        continue;
                any_active = true;
                twin = d->twin[0] ? rdma_find_device(&j->f->rdma, d->twin) : NULL;
                if (twin && port_is_active(twin) && !listed[twin - j->f->rdma.v])
                        env_finding(j, false, s, NULL,
                                    "lists %s but not its twin %s: both are one physical port, and one twin "
                                    "alone carries half its bandwidth",
                                    d->name, twin->name);
        }
        /* Devices this node does not have are reported already. */
        if (!any_active && known > 0)
                env_finding(j, true, s, NULL,
                            "none of the devices it names has an ACTIVE port here: NCCL falls back to TCP "
                            "sockets");
}

/* UCX's list: "all", RDMA "dev:port" entries and netdev names. */
static void judge_ucx_devices(struct env_judge *j, const struct env_setting *s)
{
        _cleanup_strv_ char **items = NULL;
        _cleanup_free_ bool *listed = calloc(j->f->rdma.n + 1, sizeof(bool));

        if (!listed || strcmp(s->value, "all") == 0 || strv_split(s->value, &items) < 0)
                return;
        for (char **it = items; it && *it; it++) {
                if (strchr(*it, ':'))
                        judge_hca_entry(j, s, *it, true, listed);
                else
                        judge_netdev(j, s, *it);
        }
}

/* The devices NCCL will use: those NCCL_IB_HCA names ("=" exact, else prefixes), else all. */
static bool nccl_uses(const struct env_judge *j, const struct rdma_device *d)
{
        const struct env_setting *hca = env_settings_find(j->effective, "NCCL_IB_HCA");
        _cleanup_strv_ char **items = NULL;
        const char *v = hca ? hca->value : "";
        bool exact = v[0] == '=';

        if (!hca || v[0] == '^' || strv_split(v + (exact ? 1 : 0), &items) < 0)
                return true;
        for (char **it = items; it && *it; it++) {
                size_t len = strcspn(*it, ":");

                if (exact ? strlen(d->name) == len && strncmp(d->name, *it, len) == 0
                          : strncmp(d->name, *it, len) == 0)
                        return true;
        }
        return false;
}

static void judge_gid_index(struct env_judge *j, const struct env_setting *s)
{
        uint64_t index;

        if (parse_uint64(s->value, 10, 0, 65535, &index) < 0) {
                env_finding(j, true, s, NULL, "not a GID index (a number)");
                return;
        }
        for (size_t i = 0; i < j->f->rdma.n; i++) {
                const struct rdma_device *d = &j->f->rdma.v[i];

                for (size_t p = 0; p < d->n_ports && nccl_uses(j, d); p++) {
                        const struct rdma_port *port = &d->ports[p];
                        const struct rdma_gid *at = NULL;
                        char ipv4[16], there[96];
                        int want;

                        if (port->state != RDMA_PORT_ACTIVE || strcmp(port->link_layer, "Ethernet") != 0)
                                continue;
                        for (size_t g = 0; g < port->n_gids; g++)
                                if (port->gids[g].index == index)
                                        at = &port->gids[g];
                        /* A port NCCL_IB_HCA names whose netdev has no IPv4 address (a twin left
                         * without one) has no RoCE v2 IPv4 GID at any index: NCCL uses it all the
                         * same, with the index given. */
                        if (!port->netdev[0] || !fabric_ipv4_of(j->f, port->netdev, ipv4, sizeof(ipv4))) {
                                if (at && at->type == RDMA_GID_ROCE_V2 && at->ipv4[0])
                                        continue;
                                snprintf(there, sizeof(there), "%s%s%s", at ? "a " : "empty",
                                         at ? rdma_gid_type_to_string(at->type) : "", at ? " GID" : "");
                                env_finding(
                                        j, true, s, NULL,
                                        "GID %u of %s port %u is %s: its netdev %s has no IPv4 address, so "
                                        "the port has no RoCE v2 IPv4 GID and QP setup on it times out; "
                                        "give "
                                        "%s an address on its own subnet, or leave %s out of NCCL_IB_HCA",
                                        (unsigned)index, d->name, port->num, there,
                                        port->netdev[0] ? port->netdev : "(none)",
                                        port->netdev[0] ? port->netdev : "it", d->name);
                                continue;
                        }
                        want = rdma_port_gid_for_ipv4(port, ipv4);
                        if (want == (int)index)
                                continue;
                        if (at)
                                snprintf(there, sizeof(there), "a %s GID%s%s",
                                         rdma_gid_type_to_string(at->type), at->ipv4[0] ? " of " : "",
                                         at->ipv4);
                        else
                                snprintf(there, sizeof(there), "empty");
                        if (want >= 0)
                                env_finding(
                                        j, true, s, NULL,
                                        "GID %u of %s port %u is %s; its RoCE v2 GID for %s is %d: QP setup "
                                        "times out with the wrong one",
                                        (unsigned)index, d->name, port->num, there, ipv4, want);
                        else
                                env_finding(
                                        j, true, s, NULL,
                                        "GID %u of %s port %u is %s, and the port has no RoCE v2 GID for %s",
                                        (unsigned)index, d->name, port->num, there, ipv4);
                }
        }
}

/* GPU Direct RDMA on a unified-memory GPU (GB10): through nvidia_peermem it hangs NCCL's init;
 * through DMA-BUF it needs the open driver 580+. */
static void judge_gdr(struct env_judge *j, const struct env_setting *s)
{
        const struct hostfacts *h = &j->f->host;
        bool on;

        if (strcmp(s->name, "NCCL_DMABUF_ENABLE") == 0)
                on = strcmp(s->value, "1") == 0;
        else
                on = strcmp(s->value, "LOC") != 0 && strcmp(s->value, "0") != 0;
        if (!on || !h->has_unified_memory)
                return;
        if (h->has_peermem)
                env_finding(
                        j, true, s, NULL,
                        "GPU Direct RDMA on a unified-memory GPU with nvidia_peermem loaded: NCCL's init "
                        "hangs (`sparkc doctor` says how to unload it)");
        else if (!h->is_dmabuf_possible)
                env_finding(j, true, s, NULL, "GPU Direct RDMA on a unified-memory GPU where %s",
                            h->dmabuf_reason);
}

/* The peer whose address this is, as the peers method's result says; NULL when none. */
static const char *peer_with_address(const struct fabric_facts *f, const char *address)
{
        json_object *list, *v;

        if (!f->peers || !json_object_object_get_ex(f->peers, "peers", &list))
                return NULL;
        for (size_t i = 0; i < json_object_array_length(list); i++) {
                json_object *p = json_object_array_get_idx(list, i), *addrs, *via;
                bool hit = json_object_object_get_ex(p, "via", &via) && via &&
                           json_object_object_get_ex(via, "remote", &v) &&
                           strcmp(json_object_get_string(v), address) == 0;

                for (size_t k = 0; !hit && json_object_object_get_ex(p, "addresses", &addrs) &&
                                   k < json_object_array_length(addrs);
                     k++)
                        hit = strcmp(json_object_get_string(json_object_array_get_idx(addrs, k)), address) ==
                              0;
                if (hit && json_object_object_get_ex(p, "name", &v) && v)
                        return json_object_get_string(v);
        }
        return NULL;
}

/* An address a framework announces as this node's (vLLM, SGLang). */
static void judge_own_address(struct env_judge *j, const struct env_setting *s)
{
        const char *peer;
        char fix[128] = "";

        for (size_t i = 0; i < j->f->n_addresses; i++) {
                const char *a = j->f->addresses[i].address;
                size_t len = strcspn(a, "/");

                if (strlen(s->value) == len && strncmp(a, s->value, len) == 0) {
                        judge_netdev(j, s, j->f->addresses[i].ifname);
                        return;
                }
        }
        peer = peer_with_address(j->f, s->value);
        /* Unsetting it would have the framework announce the default route's address: this
         * node's own on the job plan's plane is the fix. */
        if (j->own_address && j->own_address[0])
                snprintf(fix, sizeof(fix), "export %s=%s (this node's address on the job plan's plane)",
                         s->name, j->own_address);
        if (peer)
                env_finding(j, true, s, fix[0] ? fix : NULL,
                            "%s is %s's address, not this node's: the framework would announce another node",
                            s->value, peer);
        else
                env_finding(
                        j, true, s, fix[0] ? fix : NULL,
                        "%s is not an address of this node (copied from another node?): the framework would "
                        "announce an address other nodes cannot reach it on",
                        s->value);
}

static void judge_ib_disable(struct env_judge *j, const struct env_setting *s)
{
        if (strcmp(s->value, "0") == 0 || !env_suggested(j, "NCCL_IB_HCA"))
                return;
        env_finding(j, false, s, "unset NCCL_IB_DISABLE",
                    "turns RDMA off where this node has active RDMA ports: NCCL runs over TCP sockets");
}

bool env_judge_variable(struct env_judge *j, const struct env_setting *s)
{
        static const struct {
                const char *name;
                void (*judge)(struct env_judge *j, const struct env_setting *s);
        } judges[] = {
                { "NCCL_IB_HCA", judge_ib_hca },
                { "NCCL_SOCKET_IFNAME", judge_nccl_ifname },
                { "GLOO_SOCKET_IFNAME", judge_netdev_list },
                { "OMPI_MCA_btl_tcp_if_include", judge_netdev_list },
                { "OMPI_MCA_oob_tcp_if_include", judge_netdev_list },
                { "UCX_NET_DEVICES", judge_ucx_devices },
                { "NCCL_IB_GID_INDEX", judge_gid_index },
                { "NCCL_NET_GDR_LEVEL", judge_gdr },
                { "NCCL_DMABUF_ENABLE", judge_gdr },
                { "NCCL_IB_DISABLE", judge_ib_disable },
                { "VLLM_HOST_IP", judge_own_address },
                { "SGLANG_HOST_IP", judge_own_address },
        };

        for (size_t i = 0; i < ARRAY_SIZE(judges); i++)
                if (strcmp(judges[i].name, s->name) == 0) {
                        judges[i].judge(j, s);
                        return true;
                }
        return false;
}
