/*
 * The doctor's checks of the RDMA devices and their ports: devices found, ports active, the MTU
 * of the fabric netdevs, the twins of each port (on separate subnets, both up), an address on
 * every active port and the RoCE v2 GID for it. Two ports that face different nodes (the
 * topology map's links) in one subnet are a twin-subnets failure too: a ring on link-local /16.
 */
#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>

#include "common/json_get.h"
#include "common/strutil.h"
#include "doctor_checks.h"

#define RDMA_PORT_ACTIVE  4
#define RDMA_PHYS_LINK_UP 5

void doctor_check_rdma_devices(struct check *c, const struct fabric_facts *f)
{
        char names[512] = "";

        check_begin(c, "rdma-devices");
        for (size_t i = 0; i < f->rdma.n; i++) {
                size_t used = strlen(names);

                snprintf(names + used, sizeof(names) - used, "%s%s", used ? " " : "", f->rdma.v[i].name);
        }
        for (char **m = f->host.rdma_modules_loaded; m && *m; m++)
                evidence(c, "kernel module %s loaded", *m);
        for (char **m = f->host.rdma_modules_missing; m && *m; m++)
                evidence(c, "kernel module %s not loaded", *m);
        for (char **w = f->rdma.warnings; w && *w; w++)
                evidence(c, "%s", *w);
        for (char **w = f->netifs.warnings; w && *w; w++)
                evidence(c, "%s", *w);
        if (f->rdma.verbs_error[0])
                evidence(c, "libibverbs: %s", f->rdma.verbs_error);
        if (f->rdma.n == 0) {
                check_end(c, DOCTOR_FAIL,
                          "install rdma-core and the NIC's RDMA driver (ConnectX: modprobe mlx5_ib), then "
                          "check "
                          "`ibv_devices`; without RDMA, NCCL falls back to TCP sockets",
                          "no RDMA device found");
                return;
        }
        check_end(c,
                  (f->rdma.warnings && f->rdma.warnings[0]) || (f->netifs.warnings && f->netifs.warnings[0])
                          ? DOCTOR_WARN
                          : DOCTOR_OK,
                  "the sysfs entries above could not be read as expected; check the driver (dmesg | grep "
                  "mlx5)",
                  "%zu RDMA device%s: %s", f->rdma.n, f->rdma.n == 1 ? "" : "s", names);
}

void doctor_check_socket_fabric(struct check *c, const struct fabric_facts *f)
{
        char names[256] = "";
        size_t usable = 0;

        check_begin(c, "socket-fabric");
        for (size_t i = 0; i < f->netifs.n; i++) {
                const struct netif *n = &f->netifs.v[i];
                char ipv4[16];
                bool up = n->is_admin_up && n->has_carrier;

                if (!fabric_ipv4_of(f, n->name, ipv4, sizeof(ipv4))) {
                        evidence(c, "%s: no IPv4 address%s", n->name, up ? "" : ", down");
                        continue;
                }
                evidence(c, "%s: %s%s", n->name, ipv4, up ? ", up" : ", down");
                if (!up)
                        continue;
                usable++;
                snprintf(names + strlen(names), sizeof(names) - strlen(names), "%s%s",
                         usable > 1 ? ", " : "", n->name);
        }
        if (usable == 0) {
                check_end(
                        c, DOCTOR_FAIL,
                        "bring a fabric netdev up with an IPv4 address, or name it in [fabric] interfaces",
                        "[fabric] rdma = no, and no fabric netdev is up with an IPv4 address: NCCL's socket "
                        "transport has nothing to run on");
                return;
        }
        check_end(c, DOCTOR_OK, NULL,
                  "[fabric] rdma = no: NCCL over TCP sockets on %s (RDMA not checked, as declared)", names);
}

