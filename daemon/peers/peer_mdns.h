/*
 * The peer table's side of mDNS: peers found are added and dialled, peers lost are dropped
 * unless a connection still vouches for them, and this node's record follows its fabric
 * addresses and port.
 */
#pragma once

#include "discovery.h"
#include "peer_table.h"

/* discovery_new() callbacks; userdata is the struct peers. */
void peer_mdns_found(const struct discovery_record *r, void *userdata);
void peer_mdns_lost(const char *node_id, void *userdata);
/* Publishes this node's record when its addresses, name or port changed (mDNS on only). */
void peer_mdns_publish(struct peers *ps);
