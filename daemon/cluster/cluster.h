/*
 * What this node knows of every node: its own summary (sections set by the daemon) and the
 * newest summary of every node it heard of, directly or through a peer, with its age. Its own
 * goes to the up peers, a few at a time (fanout.h), when it changes (changes within 200 ms
 * coalesced, probe results in a burst at most every CLUSTER_LAZY_USEC), and on every refresh
 * (the peer heartbeat interval) an alive saying it is still current, so a node that falls silent
 * ages out without its sections crossing the wire each time. A node's section "peers" lists the
 * peers it is up with (its changes sent at most once a refresh interval); a summary is passed on
 * only to peers not up with its origin, so a full mesh relays nothing and a ring relays round
 * the ring; one received from a peer that is newer than what is held (per origin: the instance,
 * then the sequence) is kept and offered to the other up peers, who ask for it when they lack it
 * (cluster_offer.h), so nodes without a direct connection hear of each other, floods end and a
 * summary crosses each link at most once per change. Ages need no clock sync: a summary carries its age when
 * sent, and the receiver adds the time since it came in. A summary older than three refresh intervals is
 * stale; one older than forget_after is dropped. No timer runs while there are neither peers up nor nodes to
 * age.
 */
#pragma once

#include <event2/event.h>
#include <json-c/json.h>
#include <openssl/evp.h>
#include <stdbool.h>
#include <stdint.h>

struct cluster;

/* Sets this node's section NAME (value taken over; NULL removes it). When it differs from
 * what peers last got, the summary goes to them (changes within 200 ms coalesced). */
int cluster_set_section(struct cluster *c, const char *name, json_object *value);
/* The same for a section that changes in bursts and whose news may wait (probe results during
 * a round): its change alone goes within 200 ms when no summary went for such changes alone in
 * the last CLUSTER_LAZY_USEC, else once that much has passed since it did; any other change
 * takes it along at once. At 32 nodes on one machine, a summary per result during a round was
 * some 300 summaries a second to parse across the cluster. */
int cluster_set_section_lazily(struct cluster *c, const char *name, json_object *value);
/* The newest section NAME of node_id (this node's own too), a reference the caller puts; NULL
 * when unknown.
 * age_usec since its node made it; *is_stale when older than the stale limit. Either may be
 * NULL. */
json_object *cluster_get_section(struct cluster *c, const char *node_id, const char *name,
                                 uint64_t *age_usec, bool *is_stale);
/* Every confirmed node (cluster_confirm.h), this node first, then by name: what verdicts and the
 * job plan weigh. A node only its relay speaks of is shown (cluster_nodes_to_json), not walked. */
typedef void (*cluster_node_fn)(const char *node_id, const char *name, uint64_t age_usec, bool is_stale,
                                void *userdata);
void cluster_foreach_node(struct cluster *c, cluster_node_fn fn, void *userdata);
/* Every node the view holds, confirmed or not, in the same order, with whether it counts: the
 * cabling map draws the far nodes of a chain (a ring with a cable missing), which its ends know
 * through one neighbour only, and keeps the findings that rest on unconfirmed nodes alone out of
 * its verdict. */
typedef void (*cluster_held_node_fn)(const char *node_id, const char *name, bool is_stale, bool is_confirmed,
                                     void *userdata);
void cluster_foreach_held_node(struct cluster *c, cluster_held_node_fn fn, void *userdata);
/* Gives fn the text of node_id's section name: a held one as it came, without a tree made of it,
 * this node's as written now. -ENOENT when the node has no such section. */
int cluster_section_text(struct cluster *c, const char *node_id, const char *name,
                         void (*fn)(const char *text, size_t len, void *userdata), void *userdata);
/* fn runs (coalesced, on the loop) after any node's summary changed or went stale. */
int cluster_watch(struct cluster *c, void (*fn)(void *userdata), void *userdata);

/* How summaries reach the peers: the peer channel in the daemon, a loop of clusters in tests. */
struct cluster_transport {
        /* Sends msg (taken over) to the up peer peer_id; < 0 when it is not up. */
        int (*send)(void *userdata, const char *peer_id, json_object *msg);
        /* The name peer_id gave in its hello into buf; < 0 when not known. */
        int (*hello_name)(void *userdata, const char *peer_id, char *buf, size_t size);
        /* Whether the up peer peer_id answers late but is there (NULL: never). */
        bool (*is_slow)(void *userdata, const char *peer_id);
        /* Whether changes that may wait are to wait now for the traffic budget (NULL: never);
         * asked when such a send is due. */
        bool (*budget_defers)(void *userdata);
        void *userdata;
};

#define CLUSTER_MAX_NODES     256
#define CLUSTER_MAX_WATCHERS  8
#define CLUSTER_COALESCE_USEC 200000ULL
/* Over the budget, changes that may wait look again every second, and wait a minute at most. */
#define CLUSTER_BUDGET_RECHECK_USEC  1000000ULL
#define CLUSTER_BUDGET_MAX_WAIT_USEC (60ULL * 1000000)
#define CLUSTER_LAZY_USEC            (10ULL * 1000000)
#define CLUSTER_STALE_REFRESHES      3
#define CLUSTER_FORGET_DEFAULT_USEC  (24ULL * 3600 * 1000000)

