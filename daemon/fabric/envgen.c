#include "envgen.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/strutil.h"
#include "envgen_topology.h"
#include "inventory/hostif.h"

struct active_port {
        const struct rdma_device *dev;
        const struct rdma_port *port;
        char ipv4[16]; /* "" when its netdev has none */
};

int env_mode_from_string(const char *s, enum env_mode *out)
{
        if (strcmp(s, "auto") == 0)
                *out = ENV_MODE_AUTO;
        else if (strcmp(s, "safe") == 0)
                *out = ENV_MODE_SAFE;
        else if (strcmp(s, "dmabuf") == 0)
                *out = ENV_MODE_DMABUF;
        else
                return -EINVAL;
        return 0;
}

const char *env_mode_to_string(enum env_mode mode)
{
        switch (mode) {
        case ENV_MODE_SAFE:
                return "safe";
        case ENV_MODE_DMABUF:
                return "dmabuf";
        default:
                return "auto";
        }
}

static size_t collect_active(const struct fabric_facts *f, struct active_port *out, size_t max)
{
        size_t n = 0;

        for (size_t i = 0; i < f->rdma.n; i++) {
                const struct rdma_device *d = &f->rdma.v[i];

                for (size_t p = 0; p < d->n_ports && n < max; p++) {
                        const struct rdma_port *port = &d->ports[p];

                        if (port->state != RDMA_PORT_ACTIVE)
                                continue;
                        out[n] = (struct active_port){ .dev = d, .port = port };
                        if (port->netdev[0])
                                (void)fabric_ipv4_of(f, port->netdev, out[n].ipv4, sizeof(out[n].ipv4));
                        n++;
                }
        }
        return n;
}

static void add_var(json_object *vars, const char *name, const char *value, const char *why)
{
        json_object *v = json_object_new_object();

        json_object_object_add(v, "name", json_object_new_string(name));
        json_object_object_add(v, "value", json_object_new_string(value));
        json_object_object_add(v, "why", json_object_new_string(why));
        json_object_array_add(vars, v);
}

/* Appends s to a comma-separated list in buf. */
static void list_add(char *buf, size_t size, const char *s)
{
        size_t used = strlen(buf);

        snprintf(buf + used, size - used, "%s%s", used ? "," : "", s);
}

/* Where socket traffic goes when no fabric netdev has an IPv4 address: the management interface,
 * physical and not wireless, by the default route, else the only such netdev with an address.
 * Wireless (the job dies with the Wi-Fi), bridges and virtual netdevs (containers' ends) are
 * passed over, each named with why. Returns the chosen netdev, or NULL with why saying so. */
static const struct hostif *choose_management(const struct fabric_facts *f, char *why, size_t size)
{
        const struct hostif *chosen = NULL, *with_address = NULL;
        char passed[512] = "", addressed[256] = "", ipv4[16];
        size_t n_addressed = 0, n_passed = 0, n_more = 0;

        for (size_t i = 0; i < f->hostifs.n; i++) {
                const struct hostif *h = &f->hostifs.v[i];

                if (h->kind != HOSTIF_PHYSICAL || !fabric_ipv4_of(f, h->name, ipv4, sizeof(ipv4)))
                        continue;
                snprintf(addressed + strlen(addressed), sizeof(addressed) - strlen(addressed), "%s%s",
                         addressed[0] ? ", " : "", h->name);
                n_addressed++;
                with_address = h;
                if (h->has_default_route && (!chosen || h->route_metric < chosen->route_metric))
                        chosen = h;
        }
        if (!chosen && n_addressed == 1)
                chosen = with_address;

        for (size_t i = 0; i < f->hostifs.n; i++) {
                const struct hostif *h = &f->hostifs.v[i];
                char one[96];

                if (h == chosen || h->kind == HOSTIF_LOOPBACK || netif_list_find(&f->netifs, h->name))
                        continue;
                if (h->kind != HOSTIF_PHYSICAL)
                        snprintf(one, sizeof(one), "%s is %s%s", h->name,
                                 h->kind == HOSTIF_WIRELESS ? "wireless"
                                 : h->kind == HOSTIF_BRIDGE ? "a bridge"
                                                            : "virtual",
                                 h->has_default_route ? " (it holds the default route)" : "");
                else if (!fabric_ipv4_of(f, h->name, ipv4, sizeof(ipv4)))
                        snprintf(one, sizeof(one), "%s has no IPv4 address", h->name);
                else
                        snprintf(one, sizeof(one), "%s does not hold the default route", h->name);
                if (n_passed++ < 8) {
                        size_t used = strlen(passed);

                        snprintf(passed + used, sizeof(passed) - used, "%s%s", used ? ", " : "", one);
                } else
                        n_more++;
        }
        if (n_more) {
                size_t used = strlen(passed);

                snprintf(passed + used, sizeof(passed) - used, " and %zu more", n_more);
        }

        if (chosen)
                snprintf(why, size,
                         "no active fabric netdev has an IPv4 address, so %s, the management interface "
                         "(%s)%s%s",
                         chosen->name,
                         chosen->has_default_route ? "physical, holds the IPv4 default route"
                                                   : "the only physical netdev with an IPv4 address",
                         passed[0] ? "; passed over: " : "", passed);
        else if (n_addressed > 1)
                snprintf(why, size,
                         "no active fabric netdev has an IPv4 address, and of the physical netdevs with one "
                         "(%s) none holds the IPv4 default route: give a fabric netdev an address (one "
                         "twin of each port is enough)",
                         addressed);
        else {
                char clause[540] = "";

                if (passed[0])
                        snprintf(clause, sizeof(clause), "; passed over: %s;", passed);
                snprintf(why, size,
                         "no active fabric netdev has an IPv4 address, and no physical, non-wireless netdev "
                         "has one either%s%s give a fabric netdev an address (one twin of each port is "
                         "enough)",
                         clause, clause[0] ? "" : ":");
        }
        return chosen;
}