void doctor_check_ports(struct check *c, const struct fabric_facts *f)
{
        size_t active = 0, total = 0;

        check_begin(c, "ports-active");
        for (size_t i = 0; i < f->rdma.n; i++) {
                const struct rdma_device *d = &f->rdma.v[i];

                for (size_t p = 0; p < d->n_ports; p++) {
                        const struct rdma_port *port = &d->ports[p];

                        total++;
                        active += port->state == RDMA_PORT_ACTIVE && port->phys_state == RDMA_PHYS_LINK_UP;
                        evidence(c, "%s port %u (%s): %s/%s, %s", d->name, port->num,
                                 port->netdev[0] ? port->netdev : "no netdev",
                                 port->state_name[0] ? port->state_name : "?",
                                 port->phys_state_name[0] ? port->phys_state_name : "?",
                                 port->rate[0] ? port->rate : "rate unknown");
                }
        }
        if (total == 0) {
                check_end(c, DOCTOR_FAIL, "see rdma-devices", "no RDMA port to check");
                return;
        }
        if (active == 0) {
                check_end(c, DOCTOR_FAIL,
                          "plug the QSFP cable in firmly at both ends and bring the netdev up (ip link set "
                          "IF up); "
                          "`ibdev2netdev` shows the state",
                          "no RDMA port is ACTIVE/LinkUp");
                return;
        }
        check_end(c, DOCTOR_OK, NULL, "%zu of %zu RDMA ports ACTIVE/LinkUp", active, total);
}

static const struct netif *netif_of_port(const struct fabric_facts *f, const struct rdma_port *port)
{
        return port->netdev[0] ? netif_list_find(&f->netifs, port->netdev) : NULL;
}

void doctor_check_mtu(struct check *c, const struct fabric_facts *f)
{
        size_t wrong = 0, unknown = 0, checked = 0;

        check_begin(c, "mtu");
        for (size_t i = 0; i < f->netifs.n; i++) {
                const struct netif *n = &f->netifs.v[i];
                char mtu[32];

                /* Every netdev of the list is a fabric netdev: RDMA-backed or named in [fabric]
                 * interfaces, and sparkd keeps the MTU of both. */
                checked++;
                if (n->mtu)
                        snprintf(mtu, sizeof(mtu), "MTU %u", n->mtu);
                else
                        snprintf(mtu, sizeof(mtu), "MTU unreadable");
                if (n->twin[0])
                        evidence(c, "%s (twin of %s): %s, %s", n->name, n->twin, mtu, n->operstate);
                else
                        evidence(c, "%s: %s, %s", n->name, mtu, n->operstate);
                if (strcmp(n->operstate, "up") != 0)
                        continue;
                if (n->mtu == 0)
                        unknown++;
                else if (n->mtu != f->mtu_wanted)
                        wrong++;
        }
        if (checked == 0) {
                check_end(c, DOCTOR_FAIL,
                          "name the fabric netdevs in [fabric] interfaces of sparkd.conf, or see "
                          "rdma-devices",
                          "no fabric netdev to check: none is backed by an RDMA device or named in "
                          "[fabric] interfaces");
                return;
        }
        if (wrong) {
                char fix[256];

                snprintf(fix, sizeof(fix),
                         "run sparkd in enforce mode, or: ip link set IF mtu %u on both twins (the MTU must "
                         "match "
                         "end to end)",
                         f->mtu_wanted);
                check_end(c, DOCTOR_FAIL, fix, "%zu fabric netdev%s up without MTU %u", wrong,
                          wrong == 1 ? " is" : "s are", f->mtu_wanted);
                return;
        }
        if (unknown) {
                check_end(c, DOCTOR_WARN, "check the netdev with `ip link show IF` and the driver (dmesg)",
                          "%zu fabric netdev%s up with an MTU the kernel did not report", unknown,
                          unknown == 1 ? " is" : "s are");
                return;
        }
        check_end(c, DOCTOR_OK, NULL, "every fabric netdev that is up has MTU %u", f->mtu_wanted);
}

static bool same_subnet(const char *a, const char *b)
{
        char ab[64], bb[64];
        unsigned pa, pb;
        struct in_addr ia, ib;
        uint32_t mask;

        if (sscanf(a, "%63[^/]/%u", ab, &pa) != 2 || sscanf(b, "%63[^/]/%u", bb, &pb) != 2 || pa != pb ||
            pa > 32)
                return false;
        if (inet_pton(AF_INET, ab, &ia) != 1 || inet_pton(AF_INET, bb, &ib) != 1)
                return false;
        mask = pa ? htonl(~0U << (32 - pa)) : 0;
        return (ia.s_addr & mask) == (ib.s_addr & mask);
}

