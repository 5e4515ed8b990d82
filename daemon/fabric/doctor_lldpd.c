/*
 * The doctor's check of lldpd: it names the node or switch port at the far end of every cable
 * (the neighbour table and the cluster's map rest on it). Without it sparkd falls back to what
 * the peer channel shows, which sees only other sparkd nodes on addressed ports, never a switch.
 * lldpd is the owner's choice (sparkd loads its library only where it is installed): the fix
 * says whether to install it or only to start it.
 */
#include <errno.h>
#include <string.h>

#include "doctor_checks.h"

void doctor_check_lldpd(struct check *c, const struct fabric_facts *f)
{
        check_begin(c, "lldpd");
        if (strcmp(f->lldpd_status, "running") == 0) {
                check_end(c, DOCTOR_OK, NULL, "lldpd runs: neighbours come from LLDP");
                return;
        }
        if (strncmp(f->lldpd_status, "not installed: ", 15) == 0) {
                evidence(c, "%s", f->lldpd_status + 15);
                check_end(c, DOCTOR_WARN, "apt install lldpd && systemctl enable --now lldpd",
                          "lldpd is not installed: the far end of each cable is known only from the peer "
                          "channel (sparkd nodes on addressed ports, no switches, no miswired ports)");
                return;
        }
        if (strcmp(f->lldpd_status, "absent") == 0) {
                evidence(c, "no lldpd answers on its control socket ([fabric] lldpd_socket)");
                check_end(c, DOCTOR_WARN, "systemctl enable --now lldpd",
                          "lldpd is not running: the far end of each cable is known only from the peer "
                          "channel (sparkd nodes on addressed ports, no switches, no miswired ports)");
                return;
        }
        evidence(c, "%s", f->lldpd_status);
        if (strstr(f->lldpd_status, strerror(EACCES))) {
                check_end(c, DOCTOR_WARN, "usermod -a -G _lldpd sparkd && systemctl restart sparkd",
                          "sparkd may not open lldpd's socket (it is for the group _lldpd): neighbours "
                          "come from the peer channel only");
                return;
        }
        check_end(c, DOCTOR_WARN, "check lldpd (systemctl status lldpd; lldpcli show neighbors)",
                  "lldpd cannot be read: neighbours come from the peer channel only");
}
