/*
 * The listening end of the firewall check: a TCP listener on a random port of this node's
 * ephemeral range (net.ipv4.ip_local_port_range under the host root, where NCCL's bootstrap and
 * socket transport listen), opened for a peer that asked, closed after a deadline of a few
 * seconds or when the peer says it is done. Few are open at once and a peer may ask only now
 * and then: the rest are refused with the reason.
 */
#pragma once

#include <event2/event.h>
#include <stddef.h>
#include <stdint.h>

#define FIREWALL_MAX_LISTENERS    4
#define FIREWALL_LISTEN_SEC       6
#define FIREWALL_PEER_MIN_GAP_SEC 10

struct fw_listeners;

int fw_listeners_new(struct event_base *base, struct fw_listeners **ret);
void fw_listeners_free(struct fw_listeners *l);

/* Opens a listener for peer_id's request_id: *port is where, range the range it came from
 * ("32768-60999"). -EBUSY (too many open, or this peer asked less than FIREWALL_PEER_MIN_GAP_SEC
 * ago) and other errors with why filled. */
int fw_listener_open(struct fw_listeners *l, const char *host_root, const char *peer_id,
                     const char *request_id, uint16_t *port, char *range, size_t range_size, char *why,
                     size_t why_size);
/* Closes peer_id's listener of request_id, if still open. */
void fw_listener_close(struct fw_listeners *l, const char *peer_id, const char *request_id);
/* Closes every listener of peer_id (it went down) and forgets when it last asked. */
void fw_listener_forget(struct fw_listeners *l, const char *peer_id);

/* "LOW HIGH" as /proc/sys/net/ipv4/ip_local_port_range holds it; -EINVAL unless 1 <= low <=
 * high <= 65535. */
int fw_parse_port_range(const char *text, uint16_t *low, uint16_t *high);