/* Is netdev one of this end's (its netdev or one of its twins)? */
static bool end_has_netdev(json_object *end, const char *netdev)
{
        json_object *twins = json_object_object_get(end, "twins");

        if (strcmp(json_get_string(end, "netdev", ""), netdev) == 0)
                return true;
        for (size_t i = 0; twins && i < json_object_array_length(twins); i++)
                if (strcmp(json_object_get_string(json_object_array_get_idx(twins, i)), netdev) == 0)
                        return true;
        return false;
}

/* The link of the map that this node's netdev is an end of, and which end is the far one. */
static json_object *link_of(const struct fabric_facts *f, const char *netdev, json_object **far)
{
        json_object *links = f->self_id[0] ? json_object_object_get(f->topology, "links") : NULL;

        for (size_t i = 0; links && i < json_object_array_length(links); i++) {
                json_object *l = json_object_array_get_idx(links, i), *a = json_object_object_get(l, "a"),
                            *b = json_object_object_get(l, "b");

                if (strcmp(json_get_string(a, "node_id", ""), f->self_id) == 0 &&
                    end_has_netdev(a, netdev)) {
                        *far = b;
                        return l;
                }
                if (strcmp(json_get_string(b, "node_id", ""), f->self_id) == 0 &&
                    end_has_netdev(b, netdev)) {
                        *far = a;
                        return l;
                }
        }
        return NULL;
}

/* What a far end is: a node's name, a switch, another host. */
static const char *far_name(json_object *far)
{
        return json_get_string(far, "name",
                               json_get_string(far, "switch", json_get_string(far, "other", "?")));
}

/* The address the plan gives netdev (the map's per twin pair subnets), or NULL. */
static const char *planned_address(json_object *link, json_object *far, const char *netdev, const char *self)
{
        json_object *pairs = json_object_object_get(link, "twin_subnets");
        bool is_a = json_object_object_get(link, "a") != far;

        for (size_t i = 0; self && pairs && i < json_object_array_length(pairs); i++) {
                json_object *p = json_object_array_get_idx(pairs, i);

                if (strcmp(json_get_string(p, is_a ? "a" : "b", ""), netdev) == 0)
                        return json_get_string(json_object_object_get(p, "addresses"), self, NULL);
        }
        return NULL;
}

/* Two ports of this node (not twins) in one IPv4 subnet while the map shows them facing
 * different nodes: the kernel routes by subnet, so traffic for one neighbour may leave through
 * the cable to the other. Adds the evidence and the plan's addresses; the number of clashes. */
static size_t check_ports_sharing_subnet(struct check *c, const struct fabric_facts *f, char *fix,
                                         size_t size)
{
        size_t clashes = 0;

        for (size_t i = 0; i < f->n_addresses; i++) {
                const struct fabric_address *a = &f->addresses[i];
                const struct netif *n = netif_list_find(&f->netifs, a->ifname);
                json_object *far_a = NULL, *link_a;

                if (!n || strchr(a->address, ':') || !(link_a = link_of(f, a->ifname, &far_a)))
                        continue;
                for (size_t k = i + 1; k < f->n_addresses; k++) {
                        const struct fabric_address *b = &f->addresses[k];
                        json_object *far_b = NULL, *link_b;
                        const char *self, *plan_a, *plan_b;

                        if (strcmp(b->ifname, a->ifname) == 0 || strcmp(b->ifname, n->twin) == 0 ||
                            strchr(b->address, ':') || !same_subnet(a->address, b->address) ||
                            !(link_b = link_of(f, b->ifname, &far_b)) ||
                            strcmp(far_name(far_a), far_name(far_b)) == 0)
                                continue;
                        evidence(c, "%s %s faces %s and %s %s faces %s: one subnet for two cables",
                                 a->ifname, a->address, far_name(far_a), b->ifname, b->address,
                                 far_name(far_b));
                        self = json_get_string(far_a == json_object_object_get(link_a, "a")
                                                       ? json_object_object_get(link_a, "b")
                                                       : json_object_object_get(link_a, "a"),
                                               "name", NULL);
                        plan_a = planned_address(link_a, far_a, a->ifname, self);
                        plan_b = planned_address(link_b, far_b, b->ifname, self);
                        if (!clashes)
                                snprintf(fix, size,
                                         "give each cable its own subnet (`sparkc topology --netplan` plans "
                                         "%s %s and %s %s) and remove the shared one: ip addr del %s dev %s",
                                         a->ifname, plan_a ? plan_a : "one", b->ifname,
                                         plan_b ? plan_b : "another", b->address, b->ifname);
                        clashes++;
                }
        }
        return clashes;
}

