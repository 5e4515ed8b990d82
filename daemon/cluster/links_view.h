/*
 * The links view, pure: per link (a pair of nodes, in name order) the newest measurement of each
 * probe kind in each direction, whichever end measured it, from every node's results section.
 * Written straight as JSON text: a 32-node cluster's summaries hold some 3,000 results among some
 * 500 links, which as a tree of json-c objects took 30 ms to build and write on every change. The
 * same summaries give the same text on every node.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>

/* A node as the links view reads it: its results section as JSON text. */
struct links_view_node {
        const char *node_id;
        const char *name;
        bool is_stale;
        const char *results; /* NULL: none */
        size_t results_len;
};

/* [{a: {node_id, name}, b: {...}, kinds: [{kind, metric, a_to_b: {value, verdict, at,
 * measured_by, stale} | null, b_to_a: ...}]}] as text in *ret (free it), from the nodes in the
 * order of cluster_nodes_to_json (the first of an id names it). Links in name order of their
 * ends, kinds in name order. A node whose results cannot be read (no memory) shows none, the
 * others do. 0, or -ENOMEM with nothing made. */
int links_view_text(const struct links_view_node *nodes, size_t n, char **ret);