static enum env_mode choose_mode(const struct hostfacts *h, enum env_mode requested, char *why, size_t size)
{
        if (requested == ENV_MODE_SAFE) {
                snprintf(why, size, "asked for");
                return ENV_MODE_SAFE;
        }
        if (requested == ENV_MODE_DMABUF) {
                if (h->is_dmabuf_possible)
                        snprintf(why, size, "asked for; %s", h->dmabuf_reason);
                else
                        snprintf(why, size, "asked for, but %s: NCCL will not get GPU Direct RDMA",
                                 h->dmabuf_reason);
                return ENV_MODE_DMABUF;
        }
        /* Checked before DMA-BUF: with peermem loaded on unified memory the doctor fails the node,
         * and auto must not turn on the GPU Direct RDMA that the doctor warns about. */
        if (h->has_unified_memory && h->has_peermem)
                snprintf(why, size,
                         "unified-memory GPU with nvidia_peermem loaded: GPU Direct RDMA through peermem "
                         "hangs NCCL init; %s",
                         h->is_dmabuf_possible ? "DMA-BUF would work once nvidia_peermem is unloaded"
                                               : h->dmabuf_reason);
        else if (h->is_dmabuf_possible) {
                snprintf(why, size, "%s", h->dmabuf_reason);
                return ENV_MODE_DMABUF;
        } else if (!h->has_nvidia_driver)
                snprintf(why, size, "no NVIDIA driver: GPU memory cannot be registered with the NIC");
        else
                snprintf(why, size, "%s", h->dmabuf_reason);
        return ENV_MODE_SAFE;
}

/*
 * {reason, safe_command} when the mode asked for would hang NCCL or fail it on this host, NULL
 * when it is safe. The variables are still built, for a user who insists.
 */
static json_object *refusal(const struct hostfacts *h, enum env_mode requested)
{
        char reason[512];
        json_object *o;

        if (requested != ENV_MODE_DMABUF)
                return NULL;
        if (h->has_unified_memory && h->has_peermem)
                snprintf(
                        reason, sizeof(reason),
                        "nvidia_peermem is loaded on a unified-memory GPU: NCCL init hangs forever with GPU "
                        "Direct RDMA on (sparkc doctor says how to unload it)");
        else if (!h->is_dmabuf_possible)
                snprintf(reason, sizeof(reason), "DMA-BUF GPU Direct RDMA is impossible here: %s",
                         h->dmabuf_reason);
        else
                return NULL;
        o = json_object_new_object();
        json_object_object_add(o, "reason", json_object_new_string(reason));
        json_object_object_add(o, "safe_command", json_object_new_string("sparkc env --mode safe"));
        return o;
}

