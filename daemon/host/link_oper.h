/*
 * A fabric link's oper-state changes as events: up and down, or, when they come too fast, one
 * link-flapping alert and later one link-stable event once it has been calm for the window.
 */
#pragma once

#include <event2/event.h>

#include "link_state.h"

/* Reports a change of oper state (changes of them since the last report), or folds it into a
 * flapping alert. */
void link_note_oper_change(struct link *l, const struct netlink_link *now, unsigned changes);
/* The callback of a link's stable_timer (userdata: the link). */
void link_on_stable_timer(evutil_socket_t fd, short what, void *userdata);
