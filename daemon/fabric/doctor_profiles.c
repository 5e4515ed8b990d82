/*
 * The doctor's mtu-profile check: the MTU that NetworkManager or netplan will apply to each fabric
 * netdev on its next reconnect (netprofile.c), against the MTU sparkd keeps. A profile that
 * disagrees undoes sparkd's MTU whenever the link comes back, until sparkd sets it again; the fix
 * is the command that makes the profile agree. sparkd itself never changes a profile.
 */
#include <stdio.h>
#include <string.h>

#include "common/strutil.h"
#include "doctor_checks.h"
#include "inventory/netprofile.h"

#define FIX_MAX 1024

static const char *manager_name(const struct netprofile *p)
{
        return p->manager == NETPROFILE_NETWORKMANAGER ? "NetworkManager" : "netplan";
}

/* name as one shell word: as it is when that is safe, else in single quotes. */
static void shell_word(const char *name, char *buf, size_t size)
{
        size_t n = 0;

        if (name[0] &&
            strspn(name, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-+:@") ==
                    strlen(name)) {
                snprintf(buf, size, "%s", name);
                return;
        }
        buf[n++] = '\'';
        for (const char *s = name; *s && n + 5 < size; s++) {
                if (*s == '\'') {
                        memcpy(buf + n, "'\\''", 4);
                        n += 4;
                } else {
                        buf[n++] = *s;
                }
        }
        buf[n++] = '\'';
        buf[n] = '\0';
}

static void append_fix(char *fix, const struct netprofile *p, unsigned mtu)
{
        size_t used = strlen(fix);
        char word[300];

        if (used)
                used += (size_t)snprintf(fix + used, FIX_MAX - used, "; ");
        if (used >= FIX_MAX)
                return;
        if (p->manager == NETPROFILE_NETWORKMANAGER) {
                shell_word(p->name, word, sizeof(word));
                snprintf(fix + used, FIX_MAX - used, "nmcli connection modify %s 802-3-ethernet.mtu %u",
                         word, mtu);
        } else {
                snprintf(fix + used, FIX_MAX - used,
                         "set network.ethernets.%s.mtu: %u in %s (line %u), then run netplan apply", p->name,
                         mtu, p->file, p->line);
        }
}

static bool is_fabric(const struct netif *n)
{
        return strv_length(n->rdma_devices) > 0 || n->is_configured;
}

static void profile_evidence(struct check *c, const char *ifname, const struct netprofile *p)
{
        char mtu[64], renderer[48] = "";

        if (p->mtu)
                snprintf(mtu, sizeof(mtu), "applies MTU %u on reconnect", p->mtu);
        else
                snprintf(mtu, sizeof(mtu), "sets no MTU (the kernel's stays)");
        if (p->manager == NETPROFILE_NETPLAN)
                snprintf(renderer, sizeof(renderer), " (renderer %s)", p->renderer);
        evidence(c, "%s: %s profile \"%s\"%s, %s:%u, %s", ifname, manager_name(p), p->name, renderer,
                 p->file, p->line, mtu);
}

void doctor_check_profiles(struct check *c, const struct fabric_facts *f)
{
        const struct netprofiles *ps = &f->profiles;
        size_t wrong = 0, matched = 0;
        char fix[FIX_MAX] = "";

        check_begin(c, "mtu-profile");
        for (size_t i = 0; i < f->netifs.n; i++) {
                const struct netif *n = &f->netifs.v[i];

                if (!is_fabric(n) || !n->is_admin_up)
                        continue;
                for (size_t k = 0; k < ps->n; k++) {
                        const struct netprofile *p = &ps->v[k];

                        if (!netprofile_matches(p, n->name, n->mac))
                                continue;
                        matched++;
                        profile_evidence(c, n->name, p);
                        if (p->mtu && p->mtu != f->mtu_wanted) {
                                wrong++;
                                append_fix(fix, p, f->mtu_wanted);
                        }
                }
        }
        for (size_t k = 0; k < ps->n; k++) {
                const struct netprofile *p = &ps->v[k];

                if (p->other_match[0] && p->mtu && p->mtu != f->mtu_wanted)
                        evidence(c, "%s profile \"%s\" (%s) matches by %s and applies MTU %u: not compared",
                                 manager_name(p), p->name, p->file, p->other_match, p->mtu);
        }
        for (char **w = ps->warnings; w && *w; w++)
                evidence(c, "%s", *w);
        for (char **u = ps->unreadable; u && *u; u++)
                evidence(c, "%s: sparkd may not read it (root's only), so it is not checked", *u);
        if (wrong) {
                check_end(c, DOCTOR_WARN, fix,
                          "%zu profile%s will set a fabric netdev's MTU other than %u on reconnect", wrong,
                          wrong == 1 ? "" : "s", f->mtu_wanted);
                return;
        }
        if (ps->warnings) {
                check_end(c, DOCTOR_WARN,
                          "correct the file at the line shown (NetworkManager or netplan will not read it "
                          "either)",
                          "%zu network profile file%s could not be read", strv_length(ps->warnings),
                          strv_length(ps->warnings) == 1 ? "" : "s");
                return;
        }
        if (ps->unreadable) {
                check_end(c, DOCTOR_OK, NULL,
                          "%zu network profile file%s not checked: only root may read them (see "
                          "the README to let sparkd read them)",
                          strv_length(ps->unreadable), strv_length(ps->unreadable) == 1 ? " is" : "s are");
                return;
        }
        if (matched == 0) {
                check_end(c, DOCTOR_OK, NULL,
                          "no NetworkManager or netplan profile configures a fabric netdev that is up");
                return;
        }
        check_end(c, DOCTOR_OK, NULL, "no profile of a fabric netdev sets an MTU other than %u",
                  f->mtu_wanted);
}