static void add_gid_index(json_object *vars, json_object *notes, const struct active_port *ports, size_t n)
{
        char why[1024] = "", missing[256] = "", unmapped[256] = "", indices[256] = "";
        int index = -2;
        bool same = true;

        for (size_t i = 0; i < n; i++) {
                /* By the netdev's own address: the first IPv4 GID of the table may belong to a VLAN
                 * or macvlan on top of it, another subnet. */
                int g = rdma_port_gid_for_ipv4(ports[i].port, ports[i].ipv4);
                char one[96];

                if (strcmp(ports[i].port->link_layer, "Ethernet") != 0)
                        continue;
                if (g < 0) {
                        list_add(ports[i].ipv4[0] ? unmapped : missing, sizeof(missing), ports[i].dev->name);
                        same = false;
                        continue;
                }
                snprintf(one, sizeof(one), "%s:%d", ports[i].dev->name, g);
                list_add(indices, sizeof(indices), one);
                if (index != -2 && index != g)
                        same = false;
                index = g;
        }
        if (index == -2 && !missing[0] && !unmapped[0])
                return; /* InfiniBand only: no GID index to choose */
        if (same && index >= 0) {
                char value[16];

                snprintf(value, sizeof(value), "%d", index);
                snprintf(why, sizeof(why),
                         "the RoCE v2 IPv4 GID of every device (%s), found by address, not assumed",
                         indices);
                add_var(vars, "NCCL_IB_GID_INDEX", value, why);
                return;
        }
        /* NCCL takes one index for all devices; a wrong one makes QP setup time out. */
        if (unmapped[0])
                snprintf(why, sizeof(why),
                         "NCCL_IB_GID_INDEX not set: %s has no RoCE v2 GID for its netdev's IPv4 address "
                         "(check `show_gids`; the entry appears when the address is on the netdev)%s%s; "
                         "NCCL 2.21+ picks each device's RoCE v2 GID itself",
                         unmapped, indices[0] ? ", others: " : "", indices);
        else if (missing[0])
                snprintf(why, sizeof(why),
                         "NCCL_IB_GID_INDEX not set: %s has no RoCE v2 IPv4 GID (no IPv4 address on its "
                         "netdev)%s%s; "
                         "NCCL 2.21+ picks each device's RoCE v2 GID itself",
                         missing, indices[0] ? ", others: " : "", indices);
        else
                snprintf(why, sizeof(why),
                         "NCCL_IB_GID_INDEX not set: the RoCE v2 IPv4 GID index differs between devices "
                         "(%s); NCCL "
                         "2.21+ picks each device's RoCE v2 GID itself",
                         indices);
        json_object_array_add(notes, json_object_new_string(why));
}

/* Why there is no environment to give: no RDMA device or no active port, and the netdevs named
 * in [fabric] interfaces, which carry sockets only. */
static const char *no_fabric_reason(const struct fabric_facts *f, char *buf, size_t size)
{
        char configured[256] = "";

        for (size_t i = 0; i < f->netifs.n; i++)
                if (f->netifs.v[i].is_configured && strv_length(f->netifs.v[i].rdma_devices) == 0)
                        list_add(configured, sizeof(configured), f->netifs.v[i].name);
        snprintf(buf, size, "%s%s%s%s",
                 f->rdma.n == 0 ? "no RDMA device on this node (no ConnectX/RoCE or InfiniBand device in "
                                  "/sys/class/infiniband); NCCL would fall back to TCP sockets"
                                : "no RDMA port is ACTIVE: check the cables and `sparkc doctor`",
                 configured[0] ? "; the netdevs named in [fabric] interfaces (" : "", configured,
                 configured[0] ? ") have no RDMA device: NCCL can use them only through TCP sockets "
                                 "(NCCL_SOCKET_IFNAME, NCCL_IB_DISABLE=1)"
                               : "");
        return buf;
}

/* [fabric] rdma = no: NCCL's socket transport on the fabric netdevs that are up with an IPv4
 * address, as declared, not as a fallback from a failed RDMA probe. */
