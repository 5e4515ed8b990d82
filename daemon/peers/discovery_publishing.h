/*
 * Our own record on mDNS: the _sparkd._tcp service in an Avahi entry group, its TXT record
 * updated in place when only that changes, and another name taken when ours collides.
 */
#pragma once

struct discovery;

/* Brings what Avahi publishes in line with discovery_publish()'s record, once the client runs. */
void discovery_publishing_update(struct discovery *d);
