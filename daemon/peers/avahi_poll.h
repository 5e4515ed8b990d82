/*
 * An AvahiPoll on the daemon's libevent loop: the Avahi client's D-Bus socket and timers become
 * ordinary events of the one event_base (Debian does not package upstream's avahi-libevent).
 */
#pragma once

#include <avahi-common/watch.h>
#include <event2/event.h>

struct avahi_poll;

int avahi_poll_new(struct event_base *base, struct avahi_poll **ret);
/* Every watch and timeout must be gone first: free the Avahi client before its poll. */
void avahi_poll_free(struct avahi_poll *p);
/* What avahi_client_new() takes; valid as long as p. */
const AvahiPoll *avahi_poll_get(struct avahi_poll *p);
/* Watches and timeouts not yet freed, for tests and leak checks. */
unsigned avahi_poll_live(const struct avahi_poll *p);
