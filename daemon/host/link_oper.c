#include "link_oper.h"

#include <stdio.h>
#include <time.h>

#include "common/macro.h"
#include "daemon/base/event.h"

static uint64_t now_usec(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t)ts.tv_sec * 1000000ULL + (uint64_t)ts.tv_nsec / 1000ULL;
}

static void link_arm_stable_timer(struct link *l)
{
        uint64_t at = flap_stable_at(&l->flap), now = now_usec();
        uint64_t wait = at > now ? at - now : 0;
        struct timeval tv = { .tv_sec = (time_t)(wait / 1000000), .tv_usec = (suseconds_t)(wait % 1000000) };

        if (at)
                evtimer_add(l->stable_timer, &tv);
}

void link_on_stable_timer(evutil_socket_t fd, short what, void *userdata)
{
        struct link *l = userdata;
        unsigned changes = l->flap.changes_while_flapping;
        char changes_s[16], window_s[16];

        if (!flap_check_stable(&l->flap, now_usec())) {
                link_arm_stable_timer(l);
                return;
        }
        snprintf(changes_s, sizeof(changes_s), "%u", changes);
        snprintf(window_s, sizeof(window_s), "%llu", (unsigned long long)(l->flap.window_usec / 1000000));
        {
                struct log_field f[] = { { "iface", l->name },
                                         { "changes", changes_s },
                                         { "window_sec", window_s },
                                         { "state", l->is_oper_up ? "up" : "down" } };

                event_emit(EVENT_LINK_STABLE, f, ARRAY_SIZE(f),
                           "%s is stable again after %u changes; no change for %s s; it is %s", l->name,
                           changes, window_s, l->is_oper_up ? "up" : "down");
        }
}

void link_note_oper_change(struct link *l, const struct netlink_link *now, unsigned changes)
{
        bool was_up = l->is_oper_up, is_up = netlink_link_is_oper_up(now);
        enum flap_verdict verdict = FLAP_QUIET;
        uint64_t t = now_usec();

        for (unsigned i = 0; i < changes; i++) {
                enum flap_verdict v = flap_record(&l->flap, t);

                if (v == FLAP_STARTED || (v == FLAP_SUPPRESSED && verdict != FLAP_STARTED))
                        verdict = v;
        }
        l->is_oper_up = is_up;
        l->last_change = time(NULL);

        if (verdict == FLAP_STARTED) {
                char changes_s[16], window_s[16];

                snprintf(changes_s, sizeof(changes_s), "%u", l->flap.changes_while_flapping);
                snprintf(window_s, sizeof(window_s), "%llu",
                         (unsigned long long)(l->flap.window_usec / 1000000));
                {
                        struct log_field f[] = { { "iface", l->name },
                                                 { "changes", changes_s },
                                                 { "window_sec", window_s },
                                                 { "state", is_up ? "up" : "down" } };

                        event_emit(EVENT_LINK_FLAPPING, f, ARRAY_SIZE(f),
                                   "%s is flapping: %s state changes within %s s; further changes are "
                                   "counted, not "
                                   "logged, until it is calm for %s s",
                                   l->name, changes_s, window_s, window_s);
                }
        } else if (verdict == FLAP_QUIET && was_up != is_up) {
                const char *old = netlink_operstate_to_string(l->seen.operstate);
                const char *new = netlink_operstate_to_string(now->operstate);
                struct log_field f[] = { { "iface", l->name }, { "old", old }, { "new", new } };

                event_emit(is_up ? EVENT_LINK_UP : EVENT_LINK_DOWN, f, ARRAY_SIZE(f), "%s is %s (was %s)",
                           l->name, is_up ? "up" : "down", old);
        }
        link_arm_stable_timer(l);
}
