/*
 * Finding peers over mDNS through the host's Avahi daemon (DGX OS runs it): sparkd publishes
 * _sparkd._tcp with TXT records (protocol version, node id, node name, fabric addresses, port)
 * and browses for the others, all driven from the daemon's own libevent loop through an AvahiPoll
 * adapter. No second responder on port 5353. Without Avahi it says so once and stays quiet; the
 * static peers still work. When Avahi appears later, publishing and browsing start then.
 */
#pragma once

#include <event2/event.h>
#include <stdbool.h>
#include <stdint.h>

#define DISCOVERY_SERVICE_TYPE "_sparkd._tcp"
#define DISCOVERY_PROTO        1
#define DISCOVERY_MAX_ADDRS    16  /* fabric addresses in one record */
#define DISCOVERY_TXT_ITEM_MAX 255 /* a TXT string is at most 255 bytes */

struct discovery;

struct discovery_record {
        unsigned proto;   /* TXT v= */
        char node_id[33]; /* TXT id= (32 hex digits) */
        char name[64];    /* TXT name= */
        char **addresses; /* TXT addrs= (comma separated IPv4 fabric addresses), NULL-terminated */
        uint16_t port;    /* the peer channel's TCP port (TXT port= and the SRV record) */
};

/* found: a peer appeared or its record changed (record valid during the call only); lost: it
 * went away (by node id). Records of this node itself are filtered out. Both are called from the
 * event loop only, never from inside discovery_new/publish/free; they may call discovery_publish
 * but not discovery_free. A peer seen on several interfaces is found once and lost with the last;
 * when Avahi goes away every found peer is lost, and found again once Avahi is back. */
typedef void (*discovery_found_fn)(const struct discovery_record *record, void *userdata);
typedef void (*discovery_lost_fn)(const char *node_id, void *userdata);

/* Fails only without memory: no D-Bus or no avahi-daemon is a state it waits out. */
int discovery_new(struct event_base *base, discovery_found_fn found, discovery_lost_fn lost, void *userdata,
                  struct discovery **ret);
void discovery_free(struct discovery *d);
/* Publishes (or updates) this node's record; may be called before Avahi is reachable. Browsing
 * starts with the first call (our node id is what filters us out). -EINVAL for a record the codec
 * refuses, -E2BIG when addrs= exceeds one TXT string (255 bytes); Avahi's own errors are logged
 * here and retried with the next publish or reconnection. */
int discovery_publish(struct discovery *d, const struct discovery_record *self);
bool discovery_is_available(const struct discovery *d);

/* TXT record codec, pure, for tests. Decoding "addrs=" gives an empty (non-NULL) list; unknown
 * keys are ignored, a known key twice or without '=' is -EBADMSG. */
int discovery_txt_encode(const struct discovery_record *r, char ***txt); /* "key=value" strings */
int discovery_txt_decode(char *const *txt, struct discovery_record *r);  /* -EBADMSG on bad input */
void discovery_record_clear(struct discovery_record *r);
int discovery_record_copy(struct discovery_record *dst, const struct discovery_record *src);
bool discovery_record_equal(const struct discovery_record *a, const struct discovery_record *b);
