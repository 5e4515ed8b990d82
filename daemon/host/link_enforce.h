/*
 * A link kept as configured: a fabric link gets the configured MTU and a link listed in [fabric]
 * down stays administratively down; in audit mode drift is only reported. Each correction and
 * each drift is an event, each failure logged once.
 */
#pragma once

#include <stdbool.h>

#include "daemon/config/conf.h"
#include "link_state.h"

/* What the config wants of links, and the netlink channel to make it so. */
struct link_policy {
        struct netlink *nl;
        enum enforce_mode mode;
        unsigned mtu;
};

/* Re-reads a link that seems to have drifted and corrects it; true when a correction was made
 * (the link's counters changed). */
bool link_enforce(const struct link_policy *p, struct link *l);
