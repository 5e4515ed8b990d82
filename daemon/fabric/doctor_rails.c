/*
 * The doctor's checks of each rail's hardware links: the PCIe link of every RDMA device against
 * what the function can do, the Ethernet speed of its netdev against what a Spark rail
 * negotiates, and the PCIe AER counters. A rail that trained below its links moves less than
 * its Ethernet speed says, and no setting fixes it; rising fatal AER counts are a hardware
 * fault for support, not a state a reboot clears.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "doctor_checks.h"
#include "inventory/pcie.h"

#define RAIL_RESEAT_FIX                                                                                     \
        "reboot both nodes with the final cabling; if the link stays low, shut both down, remove AC power " \
        "for at least 60 s and reconnect without moving the cables; if it still trains low, collect a bug " \
        "report (nvidia-bug-report.sh, sos report) for support"

/* A device whose link is worth judging: a PCI function whose link sysfs shows. */
static bool has_pcie(const struct rdma_device *d)
{
        return d->pci[0] && d->pcie.is_known;
}

static void check_pcie_link(struct check *c, const struct fabric_facts *f)
{
        size_t low = 0, known = 0;

        check_begin(c, "pcie-link");
        for (size_t i = 0; i < f->rdma.n; i++) {
                const struct rdma_device *d = &f->rdma.v[i];
                char cur[32], max[32];

                if (!has_pcie(d))
                        continue;
                known++;
                pcie_link_format(d->pcie.speed_gts, d->pcie.width, cur, sizeof(cur));
                pcie_link_format(d->pcie.max_speed_gts, d->pcie.max_width, max, sizeof(max));
                if (pcie_link_is_degraded(&d->pcie)) {
                        low++;
                        evidence(c, "%s (%s): PCIe link at %s, below its maximum %s", d->name, d->pci, cur,
                                 max);
                } else {
                        evidence(c, "%s (%s): PCIe link at %s (its maximum)", d->name, d->pci, cur);
                }
        }
        if (known == 0) {
                check_end(c, DOCTOR_OK, NULL, "no RDMA device shows its PCIe link in sysfs");
                return;
        }
        if (low) {
                check_end(c, DOCTOR_FAIL, RAIL_RESEAT_FIX,
                          "%zu of %zu RDMA device%s below their PCIe link maximum", low, known,
                          known == 1 ? "" : "s");
                return;
        }
        check_end(c, DOCTOR_OK, NULL, "every RDMA device's PCIe link at its maximum");
}

static void check_ethernet_speed(struct check *c, const struct fabric_facts *f)
{
        size_t low = 0, up = 0;

        check_begin(c, "ethernet-speed");
        for (size_t i = 0; i < f->rdma.n; i++) {
                const struct rdma_device *d = &f->rdma.v[i];
                /* Only a Spark rail says what its netdev should negotiate: a function that can do
                 * 32 GT/s x4 with a twin in the other PCI domain behind the same QSFP port. */
                bool is_spark = pcie_link_is_spark_capable(&d->pcie) && d->twin[0];

                for (size_t k = 0; k < d->n_ports; k++) {
                        const struct rdma_port *p = &d->ports[k];

                        if (!p->netdev[0] || p->netdev_speed_mbps <= 0)
                                continue; /* no link: ports-active says so */
                        up++;
                        if (is_spark && p->netdev_speed_mbps < SPARK_RAIL_ETHERNET_MBPS) {
                                low++;
                                evidence(c,
                                         "%s (%s): Ethernet at %" PRId64
                                         " Gb/s, below the %d Gb/s of a Spark rail",
                                         p->netdev, d->name, p->netdev_speed_mbps / 1000,
                                         SPARK_RAIL_ETHERNET_MBPS / 1000);
                        } else {
                                evidence(c, "%s (%s): Ethernet at %" PRId64 " Gb/s%s", p->netdev, d->name,
                                         p->netdev_speed_mbps / 1000,
                                         is_spark ? " (a Spark rail's speed)" : "");
                        }
                }
        }
        if (up == 0) {
                check_end(c, DOCTOR_OK, NULL, "no RDMA netdev with a link to check");
                return;
        }
        if (low) {
                check_end(c, DOCTOR_FAIL,
                          "check that both ends use a QSFP cable rated for 200 Gb/s and that no side forces "
                          "the speed (ethtool IF); then " RAIL_RESEAT_FIX,
                          "%zu of %zu rail netdev%s below their Ethernet speed", low, up,
                          up == 1 ? "" : "s");
                return;
        }
        check_end(c, DOCTOR_OK, NULL, "every rail netdev at its Ethernet speed");
}