static json_object *build_socket(const struct fabric_facts *f, json_object *o)
{
        json_object *vars, *notes;
        char ifs[512] = "", value[520], why[1024];
        const char *first = NULL;

        for (size_t i = 0; i < f->netifs.n; i++) {
                const struct netif *n = &f->netifs.v[i];
                char ipv4[16];

                if (!n->is_admin_up || !n->has_carrier || !fabric_ipv4_of(f, n->name, ipv4, sizeof(ipv4)))
                        continue;
                list_add(ifs, sizeof(ifs), n->name);
                if (!first)
                        first = n->name;
        }
        json_object_object_add(o, "transport", json_object_new_string("socket"));
        if (!first) {
                json_object_object_add(o, "fabric_found", json_object_new_boolean(false));
                json_object_object_add(
                        o, "reason",
                        json_object_new_string("[fabric] rdma = no, and no fabric netdev is up with an IPv4 "
                                               "address: NCCL's socket transport has nothing to run on"));
                return o;
        }
        json_object_object_add(o, "fabric_found", json_object_new_boolean(true));
        json_object_object_add(o, "mode", json_object_new_string(env_mode_to_string(ENV_MODE_SAFE)));
        json_object_object_add(
                o, "mode_reason",
                json_object_new_string("[fabric] rdma = no: TCP sockets on the fabric, no RDMA"));
        vars = json_object_new_array();
        notes = json_object_new_array();
        snprintf(value, sizeof(value), "=%s", ifs);
        snprintf(why, sizeof(why),
                 "NCCL's socket transport and bootstrap on the fabric netdevs up with an IPv4 address, by "
                 "exact name ([fabric] rdma = no)");
        add_var(vars, "NCCL_SOCKET_IFNAME", value, why);
        add_var(vars, "NCCL_IB_DISABLE", "1",
                "the fabric is declared without RDMA ([fabric] rdma = no): NCCL uses TCP sockets, not an "
                "RDMA device it might find elsewhere");
        snprintf(why, sizeof(why), "UCX over TCP on %s ([fabric] rdma = no)", ifs);
        add_var(vars, "UCX_NET_DEVICES", ifs, why);
        snprintf(why, sizeof(why), "Open MPI's TCP traffic on %s", ifs);
        add_var(vars, "OMPI_MCA_btl_tcp_if_include", ifs, why);
        snprintf(why, sizeof(why), "PyTorch's Gloo on %s%s", first,
                 strchr(ifs, ',') ? ", the first of them" : "");
        add_var(vars, "GLOO_SOCKET_IFNAME", first, why);
        envgen_nccl_filter(f, vars, notes);
        json_object_object_add(o, "variables", vars);
        json_object_object_add(o, "notes", notes);
        return o;
}