int cluster_new(struct event_base *base, const char *node_id, const char *name,
                const struct cluster_transport *transport, struct cluster **ret);
void cluster_free(struct cluster *c);
/* The key (borrowed) this node signs its summaries with; node_id must be the id it names
 * (common/node_key.h). Without one nothing this node says is sent. */
void cluster_set_node_key(struct cluster *c, EVP_PKEY *key);
/* This node's name, the refresh interval (the peer heartbeat) and how long a silent node is kept. */
void cluster_configure(struct cluster *c, const char *name, uint64_t refresh_usec,
                       uint64_t forget_after_usec);
/* The refresh driven from outside: the caller runs cluster_refresh every refresh interval, and
 * the view keeps no timer of its own for it. */
void cluster_set_refresh_external(struct cluster *c, bool is_external);
/* This node's summary, or an alive when nothing changed, to every up peer. */
void cluster_refresh(struct cluster *c);
/* Runs just before each refresh is sent, and before a peer that comes up gets this node's
 * summary, so the caller may re-derive its sections first. */
void cluster_set_refresh_hook(struct cluster *c, void (*fn)(void *userdata), void *userdata);

/* What the peer channel brings. A peer that comes up gets this node's summary and an offer of
 * every one held. */
void cluster_peer_up(struct cluster *c, const char *peer_id);
void cluster_peer_down(struct cluster *c, const char *peer_id);
/* A summary message from the up peer peer_id. Refused (and logged, at most once a minute per
 * peer): an invalid or oversized one, one claiming this node's id, one from peer_id itself whose
 * name disagrees with its hello. Returns 0 when kept or not newer, < 0 when refused. */
int cluster_receive(struct cluster *c, const char *peer_id, json_object *msg);
/* An alive (summary.h) from peer_id, refused as a summary is: the node held is fresh again when it
 * names the same summary; when it names one this node does not hold, peer_id is asked for it. */
int cluster_receive_alive(struct cluster *c, const char *peer_id, json_object *msg);
/* A want from peer_id: the summary it names (this node's or one held) goes to it. */
int cluster_receive_want(struct cluster *c, const char *peer_id, json_object *msg);
/* Any of these, or an offer (cluster_offer.h), by its "type" (a summary when it is none of the
 * others). */
int cluster_receive_message(struct cluster *c, const char *peer_id, json_object *msg);

/* {"self", "nodes": [{node_id, name, instance, seq, format, age_s, uptime_s, stale, confirmed,
 * sections}], "name_clashes" (cluster_name_clashes)}; confirmed is this node's judgement
 * (cluster_confirm.h), the rest the same on every node
 * with nodes sorted by name then id and sections by name, so every node writes the same. A
 * node's "results" section only with_results: the links view shows the newest of them per link,
 * and with them a 32-node view was 600 KiB, not 380. */
json_object *cluster_nodes_to_json(struct cluster *c, bool with_results);
/* The links view (links_view.h) of the nodes held now, this one included, as a value that
 * writes its JSON (common/json_raw.h): made again only after a change, and then no more than
 * once a second while the nodes, their names and which are stale stay the same: a client asking
 * more often may be given results of up to a second before. */
json_object *cluster_links_to_json(struct cluster *c);
/* The alerts view (alerts_view.h) of nodes, the "nodes" of cluster_nodes_to_json made now, in
 * the same way: made again only after a change. */
json_object *cluster_alerts_to_json(struct cluster *c, json_object *nodes);
/* The names two or more confirmed node ids carry in the view: [{name, node_ids: [...]}] by name, each
 * node's ids sorted; an empty array when every name is unique. */
json_object *cluster_name_clashes(struct cluster *c);
/* Whether exactly one confirmed node of the view (this one included) carries name. */
bool cluster_name_is_unique(struct cluster *c, const char *name);
/* How many confirmed nodes of the view carry name. */
size_t cluster_name_count(struct cluster *c, const char *name);
/* The node whose name or id (or a unique prefix of the id) is what: its id into node_id.
 * -ENOENT when none, -EADDRNOTAVAIL when several match. */
int cluster_find_node(struct cluster *c, const char *what, char node_id[static 33]);
const char *cluster_self_id(const struct cluster *c);
/* How many peers are up now: with none, nothing this node sets is sent. */
size_t cluster_peers_up(const struct cluster *c);
/* Whether peer_id is a peer up now (summaries go to it directly). */
bool cluster_is_peer_up(const struct cluster *c, const char *peer_id);
/* The stale limit, for those who explain it. */
uint64_t cluster_stale_usec(const struct cluster *c);
/* The number of summaries refused so far. */
uint64_t cluster_refused(const struct cluster *c);
