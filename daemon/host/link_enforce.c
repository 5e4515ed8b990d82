#include "link_enforce.h"

#include <net/if.h>
#include <stdio.h>
#include <string.h>

#include "common/macro.h"
#include "daemon/base/event.h"
#include "daemon/base/log.h"
#include "netlink.h"

static bool link_enforce_mtu(const struct link_policy *p, struct link *l)
{
        char old_s[16], new_s[16];
        unsigned old = l->seen.mtu;
        int r;

        if (!l->is_fabric || l->want_down || old == p->mtu) {
                l->mtu_drift_logged = 0;
                l->mtu_error = 0;
                return false;
        }
        snprintf(old_s, sizeof(old_s), "%u", old);
        snprintf(new_s, sizeof(new_s), "%u", p->mtu);
        if (p->mode == ENFORCE_MODE_AUDIT) {
                struct log_field f[] = { { "iface", l->name }, { "old", old_s }, { "new", new_s } };

                if (l->mtu_drift_logged != old)
                        event_emit(EVENT_MTU_DRIFT, f, ARRAY_SIZE(f),
                                   "%s has MTU %u, config wants %u (audit mode)", l->name, old, p->mtu);
                l->mtu_drift_logged = old;
                return false;
        }
        r = netlink_set_mtu(p->nl, l->ifindex, p->mtu);
        if (r < 0) {
                if (r != l->mtu_error)
                        log_error("%s has MTU %u, config wants %u, and setting it failed: %s", l->name, old,
                                  p->mtu, strerror(-r));
                l->mtu_error = r;
                return false;
        }
        l->mtu_error = 0;
        l->corrections++;
        /* The kernel's notification of the new MTU updates l->seen; until then assume it took. */
        l->seen.mtu = p->mtu;
        {
                struct log_field f[] = { { "iface", l->name }, { "old", old_s }, { "new", new_s } };

                event_emit(EVENT_MTU_CORRECTED, f, ARRAY_SIZE(f), "%s had MTU %u, set back to %u", l->name,
                           old, p->mtu);
        }
        return true;
}

static bool link_enforce_admin_state(const struct link_policy *p, struct link *l)
{
        bool is_up = l->seen.flags & IFF_UP;
        int r;

        if (!l->want_down || !is_up) {
                l->admin_drift_logged = false;
                l->admin_error = 0;
                return false;
        }
        if (p->mode == ENFORCE_MODE_AUDIT) {
                struct log_field f[] = { { "iface", l->name }, { "old", "up" }, { "new", "down" } };

                if (!l->admin_drift_logged)
                        event_emit(EVENT_ADMIN_STATE_DRIFT, f, ARRAY_SIZE(f),
                                   "%s is up, config keeps it down (audit mode)", l->name);
                l->admin_drift_logged = true;
                return false;
        }
        r = netlink_set_admin_up(p->nl, l->ifindex, false);
        if (r < 0) {
                if (r != l->admin_error)
                        log_error("%s is up, config keeps it down, and setting it down failed: %s", l->name,
                                  strerror(-r));
                l->admin_error = r;
                return false;
        }
        l->admin_error = 0;
        l->corrections++;
        l->seen.flags &= ~(unsigned)IFF_UP;
        {
                struct log_field f[] = { { "iface", l->name }, { "old", "up" }, { "new", "down" } };

                event_emit(EVENT_ADMIN_STATE_CORRECTED, f, ARRAY_SIZE(f),
                           "%s was brought up; set down again (listed in [fabric] down)", l->name);
        }
        return true;
}

static bool link_needs_correction(const struct link_policy *p, const struct link *l)
{
        bool mtu_wrong = l->is_fabric && !l->want_down && l->seen.mtu != p->mtu;
        bool admin_wrong = l->want_down && (l->seen.flags & IFF_UP);

        return mtu_wrong || admin_wrong;
}

bool link_enforce(const struct link_policy *p, struct link *l)
{
        struct netlink_link fresh;
        bool corrected;

        /* Drift seen in a queued notification may already be gone (or corrected by us). */
        if (link_needs_correction(p, l) && netlink_query_link(p->nl, l->ifindex, &fresh) == 0) {
                l->seen.mtu = fresh.mtu;
                l->seen.flags = fresh.flags;
        }
        corrected = link_enforce_admin_state(p, l);
        if (link_enforce_mtu(p, l))
                corrected = true;
        return corrected;
}