json_object *envgen_build(const struct fabric_facts *f, enum env_mode requested)
{
        json_object *o = json_object_new_object(), *vars, *notes, *refused;
        struct active_port ports[64];
        char hca[1024] = "", socket_ifs[512] = "", why[2048], mode_why[512], socket_why[1024];
        const char *first_socket_if = NULL;
        bool is_management = false, has_twins = false;
        json_object *topology;
        enum env_mode mode;
        size_t n = collect_active(f, ports, sizeof(ports) / sizeof(ports[0]));

        json_object_object_add(o, "mode_requested", json_object_new_string(env_mode_to_string(requested)));
        if (f->is_rdma_declared_off)
                return build_socket(f, o);
        json_object_object_add(o, "transport", json_object_new_string("rdma"));
        if (n == 0) {
                json_object_object_add(o, "fabric_found", json_object_new_boolean(false));
                json_object_object_add(o, "reason",
                                       json_object_new_string(no_fabric_reason(f, why, sizeof(why))));
                return o;
        }
        json_object_object_add(o, "fabric_found", json_object_new_boolean(true));
        vars = json_object_new_array();
        notes = json_object_new_array();

        for (size_t i = 0; i < n; i++) {
                char one[96];

                snprintf(one, sizeof(one), "%s:%u", ports[i].dev->name, ports[i].port->num);
                list_add(hca, sizeof(hca), one);
                if (ports[i].ipv4[0] && ports[i].port->netdev[0] &&
                    !strstr(socket_ifs, ports[i].port->netdev)) {
                        list_add(socket_ifs, sizeof(socket_ifs), ports[i].port->netdev);
                        if (!first_socket_if)
                                first_socket_if = ports[i].port->netdev;
                }
        }

        mode = choose_mode(&f->host, requested, mode_why, sizeof(mode_why));
        json_object_object_add(o, "mode", json_object_new_string(env_mode_to_string(mode)));
        json_object_object_add(o, "mode_reason", json_object_new_string(mode_why));
        refused = refusal(&f->host, requested);
        if (refused)
                json_object_object_add(o, "refused", refused);

        if (socket_ifs[0]) {
                snprintf(socket_why, sizeof(socket_why), "the fabric netdevs with an IPv4 address");
        } else {
                const struct hostif *m = choose_management(f, socket_why, sizeof(socket_why));

                if (m) {
                        snprintf(socket_ifs, sizeof(socket_ifs), "%s", m->name);
                        first_socket_if = m->name;
                        is_management = true;
                }
        }
        if (socket_ifs[0]) {
                char value[520];

                snprintf(value, sizeof(value), "=%s", socket_ifs);
                snprintf(why, sizeof(why),
                         "exact names, so NCCL's bootstrap never picks Wi-Fi or a container bridge: %s",
                         socket_why);
                add_var(vars, "NCCL_SOCKET_IFNAME", value, why);
        } else {
                snprintf(why, sizeof(why),
                         "NCCL_SOCKET_IFNAME, GLOO_SOCKET_IFNAME, UCX_NET_DEVICES and "
                         "OMPI_MCA_btl_tcp_if_include not set: %s",
                         socket_why);
                json_object_array_add(notes, json_object_new_string(why));
        }
        {
                char value[1030];
                size_t twins = 0;

                for (size_t i = 0; i < n; i++)
                        if (ports[i].dev->twin[0])
                                twins++;
                has_twins = twins > 0;
                snprintf(value, sizeof(value), "=%s", hca);
                snprintf(why, sizeof(why),
                         "every active RDMA port by exact name (\"=\": mlx5_1 would also match mlx5_10)%s",
                         twins ? "; both twins of each physical port, since listing one halves the bandwidth"
                               : "");
                add_var(vars, "NCCL_IB_HCA", value, why);
        }
        add_gid_index(vars, notes, ports, n);
        if (mode == ENV_MODE_DMABUF) {
                add_var(vars, "NCCL_NET_GDR_LEVEL", "SYS",
                        "GPU Direct RDMA allowed across the whole system (dmabuf mode)");
                add_var(vars, "NCCL_DMABUF_ENABLE", "1", "register GPU memory with the NIC through DMA-BUF");
        } else {
                add_var(vars, "NCCL_NET_GDR_LEVEL", "LOC",
                        "no GPU Direct RDMA: data is staged through host memory (safe mode)");
                add_var(vars, "NCCL_DMABUF_ENABLE", "0", "no DMA-BUF registration (safe mode)");
        }
        if (f->host.has_unified_memory)
                add_var(vars, "NCCL_IB_TIMEOUT", "22",
                        "a longer RDMA retry timeout: GB10 nodes are slow to bring QPs up");
        else
                add_var(vars, "NCCL_IB_TIMEOUT", "20",
                        "NCCL's default RDMA retry timeout, stated so every node agrees");
        topology = envgen_topology_add(f, has_twins, vars, notes);
        if (topology)
                json_object_object_add(o, "topology", topology);
        if (socket_ifs[0]) {
                char value[1540];

                /* UCX takes RDMA ports and netdevs in one list: a netdev alone would leave it TCP only. */
                snprintf(value, sizeof(value), "%s,%s", hca, socket_ifs);
                snprintf(why, sizeof(why), "UCX on the active RDMA ports, its TCP on %s: %s", socket_ifs,
                         socket_why);
                add_var(vars, "UCX_NET_DEVICES", value, why);
                snprintf(why, sizeof(why), "Open MPI's TCP traffic on %s: %s", socket_ifs, socket_why);
                add_var(vars, "OMPI_MCA_btl_tcp_if_include", socket_ifs, why);
                snprintf(why, sizeof(why), "PyTorch's Gloo on %s%s: %s", first_socket_if,
                         is_management || !strchr(socket_ifs, ',') ? "" : ", the first of them", socket_why);
                add_var(vars, "GLOO_SOCKET_IFNAME", first_socket_if, why);
        }
        envgen_nccl_filter(f, vars, notes);
        json_object_object_add(o, "variables", vars);
        json_object_object_add(o, "notes", notes);
        return o;
}
