#include "cluster_view.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/json_raw.h"
#include "common/jsonrpc.h"

static const char *jstr(json_object *o, const char *key, const char *fallback)
{
        const char *s;

        return jsonrpc_param_string(o, key, &s) > 0 ? s : fallback;
}

static json_object *section_of(json_object *node, const char *name)
{
        json_object *sections = NULL, *s = NULL;

        json_object_object_get_ex(node, "sections", &sections);
        if (sections)
                json_object_object_get_ex(sections, name, &s);
        return s;
}

/* What the links view is built with: the links so far, and two indexes into them, since a
 * 32-node cluster's summaries hold some 3,000 results to place among some 500 links. */
struct links_build {
        json_object *links;   /* the array returned */
        json_object *by_ends; /* "A B" (node ids) -> the link */
        json_object *names;   /* node id -> name, from the nodes' list */
};

static const char *name_of(struct links_build *b, const char *node_id, const char *fallback)
{
        json_object *name = NULL;

        return json_object_object_get_ex(b->names, node_id, &name) ? json_object_get_string(name) : fallback;
}

static void ends_key(const char *a, const char *b, char *key, size_t size)
{
        snprintf(key, size, "%s %s", a, b);
}

static json_object *end_of(const char *node_id, const char *name)
{
        json_object *o = json_object_new_object();

        json_object_object_add(o, "node_id", json_object_new_string(node_id));
        json_object_object_add(o, "name", json_object_new_string(name));
        return o;
}

/* The link between x and y, made when new; its ends in name order, then id order. */
static json_object *link_of(struct links_build *b, const char *x, const char *x_name, const char *y,
                            const char *y_name, bool *x_is_a)
{
        int order = strcmp(x_name, y_name);
        json_object *l = NULL;
        char key[2 * 64 + 2];

        *x_is_a = order < 0 || (order == 0 && strcmp(x, y) < 0);
        if (!*x_is_a) {
                const char *t = x, *t_name = x_name;

                x = y, x_name = y_name, y = t, y_name = t_name;
        }
        ends_key(x, y, key, sizeof(key));
        if (json_object_object_get_ex(b->by_ends, key, &l))
                return l;
        l = json_object_new_object();
        json_object_object_add(l, "a", end_of(x, x_name));
        json_object_object_add(l, "b", end_of(y, y_name));
        json_object_object_add(l, "kinds", json_object_new_array());
        json_object_array_add(b->links, l);
        json_object_object_add(b->by_ends, key, json_object_get(l));
        return l;
}

static json_object *kind_entry(json_object *link, const struct result_kind *m)
{
        json_object *kinds = json_object_object_get(link, "kinds"), *k;

        for (size_t i = 0; i < json_object_array_length(kinds); i++) {
                k = json_object_array_get_idx(kinds, i);
                if (strcmp(jstr(k, "kind", ""), m->kind) == 0)
                        return k;
        }
        k = json_object_new_object();
        json_object_object_add(k, "kind", json_object_new_string(m->kind));
        json_object_object_add(k, "metric", json_object_new_string(m->metric));
        json_object_object_add(k, "a_to_b", NULL);
        json_object_object_add(k, "b_to_a", NULL);
        json_object_array_add(kinds, k);
        return k;
}

/* Keeps the newer of what the direction holds and the row's value; at equal times the one
 * measured by the node first in name order, so every node keeps the same. */
static void offer(json_object *entry, const char *direction, const struct result_row *row, const char *value,
                  const char *measured_by, bool is_stale)
{
        json_object *held = json_object_object_get(entry, direction), *cell;
        int newer;

        if (!value[0])
                return;
        if (held) {
                newer = strcmp(row->at, jstr(held, "at", ""));
                if (newer < 0 || (newer == 0 && strcmp(measured_by, jstr(held, "measured_by", "")) >= 0))
                        return;
        }
        cell = json_object_new_object();
        json_object_object_add(cell, "value", result_row_value(value));
        json_object_object_add(cell, "verdict",
                               json_object_new_string(row->verdict[0] ? row->verdict : "?"));
        json_object_object_add(cell, "at", json_object_new_string(row->at));
        json_object_object_add(cell, "measured_by", json_object_new_string(measured_by));
        /* From a node gone stale: shown as such, never as current. */
        json_object_object_add(cell, "stale", json_object_new_boolean(is_stale));
        json_object_object_add(entry, direction, cell);
}

