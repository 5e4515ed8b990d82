/* The cluster view as JSON, the same on every node for the same summaries (ages aside). */
#include <stdlib.h>
#include <string.h>

#include "alerts_view.h"
#include "cluster_confirm.h"
#include "cluster_internal.h"
#include "common/fnv1a.h"
#include "common/json_raw.h"
#include "common/macro.h"
#include "links_view.h"
#include "summary.h"

static int by_key(const void *a, const void *b)
{
        return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* A copy of sections with its keys in name order, less "results" unless with_results. */
static json_object *sorted_sections(json_object *sections, bool with_results)
{
        json_object *o = json_object_new_object();
        const char *keys[64];
        size_t n = 0;

        json_object_object_foreach(sections, key, value) {
                (void)value;
                if (!with_results && strcmp(key, "results") == 0)
                        continue;
                if (n < sizeof(keys) / sizeof(keys[0]))
                        keys[n++] = key;
        }
        qsort(keys, n, sizeof(keys[0]), by_key);
        for (size_t i = 0; i < n; i++)
                json_object_object_add(o, keys[i],
                                       json_object_get(json_object_object_get(sections, keys[i])));
        return o;
}

/* An up peer that answers late is there: its summary ages while it is slow, but it is not gone. */
static bool node_is_slow(struct cluster *c, const struct cluster_node *n)
{
        return c->transport.is_slow && cluster_is_peer_up(c, n->node_id) &&
               c->transport.is_slow(c->transport.userdata, n->node_id);
}

static json_object *node_to_json(struct cluster *c, struct cluster_node *n, int64_t now, bool with_results)
{
        json_object *o = json_object_new_object();
        bool is_self = !n->envelope;
        uint64_t age = is_self ? 0 : cluster_node_age_usec(n, now);
        uint64_t uptime_ms = is_self ? (uint64_t)(now - c->started_usec) / 1000 : n->uptime_ms + age / 1000;

        json_object_object_add(o, "node_id", json_object_new_string(n->node_id));
        json_object_object_add(o, "name", json_object_new_string(n->name));
        json_object_object_add(o, "instance", json_object_new_string(is_self ? c->instance : n->instance));
        json_object_object_add(o, "format", json_object_new_int64(is_self ? SUMMARY_FORMAT : n->format));
        json_object_object_add(o, "age_s", json_object_new_double((double)(age / 1000) / 1000.0));
        json_object_object_add(o, "stale", json_object_new_boolean(cluster_node_is_stale(c, n, now)));
        /* A stale node's uptime is unknown: the one it last told is kept as such. */
        json_object_object_add(
                o, "uptime_s",
                json_object_new_int64(
                        (int64_t)((cluster_node_is_stale(c, n, now) ? n->uptime_ms : uptime_ms) / 1000)));
        json_object_object_add(o, "confirmed", json_object_new_boolean(cluster_node_counts(c, n)));
        json_object_object_add(o, "slow", json_object_new_boolean(!is_self && node_is_slow(c, n)));
        json_object_object_add(o, "sections", sorted_sections(n->sections, with_results));
        return o;
}

/* The clashes among nodes sorted by name then id: a run of one name is one clash. */
static json_object *clashes_of_sorted(struct cluster_node **sorted, size_t n)
{
        json_object *list = json_object_new_array();

        for (size_t i = 0; i < n;) {
                size_t j = i + 1;

                while (j < n && strcmp(sorted[j]->name, sorted[i]->name) == 0)
                        j++;
                if (j - i > 1) {
                        json_object *clash = json_object_new_object(), *ids = json_object_new_array();

                        for (size_t k = i; k < j; k++)
                                json_object_array_add(ids, json_object_new_string(sorted[k]->node_id));
                        json_object_object_add(clash, "name", json_object_new_string(sorted[i]->name));
                        json_object_object_add(clash, "node_ids", ids);
                        json_object_array_add(list, clash);
                }
                i = j;
        }
        return list;
}

/* The confirmed nodes of sorted moved to its front, in order: how many. A node only its relay
 * speaks of counts for nothing: not in a name clash, a verdict or the job plan. */
static size_t only_confirmed(struct cluster *c, struct cluster_node **sorted, size_t n)
{
        size_t kept = 0;

        for (size_t i = 0; sorted && i < n; i++)
                if (cluster_node_counts(c, sorted[i]))
                        sorted[kept++] = sorted[i];
        return kept;
}

void cluster_foreach_node(struct cluster *c, cluster_node_fn fn, void *userdata)
{
        struct cluster_node **sorted = cluster_table_sorted(&c->nodes);
        int64_t now = cluster_now_usec();
        size_t n = only_confirmed(c, sorted, c->nodes.n);

        fn(c->self_id, cluster_self(c)->name, 0, false, userdata);
        for (size_t i = 0; sorted && i < n; i++)
                if (sorted[i]->envelope)
                        fn(sorted[i]->node_id, sorted[i]->name, cluster_node_age(sorted[i], now),
                           cluster_node_is_stale(c, sorted[i], now), userdata);
        free(sorted);
}

void cluster_foreach_held_node(struct cluster *c, cluster_held_node_fn fn, void *userdata)
{
        struct cluster_node **sorted = cluster_table_sorted(&c->nodes);
        int64_t now = cluster_now_usec();

        fn(c->self_id, cluster_self(c)->name, false, true, userdata);
        for (size_t i = 0; sorted && i < c->nodes.n; i++)
                if (sorted[i]->envelope)
                        fn(sorted[i]->node_id, sorted[i]->name, cluster_node_is_stale(c, sorted[i], now),
                           cluster_node_counts(c, sorted[i]), userdata);
        free(sorted);
}

json_object *cluster_name_clashes(struct cluster *c)
{
        _cleanup_free_ struct cluster_node **sorted = cluster_table_sorted(&c->nodes);

        return clashes_of_sorted(sorted, only_confirmed(c, sorted, sorted ? c->nodes.n : 0));
}

size_t cluster_name_count(struct cluster *c, const char *name)
{
        size_t n = 0;

        for (size_t i = 0; i < c->nodes.n; i++) {
                struct cluster_node *node = &c->nodes.v[i];

                n += strcmp(node->name, name) == 0 && cluster_node_counts(c, node);
        }
        return n;
}

bool cluster_name_is_unique(struct cluster *c, const char *name)
{
        return cluster_name_count(c, name) == 1;
}

json_object *cluster_nodes_to_json(struct cluster *c, bool with_results)
{
        struct cluster_node **sorted = cluster_table_sorted(&c->nodes);
        json_object *o = json_object_new_object(), *list = json_object_new_array();
        int64_t now = cluster_now_usec();

        for (size_t i = 0; sorted && i < c->nodes.n; i++)
                json_object_array_add(list, node_to_json(c, sorted[i], now, with_results));
        json_object_object_add(o, "self", json_object_new_string(c->self_id));
        json_object_object_add(o, "nodes", list);
        json_object_object_add(o, "name_clashes", cluster_name_clashes(c));
        free(sorted);
        return o;
}

/* A node's results section as text: a held one's as it came, this node's own written out. */
static const char *results_text(json_object *sections, size_t *len)
{
        json_object *results = json_object_object_get(sections, "results");
        const char *text = json_raw_text(results);

        *len = 0;
        if (!results)
                return NULL;
        if (text) {
                *len = strlen(text);
                return text;
        }
        return json_object_to_json_string_length(results, JSON_C_TO_STRING_PLAIN, len);
}

static char *links_make(struct cluster *c, void *userdata)
{
        _cleanup_free_ struct cluster_node **sorted = cluster_table_sorted(&c->nodes);
        _cleanup_free_ struct links_view_node *view = calloc(c->nodes.n + 1, sizeof(*view));
        int64_t now = cluster_now_usec();
        char *text = NULL;

        if (!view || (c->nodes.n && !sorted))
                return NULL;
        for (size_t i = 0; i < c->nodes.n; i++) {
                struct cluster_node *n = sorted[i];

                view[i] = (struct links_view_node){ .node_id = n->node_id,
                                                    .name = n->name,
                                                    .is_stale = cluster_node_is_stale(c, n, now) };
                view[i].results = results_text(n->sections, &view[i].results_len);
        }
        return links_view_text(view, c->nodes.n, &text) < 0 ? NULL : text;
}

/* The view kept while the generation stays, or for lag_usec after it was made while its shape
 * (what must never lag) is the same; else made by make (NULL: no memory) and kept. A reference:
 * a call writes the kept text, copying nothing. */
static json_object *view_of_generation(struct cluster *c, struct cluster_view_text *kept, int64_t lag_usec,
                                       uint64_t shape, char *(*make)(struct cluster *c, void *userdata),
                                       void *userdata)
{
        int64_t now = cluster_now_usec();
        json_object *raw;

        if (kept->raw && (kept->generation == c->generation ||
                          (kept->shape == shape && now - kept->made_usec < lag_usec)))
                return json_object_get(kept->raw);
        raw = json_raw_take(make(c, userdata));
        if (!raw)
                return NULL;
        json_object_put(kept->raw);
        kept->raw = raw;
        kept->generation = c->generation;
        kept->shape = shape;
        kept->made_usec = now;
        return json_object_get(raw);
}

/* The nodes, their names and which are stale: a node gone stale is never shown as current, nor a
 * node gone or renamed as it was, while results may lag. */
static uint64_t links_shape(struct cluster *c)
{
        int64_t now = cluster_now_usec();
        uint64_t h = FNV1A64_INIT;

        for (size_t i = 0; i < c->nodes.n; i++) {
                const struct cluster_node *n = &c->nodes.v[i];
                bool is_stale = cluster_node_is_stale(c, n, now);

                h = fnv1a64(h, n->node_id, strlen(n->node_id) + 1);
                h = fnv1a64(h, n->name, strlen(n->name) + 1);
                h = fnv1a64(h, &is_stale, sizeof(is_stale));
        }
        return h;
}

json_object *cluster_links_to_json(struct cluster *c)
{
        return view_of_generation(c, &c->links_view, CLUSTER_LINKS_VIEW_LAG_USEC, links_shape(c), links_make,
                                  NULL);
}

static char *alerts_make(struct cluster *c, void *nodes)
{
        json_object *view = alerts_view(nodes);
        char *text = view ? strdup(json_object_to_json_string_ext(view, JSON_C_TO_STRING_PLAIN)) : NULL;

        json_object_put(view);
        return text;
}

json_object *cluster_alerts_to_json(struct cluster *c, json_object *nodes)
{
        return view_of_generation(c, &c->alerts_view, 0, 0, alerts_make, nodes);
}