void doctor_check_twin_subnets(struct check *c, const struct fabric_facts *f)
{
        size_t clashes = 0, shared;
        char fix[MAX_EVIDENCE_LINE] = "";

        check_begin(c, "twin-subnets");
        for (size_t i = 0; i < f->n_addresses; i++) {
                const struct fabric_address *a = &f->addresses[i];
                const struct netif *n = netif_list_find(&f->netifs, a->ifname);

                if (!n || !n->twin[0] || strcmp(a->ifname, n->twin) > 0 || strchr(a->address, ':'))
                        continue;
                for (size_t k = 0; k < f->n_addresses; k++) {
                        const struct fabric_address *b = &f->addresses[k];

                        if (strcmp(b->ifname, n->twin) != 0 || !same_subnet(a->address, b->address))
                                continue;
                        evidence(c, "%s %s and its twin %s %s share a subnet", a->ifname, a->address,
                                 b->ifname, b->address);
                        clashes++;
                }
        }
        if (clashes) {
                check_end(c, DOCTOR_FAIL,
                          "give the second twin an address in another subnet, or none (one address per port "
                          "is "
                          "enough; RDMA uses both twins)",
                          "twins on the same subnet confuse routing and peer discovery");
                return;
        }
        shared = check_ports_sharing_subnet(c, f, fix, sizeof(fix));
        if (shared) {
                check_end(c, DOCTOR_FAIL, fix,
                          "%zu pair%s of ports facing different nodes share a subnet: traffic for one "
                          "neighbour may leave through the other's cable",
                          shared, shared == 1 ? "" : "s");
                return;
        }
        check_end(c, DOCTOR_OK, NULL, "no twins share a subnet");
}

/* A Spark's QSFP port is two PCIe x4 halves, each with its own netdev and RDMA device; traffic
 * on one half alone gets about half of the port, and a common boot service forces the unused
 * half down. */
void doctor_check_twins_up(struct check *c, const struct fabric_facts *f)
{
        size_t half = 0, pairs = 0;

        check_begin(c, "twins-up");
        for (size_t i = 0; i < f->netifs.n; i++) {
                const struct netif *n = &f->netifs.v[i], *twin;

                if (!n->twin[0] || strv_length(n->rdma_devices) == 0)
                        continue;
                twin = netif_list_find(&f->netifs, n->twin);
                if (!twin)
                        continue;
                if (strcmp(n->operstate, "up") != 0) {
                        /* Counted from the side that is up, or not at all. */
                        continue;
                }
                if (strcmp(twin->operstate, "up") == 0) {
                        if (strcmp(n->name, twin->name) < 0) {
                                pairs++;
                                evidence(c, "%s and %s: both up", n->name, twin->name);
                        }
                        continue;
                }
                pairs++;
                half++;
                evidence(c, "%s is up but its twin %s is %s%s", n->name, twin->name,
                         twin->is_admin_up ? "down" : "administratively down",
                         twin->is_admin_up ? " (no link)" : "");
        }
        if (half) {
                check_end(c, DOCTOR_WARN,
                          "bring the twin up with the same MTU (ip link set TWIN up mtu 9000), and take it "
                          "out "
                          "of [fabric] down and of any boot service that forces unused ports down; "
                          "NCCL_IB_HCA "
                          "then lists both twins",
                          "%zu port%s carr%s traffic on one twin only: about half the port's bandwidth",
                          half, half == 1 ? "" : "s", half == 1 ? "ies" : "y");
                return;
        }
        if (pairs == 0) {
                check_end(c, DOCTOR_OK, NULL, "no twin ports to check");
                return;
        }
        check_end(c, DOCTOR_OK, NULL, "both twins up on every port in use");
}

