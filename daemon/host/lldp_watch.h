/*
 * The LLDP watch: lldpd's view of this node's cables, read through liblldpctl on the daemon's
 * loop without ever blocking. Two connections to lldpd's control socket: one asks for the local
 * chassis and every interface's neighbours, the other subscribes to lldpd's neighbour changes,
 * and each change (and every link change the daemon passes on) reads the table again. When the
 * socket is not there or lldpd goes away, the table says "absent" and the watch sleeps until
 * the socket is made again (inotify on its folder; where that cannot be watched, a look every
 * 60 s), then connects, retrying a refusal with backoff (1 s doubling to 10 s), so an lldpd
 * started or restarted later is picked up at once. Other errors are retried with that backoff.
 * liblldpctl is loaded when the watch first connects (lldpctl_lib.h); while it cannot be, the
 * table says LLDP_NOT_INSTALLED and the watch looks again when the socket appears and every 60 s.
 */
#pragma once

#include <event2/event.h>

#include "lldp_table.h"

struct lldp_watch;

int lldp_watch_new(struct event_base *base, struct lldp_watch **ret);
void lldp_watch_free(struct lldp_watch *w);
/* Connects to lldpd's control socket at path (again when the path changed). */
int lldp_watch_configure(struct lldp_watch *w, const char *socket_path);
/* Reads the table again soon (a link came, went or moved). */
void lldp_watch_refresh(struct lldp_watch *w);
/* The table as last read; borrowed until the next turn of the loop. */
const struct lldp_table *lldp_watch_table(struct lldp_watch *w);
/* fn runs after the table (status, chassis or any neighbour) changed. */
void lldp_watch_set_change_hook(struct lldp_watch *w, void (*fn)(void *userdata), void *userdata);