static void check_aer(struct check *c, const struct fabric_facts *f)
{
        size_t rising = 0, since_boot = 0, known = 0;

        check_begin(c, "pcie-aer");
        for (size_t i = 0; i < f->rdma.n; i++) {
                const struct pcie_link *l = &f->rdma.v[i].pcie;
                const char *name = f->rdma.v[i].name;

                if (!l->has_aer)
                        continue;
                known++;
                if (l->aer_fatal_since_start > 0) {
                        rising++;
                        evidence(c,
                                 "%s: %" PRIu64 " fatal AER errors since boot, %" PRId64
                                 " of them since sparkd's first look (%" PRId64 " since its previous one)",
                                 name, l->aer_fatal, l->aer_fatal_since_start,
                                 l->aer_fatal_since_last > 0 ? l->aer_fatal_since_last : 0);
                } else if (l->aer_fatal > 0) {
                        since_boot++;
                        evidence(c, "%s: %" PRIu64 " fatal AER errors since boot, %s", name, l->aer_fatal,
                                 l->aer_fatal_since_start < 0 ? "no earlier count to compare with"
                                                              : "none since sparkd's first look");
                } else {
                        evidence(c, "%s: no fatal AER errors, %" PRIu64 " non-fatal", name, l->aer_nonfatal);
                }
        }
        if (known == 0) {
                check_end(c, DOCTOR_OK, NULL, "the kernel shows no AER counters for the RDMA devices");
                return;
        }
        if (rising) {
                check_end(c, DOCTOR_FAIL,
                          "escalate: repeated fatal PCIe errors are a hardware fault, not the degraded "
                          "initialization a reboot clears; collect a bug report (nvidia-bug-report.sh, sos "
                          "report, dmesg) and contact support",
                          "fatal PCIe AER errors rising on %zu RDMA device%s", rising,
                          rising == 1 ? "" : "s");
                return;
        }
        if (since_boot) {
                check_end(c, DOCTOR_WARN,
                          "watch `sparkc doctor`: the check fails if the fatal count rises; dmesg | grep -i "
                          "aer "
                          "shows when they happened",
                          "fatal PCIe AER errors since boot on %zu RDMA device%s, not rising", since_boot,
                          since_boot == 1 ? "" : "s");
                return;
        }
        check_end(c, DOCTOR_OK, NULL, "no fatal PCIe AER errors");
}

static const char *jstr(json_object *o, const char *key)
{
        json_object *v;

        return json_object_object_get_ex(o, key, &v) && v ? json_object_get_string(v) : "";
}

/* What the newest tcp or rdma probe to each peer measured on the rails, as the probe judged it. */
static void check_rail_bandwidth(struct check *c, const struct fabric_facts *f)
{
        size_t stale = 0, degraded = 0, n = json_object_array_length(f->rail_verdicts);
        const char *first_stale = NULL, *first_degraded = NULL;
        json_object *recovery = NULL;

        check_begin(c, "rail-bandwidth");
        for (size_t i = 0; i < n; i++) {
                json_object *e = json_object_array_get_idx(f->rail_verdicts, i), *d, *rails = NULL;
                const char *verdict;

                if (!json_object_object_get_ex(e, "diagnosis", &d))
                        continue;
                verdict = jstr(d, "verdict");
                json_object_object_get_ex(d, "rails", &rails);
                for (size_t k = 0; rails && k < json_object_array_length(rails); k++)
                        evidence(c, "%s probe to %s at %s: %s", jstr(e, "kind"), jstr(e, "peer"),
                                 jstr(e, "started_at"),
                                 jstr(json_object_array_get_idx(rails, k), "summary"));
                if (strcmp(verdict, "stale-initialization") == 0) {
                        stale++;
                        first_stale = first_stale ? first_stale : jstr(d, "summary");
                        if (!recovery)
                                json_object_object_get_ex(d, "recovery", &recovery);
                } else if (strcmp(verdict, "ok") != 0) {
                        degraded++;
                        first_degraded = first_degraded ? first_degraded : jstr(d, "summary");
                }
        }
        if (stale) {
                char fix[MAX_EVIDENCE_LINE] = "";

                for (size_t i = 0; recovery && i < json_object_array_length(recovery); i++) {
                        size_t used = strlen(fix);

                        snprintf(fix + used, sizeof(fix) - used, "%s%zu. %s", i ? "; " : "", i + 1,
                                 json_object_get_string(json_object_array_get_idx(recovery, i)));
                }
                check_end(c, DOCTOR_FAIL, fix, "%s", first_stale);
                return;
        }
        if (degraded) {
                check_end(
                        c, DOCTOR_WARN,
                        "see pcie-link and ethernet-speed for this node's links, and `sparkc doctor` on the "
                        "peer for its end; measure the rail with `sparkc probe --peer PEER --kind rdma`",
                        "%s", first_degraded);
                return;
        }
        check_end(c, DOCTOR_OK, NULL,
                  n ? "every rail at or above its healthy line in the newest probes"
                    : "no tcp or rdma probe has measured the rails yet");
}

void doctor_check_rails(struct check *c, const struct fabric_facts *f)
{
        check_pcie_link(c, f);
        check_ethernet_speed(c, f);
        check_aer(c, f);
        if (f->rail_verdicts)
                check_rail_bandwidth(c, f);
}