void doctor_check_port_addresses(struct check *c, const struct fabric_facts *f)
{
        size_t without = 0, ports = 0;

        check_begin(c, "port-addresses");
        for (size_t i = 0; i < f->rdma.n; i++) {
                const struct rdma_device *d = &f->rdma.v[i];
                char ip[16], twin_ip[16];

                for (size_t p = 0; p < d->n_ports; p++) {
                        const struct rdma_port *port = &d->ports[p];
                        const struct netif *n = netif_of_port(f, port);
                        bool has = port->netdev[0] && fabric_ipv4_of(f, port->netdev, ip, sizeof(ip));
                        bool twin_has =
                                n && n->twin[0] && fabric_ipv4_of(f, n->twin, twin_ip, sizeof(twin_ip));

                        if (port->state != RDMA_PORT_ACTIVE)
                                continue;
                        /* A physical port needs one address; count each twin pair once. */
                        if (n && n->twin[0] && strcmp(n->name, n->twin) > 0)
                                continue;
                        ports++;
                        if (has || twin_has) {
                                evidence(c, "%s: %s", has ? port->netdev : n->twin, has ? ip : twin_ip);
                                continue;
                        }
                        evidence(c, "%s (%s): no IPv4 address%s%s", port->netdev[0] ? port->netdev : "?",
                                 d->name, n && n->twin[0] ? ", nor on its twin " : "",
                                 n && n->twin[0] ? n->twin : "");
                        without++;
                }
        }
        if (ports == 0) {
                check_end(c, DOCTOR_FAIL, "see ports-active", "no active port to carry traffic");
                return;
        }
        if (without) {
                check_end(c, DOCTOR_WARN,
                          "give one netdev of each cabled port an IPv4 address (netplan or nmcli); NCCL's "
                          "bootstrap "
                          "and RoCE v2 GIDs need it",
                          "%zu active port%s without an address", without, without == 1 ? "" : "s");
                return;
        }
        check_end(c, DOCTOR_OK, NULL, "every active port has an IPv4 address on one of its twins");
}

void doctor_check_roce_gid(struct check *c, const struct fabric_facts *f)
{
        size_t missing = 0, checked = 0;

        check_begin(c, "roce-v2-gid");
        for (size_t i = 0; i < f->rdma.n; i++) {
                const struct rdma_device *d = &f->rdma.v[i];

                for (size_t p = 0; p < d->n_ports; p++) {
                        const struct rdma_port *port = &d->ports[p];
                        char ip[16];
                        int index;

                        if (port->state != RDMA_PORT_ACTIVE || strcmp(port->link_layer, "Ethernet") != 0 ||
                            !port->netdev[0] || !fabric_ipv4_of(f, port->netdev, ip, sizeof(ip)))
                                continue;
                        checked++;
                        index = rdma_port_gid_for_ipv4(port, ip);
                        if (index >= 0) {
                                evidence(c, "%s port %u: RoCE v2 GID %d for %s (%s)", d->name, port->num,
                                         index, ip, port->netdev);
                                continue;
                        }
                        evidence(c, "%s port %u: no RoCE v2 GID for %s (%s)", d->name, port->num, ip,
                                 port->netdev);
                        missing++;
                }
        }
        if (checked == 0) {
                check_end(c, DOCTOR_WARN, "see port-addresses",
                          "no active Ethernet port with an address to check");
                return;
        }
        if (missing) {
                check_end(c, DOCTOR_FAIL,
                          "the RoCE v2 GID appears when the address is on the netdev; check `show_gids`, "
                          "and that the address is IPv4 on the RDMA device's own netdev",
                          "%zu port%s without a RoCE v2 GID for its address: RDMA connections will time out",
                          missing, missing == 1 ? "" : "s");
                return;
        }
        check_end(c, DOCTOR_OK, NULL, "every addressed port has its RoCE v2 IPv4 GID");
}
