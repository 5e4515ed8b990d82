#include "doctor.h"

#include <arpa/inet.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/macro.h"
#include "common/strutil.h"
#include "doctor_internal.h"

#define RDMA_PORT_ACTIVE  4
#define RDMA_PHYS_LINK_UP 5
#define MEMLOCK_ENOUGH    (1ULL << 30) /* RDMA probes and NCCL pin hundreds of MiB */

const char *doctor_status_to_string(enum doctor_status status)
{
        switch (status) {
        case DOCTOR_OK:
                return "ok";
        case DOCTOR_WARN:
                return "warn";
        default:
                return "fail";
        }
}

void check_begin(struct check *c, const char *id)
{
        c->current = json_object_new_object();
        c->evidence = json_object_new_array();
        json_object_object_add(c->current, "id", json_object_new_string(id));
}

void evidence(struct check *c, const char *fmt, ...)
{
        char line[MAX_EVIDENCE_LINE];
        va_list ap;

        va_start(ap, fmt);
        vsnprintf(line, sizeof(line), fmt, ap);
        va_end(ap);
        json_object_array_add(c->evidence, json_object_new_string(line));
}

void check_end(struct check *c, enum doctor_status status, const char *fix, const char *fmt, ...)
{
        char summary[MAX_EVIDENCE_LINE];
        va_list ap;

        va_start(ap, fmt);
        vsnprintf(summary, sizeof(summary), fmt, ap);
        va_end(ap);
        json_object_object_add(c->current, "status",
                               json_object_new_string(doctor_status_to_string(status)));
        json_object_object_add(c->current, "summary", json_object_new_string(summary));
        json_object_object_add(c->current, "evidence", c->evidence);
        json_object_object_add(c->current, "fix",
                               status != DOCTOR_OK && fix ? json_object_new_string(fix) : NULL);
        json_object_array_add(c->checks, c->current);
        if (status > c->worst)
                c->worst = status;
}

static void check_rdma_devices(struct check *c, const struct fabric_facts *f)
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

static void check_ports(struct check *c, const struct fabric_facts *f)
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

