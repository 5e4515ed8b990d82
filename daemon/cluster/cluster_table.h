/*
 * The nodes a cluster view holds: one entry per origin node with its newest summary, when it was
 * made (on this node's monotonic clock) and where it came from. Lookup by id, in an array kept
 * small by CLUSTER_MAX_NODES.
 */
#pragma once

#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/node_key.h"

struct cluster_node {
        char node_id[33];
        char name[64];
        char instance[33];
        uint64_t seq;
        int64_t format;
        uint64_t uptime_ms; /* the origin's uptime when it made the summary */
        /* Held as text, not as the trees they were read into: at 64 nodes the trees, each object
         * with its hash table, were some 3 KiB a node. Its digests are read back from it. */
        char *envelope;        /* the summary as received, without its texts and its age, unknown fields
                                * kept, as JSON text; NULL for this node */
        json_object *sections; /* every node's sections, held as their text (json_raw.h) */
        char *alive;           /* the newest alive for the summary held, as it came but for its age, as JSON
                                * text; passed on so */
        int64_t made_usec;     /* when its origin made it, on this node's monotonic clock */
        bool is_stale;         /* as last told to the watchers */
        char via[33];          /* the peer it came from */
        bool was_confirmed;    /* confirmed once (cluster_confirm.h): it counts from then on */
        /* Its section "peers" read into ids, sorted, when first asked after the summary came
         * (cluster_table_summary_replaced forgets them): asked of every up peer at every summary
         * and alive passed on. */
        unsigned char (*up_with)[NODE_KEY_ID_RAW_LEN]; /* as bytes, unless is_up_with_in_text */
        size_t n_up_with;
        bool has_up_with;
        bool is_up_with_in_text; /* the section's text is searched: it is as sparkd writes it */
};

struct cluster_table {
        struct cluster_node *v;
        size_t n, allocated;
};

int64_t cluster_now_usec(void);
struct cluster_node *cluster_table_find(struct cluster_table *t, const char *node_id);
/* A new entry for node_id, zeroed but for its id; NULL without memory. */
struct cluster_node *cluster_table_add(struct cluster_table *t, const char *node_id);
void cluster_table_remove(struct cluster_table *t, struct cluster_node *n);
void cluster_table_clear(struct cluster_table *t);
/* n's sections were replaced: what was read from them is forgotten. */
void cluster_table_summary_replaced(struct cluster_node *n);
/* Whether n's section "peers" lists the node id: a held node's read into sorted ids once per
 * summary, this node's read where its text lies. */
bool cluster_node_lists_peer(struct cluster_node *n, const char *id);
uint64_t cluster_node_age_usec(const struct cluster_node *n, int64_t now);
/* How many entries carry name. */
size_t cluster_table_name_count(const struct cluster_table *t, const char *name);
/* Whether exactly one node id carries name: a name two nodes share names neither (not the head
 * of [cluster] head, not a node to probe or show by that name). */
bool cluster_table_name_is_unique(const struct cluster_table *t, const char *name);
/* Pointers to every entry sorted by name, then id (n of them, caller frees); NULL when none or
 * without memory. */
struct cluster_node **cluster_table_sorted(struct cluster_table *t);
