/* The cluster view's state, shared by its files (cluster.c keeps it, cluster_json.c reads it). */
#pragma once

#include <openssl/evp.h>
#include <string.h>

#include "cluster.h"
#include "cluster_table.h"
#include "fanout.h"

struct cluster_watcher {
        void (*fn)(void *userdata);
        void *userdata;
};

/* A peer whose refused summaries were logged, and when: at most one line a minute each. */
struct cluster_refusal_log {
        char peer_id[33];
        int64_t logged_usec;
};
#define CLUSTER_REFUSAL_LOG_SLOTS 16

/* A summary asked of a peer (cluster_offer.h) and when: not asked of that peer again for a
 * refresh interval. Kept per peer: an offer is not signed, and a peer that offers what it does
 * not answer must not keep this node from asking another. A full table gives the slot asked
 * longest ago. */
struct cluster_want {
        char origin[33];
        char peer_id[33];
        int64_t asked_usec;
};
#define CLUSTER_WANTS_IN_FLIGHT 64

/* A view as made at a generation of the cluster, a value writing its JSON text (common/json_raw.h)
 * given to every call by reference while it stands (NULL: none kept). */
struct cluster_view_text {
        json_object *raw;
        uint64_t generation;
        uint64_t shape;    /* what may not lag, as cluster_json.c sums it up */
        int64_t made_usec; /* cluster_now_usec when it was made */
};

/* How long a call may be given the links view as made before the latest change of results: at
 * 32 nodes during a probe round the view changes many times a second and takes 5 ms to make on
 * an idle core, 10 to 100 ms on a busy one, so a client that watches would otherwise have it
 * made for every call. A node that went stale, came, went or was renamed does not wait. */
#define CLUSTER_LINKS_VIEW_LAG_USEC 1000000LL

struct cluster {
        struct event_base *base;
        struct cluster_transport transport;
        struct cluster_table nodes; /* this node's entry included (msg NULL) */
        char self_id[33];
        EVP_PKEY *node_key; /* signs this node's summaries and alives (borrowed) */
        char instance[33];
        uint64_t seq;
        bool is_own_oversized; /* said once until it fits again */
        bool is_dirty;         /* own sections changed since the last summary sent */
        bool is_dirty_lazily;  /* and only sections that may wait (cluster.c: set_section) */
        /* Of those, which kinds wait: lazy ones (CLUSTER_LAZY_USEC after the last summary sent
         * for such alone), paced ones (the section "peers", a refresh interval after the same). */
        bool is_lazy_pending, is_paced_pending;
        int64_t lazy_sent_usec;   /* the last summary sent for lazy changes alone; 0: none */
        int64_t paced_sent_usec;  /* the same for paced ones */
        int64_t send_due_usec;    /* when the coalesce timer fires; 0: not armed */
        int64_t dirty_since_usec; /* when the oldest change not sent yet was made */
        int64_t started_usec;
        uint64_t refresh_usec;
        bool is_refresh_external; /* cluster_set_refresh_external */
        uint64_t forget_after_usec;

        /* The peers up now, to send to. */
        char (*up)[33];
        size_t n_up;

        struct fanout *fanout;     /* this node's summary on its way to the up peers */
        json_object *sent_digests; /* the digests of the summary last sent to them */
        json_object *fanout_base;  /* those of the one the fan-out's message changed from */
        json_object *last_full;    /* the summary last sent to them, every text with it */
        int64_t last_full_usec;    /* when it was made */
        struct event *coalesce;    /* own summary changed: send it soon */
        struct event *refresh;     /* periodic, while a peer is up */
        struct event *deadline;    /* the next node to go stale or be forgotten */
        struct event *notify;      /* watchers, coalesced */
        struct cluster_watcher watchers[CLUSTER_MAX_WATCHERS];
        void (*refresh_hook)(void *userdata);
        void *refresh_hook_userdata;

        struct cluster_refusal_log refusals[CLUSTER_REFUSAL_LOG_SLOTS];
        uint64_t n_refused;
        struct cluster_want wants[CLUSTER_WANTS_IN_FLIGHT];
        uint64_t n_wants_sent;

        /* Counts every change the view's JSON can show (cluster_changed); the links and alerts
         * views' texts are kept for as long as it stays the same (the links view's up to
         * CLUSTER_LINKS_VIEW_LAG_USEC longer): at 32 nodes the links view is some 300 KB of
         * JSON that takes 5 to 100 ms to make, and the alerts view a parse of every node's
         * alerts, for each call of a client that watches. */
        uint64_t generation;
        struct cluster_view_text links_view;
        struct cluster_view_text alerts_view;
};

static inline struct cluster_node *cluster_self(struct cluster *c)
{
        /* The first entry, added by cluster_new and never removed. */
        return &c->nodes.v[0];
}

/* Whether peer_id is among the up peers (cluster_is_peer_up, for the files cluster.c uses). */
static inline bool cluster_up_has(const struct cluster *c, const char *peer_id)
{
        for (size_t i = 0; i < c->n_up; i++)
                if (strcmp(c->up[i], peer_id) == 0)
                        return true;
        return false;
}

/* Since node's summary was made (0 for this node's own). */
static inline uint64_t cluster_node_age(const struct cluster_node *n, int64_t now)
{
        return n->envelope ? cluster_node_age_usec(n, now) : 0;
}
bool cluster_node_is_stale(const struct cluster *c, const struct cluster_node *n, int64_t now);
/* Counts a message refused from peer_id and logs why (at most once a minute per peer); returns
 * error. */
int cluster_refuse(struct cluster *c, const char *peer_id, int error, const char *why);
/* Sends node's summary (this node's or one held) to the up peer peer_id, with its age now. */
int cluster_send_node(struct cluster *c, const char *peer_id, struct cluster_node *n);
/* This node's summary, with the next sequence, to every up peer (a few at a time: fanout.h). */
void cluster_send_own(struct cluster *c);
/* This node's alive to every up peer not still to get its summary. */
void cluster_send_alives(struct cluster *c);
/* Sends an alive for node's summary (this node's or one held) to the up peer peer_id. */
int cluster_send_alive(struct cluster *c, const char *peer_id, struct cluster_node *n);
/* Whether the node a's newest summary says it is up with the node b (its section "peers"). */
bool cluster_node_is_up_with(struct cluster *c, const char *a, const char *b);
/* Whether this node is the one to pass origin's news on to its up peer to: of the nodes (this one
 * among them) that say they are up with both, the lowest id; or, when none says so, any that has
 * it. While a mesh forms, each node not yet up with an origin is up with many that are; each
 * passing on every alive of it was some 300 messages a second from one node of 64, most of
 * them copies. Held views that disagree for a moment give a copy too many or a refresh late. */
bool cluster_is_designated_relay(struct cluster *c, const char *origin, const char *to);
/* A node's summary changed or was dropped: the watchers hear of it, and the deadline timer
 * follows the new ages. */
void cluster_changed(struct cluster *c);
/* A node's age moved but nothing it shows changed: only the deadline timer follows. */
void cluster_deadline_moved(struct cluster *c);
