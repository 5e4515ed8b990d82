/*
 * The peers' service instances as Avahi browses them (one per interface a peer is seen on):
 * each is resolved for its TXT record, again later when resolving fails, and found() and lost()
 * are called per node, not per instance.
 */
#pragma once

#include <avahi-common/address.h>
#include <stdbool.h>

struct discovery;

/* A service instance the browser reports: resolved, and found() once its record is known. */
void discovery_browsing_add(struct discovery *d, AvahiIfIndex ifindex, AvahiProtocol protocol,
                            const char *name, const char *domain);
/* One that went away: lost() when it was its node's last. */
void discovery_browsing_remove(struct discovery *d, AvahiIfIndex ifindex, AvahiProtocol protocol,
                               const char *name, const char *domain);
/* All of them; report: lost() for every peer that goes with them (not when the caller frees us). */
void discovery_browsing_drop(struct discovery *d, bool report);