/* A node's results placed, read from its text into rows for as long as that takes. */
static int add_results(struct links_build *b, const struct cluster_view_node *node)
{
        const char *x = node->node_id, *x_name = node->name;
        struct result_rows rows;
        int k = result_rows_read(node->results, node->results_len, &rows);

        if (k < 0)
                return k;
        for (size_t i = 0; i < rows.n; i++) {
                const struct result_row *r = &rows.v[i];
                const struct result_kind *m = result_kind_of(r->kind);
                const char *y = r->peer_id;
                json_object *link, *entry;
                bool x_is_a;

                /* Node ids are 32 hex digits: a longer one is no node's, and would not fit the index. */
                if (!m || !y[0] || strcmp(x, y) == 0 || strlen(x) > 64)
                        continue;
                link = link_of(b, x, x_name, y, name_of(b, y, r->peer[0] ? r->peer : "?"), &x_is_a);
                entry = kind_entry(link, m);
                offer(entry, x_is_a ? "a_to_b" : "b_to_a", r, r->out, x_name, node->is_stale);
                if (m->in)
                        offer(entry, x_is_a ? "b_to_a" : "a_to_b", r, r->in, x_name, node->is_stale);
        }
        result_rows_free(&rows);
        return 0;
}

static int by_ends(const void *p, const void *q)
{
        json_object *x = *(json_object *const *)p, *y = *(json_object *const *)q;
        int r = strcmp(jstr(json_object_object_get(x, "a"), "name", ""),
                       jstr(json_object_object_get(y, "a"), "name", ""));

        return r ? r
                 : strcmp(jstr(json_object_object_get(x, "b"), "name", ""),
                          jstr(json_object_object_get(y, "b"), "name", ""));
}

static int by_kind(const void *p, const void *q)
{
        return strcmp(jstr(*(json_object *const *)p, "kind", ""),
                      jstr(*(json_object *const *)q, "kind", ""));
}

json_object *cluster_view_links(const struct cluster_view_node *nodes, size_t n)
{
        struct links_build b = { .links = json_object_new_array(),
                                 .by_ends = json_object_new_object(),
                                 .names = json_object_new_object() };
        json_object *links = b.links;

        /* The first of an id wins. */
        for (size_t i = 0; i < n; i++)
                if (!json_object_object_get_ex(b.names, nodes[i].node_id, NULL))
                        json_object_object_add(b.names, nodes[i].node_id,
                                               json_object_new_string(nodes[i].name));
        /* A node whose rows cannot be made (out of memory) shows no results, the others do. */
        for (size_t i = 0; i < n; i++)
                (void)add_results(&b, &nodes[i]);
        json_object_put(b.by_ends);
        json_object_put(b.names);
        json_object_array_sort(links, by_ends);
        for (size_t i = 0; i < json_object_array_length(links); i++)
                json_object_array_sort(json_object_object_get(json_object_array_get_idx(links, i), "kinds"),
                                       by_kind);
        return links;
}

/* Newest first; an alert without a time after those with one; then by node, id and subject. */
static int by_newest(const void *p, const void *q)
{
        json_object *x = *(json_object *const *)p, *y = *(json_object *const *)q;
        const char *keys[] = { "name", "node_id", "id", "subject", "summary" };
        int r = strcmp(jstr(y, "since", ""), jstr(x, "since", ""));

        for (size_t i = 0; !r && i < sizeof(keys) / sizeof(keys[0]); i++)
                r = strcmp(jstr(x, keys[i], ""), jstr(y, keys[i], ""));
        return r;
}

json_object *cluster_view_alerts(json_object *nodes)
{
        json_object *alerts = json_object_new_array();

        for (size_t i = 0; nodes && i < json_object_array_length(nodes); i++) {
                json_object *node = json_object_array_get_idx(nodes, i);
                /* Another node's sections are held as their text: read back for the call. */
                json_object *list = json_raw_parsed(section_of(node, "alerts"));

                for (size_t k = 0; list && json_object_is_type(list, json_type_array) &&
                                   k < json_object_array_length(list);
                     k++) {
                        json_object *a = json_object_array_get_idx(list, k), *o;

                        if (!json_object_is_type(a, json_type_object))
                                continue;
                        o = json_object_new_object();
                        json_object_object_add(o, "node_id",
                                               json_object_new_string(jstr(node, "node_id", "?")));
                        json_object_object_add(o, "name", json_object_new_string(jstr(node, "name", "?")));
                        json_object_object_add(o, "stale",
                                               json_object_get(json_object_object_get(node, "stale")));
                        json_object_object_foreach(a, key, value) {
                                if (!json_object_object_get_ex(o, key, NULL))
                                        json_object_object_add(o, key, json_object_get(value));
                        }
                        json_object_array_add(alerts, o);
                }
                json_object_put(list);
        }
        json_object_array_sort(alerts, by_newest);
        return alerts;
}
