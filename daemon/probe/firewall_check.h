/*
 * The firewall check with every up peer: a host firewall that lets sparkd's port through but
 * drops the ephemeral TCP ports NCCL's bootstrap and socket transport listen on makes jobs hang
 * at init. When a peer comes up, and again every few minutes, this node asks it (over the peer
 * channel, messages "firewall-*") to listen on a port of its ephemeral range (firewall_listen.h)
 * and connects to it from each fabric netdev that reaches the peer (firewall_connect.h). Each
 * path's outcome is kept at both ends: this node's as "outbound", and the peer tells its own
 * ("firewall-result") so that its doctor names its firewall as "inbound". Nothing runs while
 * there are no peers.
 */
#pragma once

#include <event2/event.h>
#include <json-c/json.h>

#include "daemon/config/conf.h"
#include "daemon/host/links.h"
#include "daemon/peers/peers.h"

/* The shortest time between two checks with one peer, whatever [daemon] recheck_interval. */
#define FIREWALL_MIN_INTERVAL_SEC 300

struct firewall_check;

int firewall_check_new(struct event_base *base, struct peers *peers, struct links *links,
                       struct firewall_check **ret);
void firewall_check_free(struct firewall_check *fc);
/* Takes the host root (the ephemeral range is read under it) and the recheck interval. */
int firewall_check_configure(struct firewall_check *fc, const struct sparkd_config *config);
/* Every path's newest outcome with the up peers: [{peer, direction ("outbound": this node
 * connected, "inbound": this node listened), iface, address, peer_iface, peer_address, port,
 * port_range, outcome ("open", "refused", "dropped"), detail, sparkd_port_works, checked_at}]. */
json_object *firewall_check_results(struct firewall_check *fc);