static void check_mtu(struct check *c, const struct fabric_facts *f)
{
        size_t wrong = 0, unknown = 0, checked = 0;

        check_begin(c, "mtu");
        for (size_t i = 0; i < f->netifs.n; i++) {
                const struct netif *n = &f->netifs.v[i];
                char mtu[32];

                if (strv_length(n->rdma_devices) == 0)
                        continue;
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
                check_end(c, DOCTOR_FAIL, "see rdma-devices", "no fabric netdev to check");
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

static void check_sysctls(struct check *c, const struct fabric_facts *f)
{
        size_t wrong = 0;

        check_begin(c, "sysctls");
        for (size_t i = 0; i < f->n_sysctls; i++) {
                const struct fabric_sysctl *s = &f->sysctls[i];
                char a[128], w[128];

                evidence(c, "%s = %s (wanted %s)", s->name, s->actual[0] ? s->actual : "unreadable",
                         s->wanted);
                snprintf(a, sizeof(a), "%s", s->actual);
                snprintf(w, sizeof(w), "%s", s->wanted);
                if (strcmp(str_strip(a), str_strip(w)) != 0)
                        wrong++;
        }
        if (f->n_sysctls == 0) {
                check_end(c, DOCTOR_OK, NULL, "no sysctl is managed ([sysctl] is empty)");
                return;
        }
        if (wrong) {
                check_end(c, DOCTOR_WARN,
                          "run sparkd in enforce mode, or: sysctl -w NAME=VALUE (and persist it in "
                          "/etc/sysctl.d)",
                          "%zu of %zu sysctls differ from the config", wrong, f->n_sysctls);
                return;
        }
        check_end(c, DOCTOR_OK, NULL, "%zu sysctls as configured", f->n_sysctls);
}

static void format_memlock(uint64_t v, char *buf, size_t size)
{
        if (v == HOSTFACTS_UNLIMITED)
                snprintf(buf, size, "unlimited");
        else
                snprintf(buf, size, "%llu KiB", (unsigned long long)(v / 1024));
}

static void check_memlock(struct check *c, const struct fabric_facts *f)
{
        char daemon[32], login[32];
        enum doctor_status status = DOCTOR_OK;

        check_begin(c, "memlock");
        format_memlock(f->memlock_daemon, daemon, sizeof(daemon));
        evidence(c, "sparkd: %s", daemon);
        if (f->host.memlock_login) {
                format_memlock(f->host.memlock_login, login, sizeof(login));
                evidence(c, "login sessions: %s (%s)", login, f->host.memlock_login_source);
        } else {
                evidence(c, "login sessions: not set in /etc/security/limits.conf or limits.d (the "
                            "distribution default, often 8 MiB)");
        }
        if (f->memlock_daemon != HOSTFACTS_UNLIMITED && f->memlock_daemon < MEMLOCK_ENOUGH)
                status = DOCTOR_WARN;
        if (f->host.memlock_login != HOSTFACTS_UNLIMITED)
                status = DOCTOR_WARN;
        check_end(c, status,
                  "add '* soft memlock unlimited' and '* hard memlock unlimited' to "
                  "/etc/security/limits.d/90-rdma.conf "
                  "and log in again (RDMA pins memory; NCCL fails to register buffers otherwise)",
                  status == DOCTOR_OK ? "memlock unlimited for sparkd and login sessions"
                                      : "memlock limited: RDMA memory registration may fail");
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

static void check_twin_subnets(struct check *c, const struct fabric_facts *f)
{
        size_t clashes = 0;

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
        check_end(c, DOCTOR_OK, NULL, "no twins share a subnet");
}

/* A Spark's QSFP port is two PCIe x4 halves, each with its own netdev and RDMA device; traffic
 * on one half alone gets about half of the port (seed 001), and seed 002's boot service forces
 * the unused half down. */
static void check_twins_up(struct check *c, const struct fabric_facts *f)
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

static void check_port_addresses(struct check *c, const struct fabric_facts *f)
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

/* A node of a GPU cluster without a usable GPU cannot take its part in a job: that is a failure,
 * even though the facts themselves treat a missing driver as a plain fact. */
static void check_gpu(struct check *c, const struct fabric_facts *f)
{
        const struct hostfacts *h = &f->host;

        check_begin(c, "gpu");
        if (!h->has_nvidia_driver) {
                evidence(c, "no NVIDIA kernel driver (/proc/driver/nvidia/version is missing)");
                check_end(c, DOCTOR_FAIL,
                          "install the NVIDIA GPU driver (the open kernel module, 580 or later, also allows "
                          "DMA-BUF GPU Direct RDMA) and check with nvidia-smi",
                          "no NVIDIA GPU driver: NCCL jobs cannot use a GPU on this node");
                return;
        }
        for (size_t i = 0; i < h->n_gpus; i++)
                evidence(c, "GPU %s at %s", h->gpus[i].model, h->gpus[i].bus);
        if (h->n_gpus == 0) {
                check_end(c, DOCTOR_FAIL, "check nvidia-smi and `dmesg | grep -i nvrm`",
                          "NVIDIA driver %s is loaded but reports no GPU", h->driver_version);
                return;
        }
        check_end(c, DOCTOR_OK, NULL, "%zu GPU%s, driver %s", h->n_gpus, h->n_gpus == 1 ? "" : "s",
                  h->driver_version);
}

static void check_gdr_risk(struct check *c, const struct fabric_facts *f)
{
        const struct hostfacts *h = &f->host;

        check_begin(c, "gpu-direct");
        if (!h->has_nvidia_driver) {
                evidence(c, "no NVIDIA driver loaded");
                check_end(c, DOCTOR_OK, NULL, "no NVIDIA GPU driver: nothing to risk");
                return;
        }
        evidence(c, "NVIDIA driver %s (%s kernel module)", h->driver_version,
                 h->is_open_kernel_module ? "open" : "proprietary");
        for (size_t i = 0; i < h->n_gpus; i++)
                evidence(c, "GPU %s at %s%s", h->gpus[i].model, h->gpus[i].bus,
                         h->gpus[i].is_unified_memory ? ": unified memory" : "");
        evidence(c, "nvidia_peermem %s", h->has_peermem ? "loaded" : "not loaded");
        evidence(c, "DMA-BUF: %s", h->dmabuf_reason);
        if (h->has_unified_memory && h->has_peermem) {
                check_end(c, DOCTOR_FAIL,
                          "unload it (modprobe -r nvidia_peermem), keep it out (echo 'blacklist "
                          "nvidia_peermem' > "
                          "/etc/modprobe.d/sparkd-no-peermem.conf), and run jobs with `sparkc env` (safe "
                          "mode, or "
                          "dmabuf with the open driver 580+)",
                          "nvidia_peermem is loaded on a unified-memory GPU: NCCL init hangs forever with "
                          "GPU Direct "
                          "RDMA on");
                return;
        }
        check_end(c, DOCTOR_OK, NULL, "%s",
                  h->is_dmabuf_possible
                          ? "GPU Direct RDMA possible through DMA-BUF (sparkc env --mode dmabuf)"
                          : "GPU Direct RDMA off (safe mode); no peermem risk");
}

static void check_roce_gid(struct check *c, const struct fabric_facts *f)
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

static void check_nccl(struct check *c, const struct fabric_facts *f)
{
        check_begin(c, "nccl");
        if (!f->host.has_nccl) {
                check_end(c, DOCTOR_WARN, "install NCCL (libnccl2) for GPU jobs and the nccl probe",
                          "NCCL library not found");
                return;
        }
        evidence(c, "%s", f->host.nccl_path);
        check_end(c, DOCTOR_OK, NULL, "NCCL %s",
                  f->host.nccl_version[0] ? f->host.nccl_version : "(version unknown)");
}

static const char *jstr(json_object *o, const char *key, const char *fallback)
{
        json_object *v;

        return json_object_object_get_ex(o, key, &v) && v && json_object_is_type(v, json_type_string)
                       ? json_object_get_string(v)
                       : fallback;
}

static void check_peers(struct check *c, const struct fabric_facts *f)
{
        json_object *list = NULL, *v;
        size_t up = 0, rejected = 0, down = 0, mismatched = 0, n;

        check_begin(c, "peers");
        if (!json_object_object_get_ex(f->peers, "peering", &v) || !json_object_get_boolean(v)) {
                check_end(c, DOCTOR_FAIL,
                          "make a key once (sparkc keygen), copy /etc/sparkd/cluster.key to every node "
                          "(mode 600), "
                          "then systemctl reload sparkd",
                          "peering is off: no usable cluster key (see the journal: journalctl -u sparkd)");
                return;
        }
        json_object_object_get_ex(f->peers, "peers", &list);
        n = list ? json_object_array_length(list) : 0;
        for (size_t i = 0; i < n; i++) {
                json_object *p = json_object_array_get_idx(list, i), *mtu = NULL, *addrs = NULL;
                const char *state = jstr(p, "state", "?");
                const char *name = jstr(p, "name", jstr(p, "static", "?"));

                json_object_object_get_ex(p, "mtu", &mtu);
                json_object_object_get_ex(p, "addresses", &addrs);
                if (strcmp(name, "?") == 0 && addrs && json_object_array_length(addrs))
                        name = json_object_get_string(json_object_array_get_idx(addrs, 0));
                if (strcmp(state, "self") == 0)
                        continue;
                up += strcmp(state, "up") == 0;
                rejected += strcmp(state, "rejected") == 0;
                down += strcmp(state, "up") != 0 && strcmp(state, "rejected") != 0;
                if (mtu && json_object_object_get_ex(mtu, "mismatch", &v) && json_object_get_boolean(v)) {
                        json_object *l, *r;

                        json_object_object_get_ex(mtu, "local", &l);
                        json_object_object_get_ex(mtu, "peer", &r);
                        mismatched++;
                        evidence(c, "%s: %s, MTU %d here but %d at its end", name, state,
                                 json_object_get_int(l), json_object_get_int(r));
                        continue;
                }
                evidence(c, "%s: %s%s%s", name, state, jstr(p, "error", NULL) ? ": " : "",
                         jstr(p, "error", ""));
        }
        if (n == 0) {
                check_end(c, DOCTOR_WARN,
                          "check that avahi-daemon runs on every node, or list the others in [peers] static",
                          "no peers found");
                return;
        }
        if (rejected) {
                check_end(c, DOCTOR_FAIL,
                          "copy the same /etc/sparkd/cluster.key to every node, then reload sparkd",
                          "%zu peer%s rejected: the cluster key differs", rejected,
                          rejected == 1 ? "" : "s");
                return;
        }
        if (mismatched) {
                check_end(c, DOCTOR_FAIL,
                          "set the same MTU at both ends of each cable ([fabric] mtu on both nodes); the "
                          "smaller one "
                          "drops larger frames",
                          "MTU differs at the two ends of %zu cable%s", mismatched,
                          mismatched == 1 ? "" : "s");
                return;
        }
        if (down) {
                check_end(c, DOCTOR_WARN,
                          "check the cable and the other node's sparkd (sparkc status there)",
                          "%zu of %zu peers not up", down, up + down);
                return;
        }
        check_end(c, DOCTOR_OK, NULL, "%zu peer%s up, authenticated, MTU equal at both ends", up,
                  up == 1 ? "" : "s");
}

json_object *doctor_run(const struct fabric_facts *f)
{
        struct check c = { .checks = json_object_new_array(), .worst = DOCTOR_OK };
        json_object *o = json_object_new_object();

        check_rdma_devices(&c, f);
        check_ports(&c, f);
        check_mtu(&c, f);
        doctor_check_profiles(&c, f);
        check_sysctls(&c, f);
        check_memlock(&c, f);
        check_twin_subnets(&c, f);
        check_twins_up(&c, f);
        check_port_addresses(&c, f);
        check_gpu(&c, f);
        check_gdr_risk(&c, f);
        check_roce_gid(&c, f);
        check_nccl(&c, f);
        doctor_check_rails(&c, f);
        if (f->peers)
                check_peers(&c, f);
        json_object_object_add(o, "status", json_object_new_string(doctor_status_to_string(c.worst)));
        json_object_object_add(o, "checks", c.checks);
        return o;
}
