#include "cabling.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/fnv1a.h"
#include "common/json_raw.h"
#include "common/macro.h"
#include "common/strutil.h"
#include "daemon/base/event.h"
#include "daemon/base/log.h"
#include "daemon/fabric/neighbours.h"
#include "daemon/fabric/topology.h"
#include "daemon/fabric/topology_pairs.h"

/* How long a map must hold still before its changes are events. */
#define SETTLE_SEC 2

struct cabling {
        struct event_base *base;
        struct cabling_sources src;
        json_object *section; /* this node's neighbours, as last published */
        /* The map is held as its text, packed (json_raw.h: at 64 nodes some 80 KiB of text, a
         * fifth of its tree's size), and read back for the rare call that shows it; what the
         * probe schedule asks of it is kept beside. */
        json_object *map; /* NULL while not known */
        /* The map the journal was last told of: a reference to map while the map holds still,
         * its own once the map changed. */
        json_object *reported;
        bool map_has_links;
        char **joined; /* the nodes the map joins this node to */
        struct event *settle_timer;
        char shape[8];         /* [cluster] topology */
        unsigned nodes;        /* [cluster] nodes */
        char parse_error[256]; /* the last node table the engine refused, logged once */
        uint64_t map_inputs;   /* the digest of what the map was derived from */
};

/* The nodes whose tables go into the map: every node not stale, with a neighbours section. */
struct map_inputs {
        struct cabling *c;
        struct topology_node *v[CLUSTER_MAX_NODES];
        size_t n;
};

static void collect_node(const char *node_id, const char *name, bool is_stale, bool is_confirmed,
                         void *userdata)
{
        struct map_inputs *in = userdata;
        struct cabling *c = in->c;
        json_object *section;
        char why[200];
        int r;

        /* A stale table tells what was cabled when its node last spoke, not now. */
        if (is_stale || in->n >= ARRAY_SIZE(in->v))
                return;
        section = cluster_get_section(c->src.cluster, node_id, "neighbours", NULL, NULL);
        if (!section)
                return;
        r = topology_node_parse(node_id, name, section, &in->v[in->n], why, sizeof(why));
        json_object_put(section);
        if (r < 0) {
                char line[sizeof(c->parse_error)];

                snprintf(line, sizeof(line), "%s (%s): %s", name, node_id, why);
                if (strcmp(line, c->parse_error) != 0)
                        log_warning("topology: the neighbour table of node %s is left out", line);
                snprintf(c->parse_error, sizeof(c->parse_error), "%s", line);
                return;
        }
        topology_node_set_unconfirmed(in->v[in->n], !is_confirmed);
        in->n++;
}

static const char *jstr(json_object *o, const char *key)
{
        json_object *v;

        return json_object_object_get_ex(o, key, &v) && json_object_is_type(v, json_type_string)
                       ? json_object_get_string(v)
                       : "";
}

static bool findings_contain(json_object *findings, json_object *one)
{
        for (size_t i = 0; findings && i < json_object_array_length(findings); i++)
                if (json_object_equal(json_object_array_get_idx(findings, i), one))
                        return true;
        return false;
}

/* "a, b" from a list of strings. */
static void join_strings(json_object *list, char *buf, size_t size)
{
        buf[0] = '\0';
        for (size_t i = 0; list && i < json_object_array_length(list); i++)
                snprintf(buf + strlen(buf), size - strlen(buf), "%s%s", i ? "," : "",
                         json_object_get_string(json_object_array_get_idx(list, i)));
}

static void emit_new_findings(json_object *old_map, json_object *map)
{
        json_object *old = old_map ? json_object_object_get(old_map, "findings") : NULL;
        json_object *now = json_object_object_get(map, "findings");

        for (size_t i = 0; now && i < json_object_array_length(now); i++) {
                json_object *one = json_object_array_get_idx(now, i);
                char nodes[512], ports[512];

                if (findings_contain(old, one))
                        continue;
                join_strings(json_object_object_get(one, "nodes"), nodes, sizeof(nodes));
                join_strings(json_object_object_get(one, "ports"), ports, sizeof(ports));
                {
                        struct log_field f[] = { { "finding", jstr(one, "id") },
                                                 { "status", jstr(one, "status") },
                                                 { "node", nodes },
                                                 { "port", ports },
                                                 { "fix", jstr(one, "fix") } };

                        event_emit(EVENT_WIRING_PROBLEM, f, ARRAY_SIZE(f), "wiring: %s (fix: %s)",
                                   jstr(one, "summary"), jstr(one, "fix"));
                }
        }
}

static void emit_if_changed(json_object *old, json_object *map)
{
        json_object *old_links = old ? json_object_object_get(old, "links") : NULL;
        json_object *links = json_object_object_get(map, "links");
        size_t n_nodes = json_object_array_length(json_object_object_get(map, "nodes"));
        size_t n_links = links ? json_object_array_length(links) : 0;
        char nodes_s[16], links_s[16];

        emit_new_findings(old, map);
        if (old && strcmp(jstr(old, "shape"), jstr(map, "shape")) == 0 &&
            json_object_equal(old_links, links))
                return;
        snprintf(nodes_s, sizeof(nodes_s), "%zu", n_nodes);
        snprintf(links_s, sizeof(links_s), "%zu", n_links);
        {
                struct log_field f[] = { { "shape", jstr(map, "shape") },
                                         { "nodes", nodes_s },
                                         { "links", links_s } };

                event_emit(EVENT_TOPOLOGY_CHANGED, f, ARRAY_SIZE(f),
                           "topology: %s, %zu node%s, %zu link%s%s%s", jstr(map, "shape"), n_nodes,
                           n_nodes == 1 ? "" : "s", n_links, n_links == 1 ? "" : "s", old ? ", was " : "",
                           old ? jstr(old, "shape") : "");
        }
}

static bool map_is_empty(json_object *map)
{
        json_object *links = json_object_object_get(map, "links");
        json_object *findings = json_object_object_get(map, "findings");

        return (!links || json_object_array_length(links) == 0) &&
               (!findings || json_object_array_length(findings) == 0);
}

static void digest_text(const char *text, size_t len, void *userdata)
{
        uint64_t *digest = userdata;

        *digest = fnv1a64(fnv1a64(*digest, text, len), "", 1);
}

struct map_digest {
        struct cabling *c;
        uint64_t value;
};

static void digest_node(const char *node_id, const char *name, bool is_stale, bool is_confirmed,
                        void *userdata)
{
        struct map_digest *d = userdata;

        if (is_stale) /* as collect_node */
                return;
        d->value = fnv1a64(d->value, &is_confirmed, sizeof(is_confirmed));
        d->value = fnv1a64(d->value, node_id, strlen(node_id) + 1);
        d->value = fnv1a64(d->value, name, strlen(name) + 1);
        (void)cluster_section_text(d->c->src.cluster, node_id, "neighbours", digest_text, &d->value);
}

/* What the map is derived from: every node's name and neighbour table as written, and the
 * expected shape. */
static uint64_t map_inputs_digest(struct cabling *c)
{
        struct map_digest d = { c, FNV1A64_INIT };

        d.value = fnv1a64(d.value, c->shape, strlen(c->shape) + 1);
        d.value = fnv1a64(d.value, &c->nodes, sizeof(c->nodes));
        cluster_foreach_held_node(c->src.cluster, digest_node, &d);
        return d.value;
}

/* The nodes map joins to self with a cable or a switch, of those its links name. */
static int joined_nodes(json_object *map, const char *self, char ***ret)
{
        json_object *links = json_object_object_get(map, "links");
        _cleanup_strv_ char **joined = NULL;

        for (size_t i = 0; i < json_object_array_length(links); i++) {
                json_object *link = json_object_array_get_idx(links, i);
                const char *ends[] = { "a", "b" };

                for (size_t e = 0; e < ARRAY_SIZE(ends); e++) {
                        const char *id = jstr(json_object_object_get(link, ends[e]), "node_id");
                        int r;

                        if (!id[0] || strcmp(id, self) == 0 || strv_contains(joined, id) ||
                            !topology_map_joins(map, self, id))
                                continue;
                        r = strv_push(&joined, id);
                        if (r < 0)
                                return r;
                }
        }
        *ret = joined;
        joined = NULL;
        return 0;
}

/* The map from every node's table now; events when its links or findings changed. */
static void cabling_derive(struct cabling *c)
{
        struct map_inputs in = { .c = c };
        struct topology_expect expect = { .shape = c->shape, .nodes = c->nodes };
        uint64_t inputs = map_inputs_digest(c);
        json_object *map = NULL, *next = NULL;
        char **joined = NULL;
        const char *held, *written;
        bool is_empty;
        int r;

        /* Most changes of the cluster are results and ages, which the map does not read: at 32
         * nodes deriving it again for each made and freed some ten thousand objects. */
        if (c->map && inputs == c->map_inputs)
                return;
        cluster_foreach_held_node(c->src.cluster, collect_node, &in);
        r = topology_derive(in.v, in.n, &expect, &map);
        for (size_t i = 0; i < in.n; i++)
                topology_node_free(in.v[i]);
        if (r >= 0) {
                /* Taken before anything is kept: without memory nothing is, and the next change
                 * derives it again. */
                written = json_object_to_json_string_ext(map, JSON_C_TO_STRING_PLAIN);
                next = written ? json_raw_take(strdup(written)) : NULL;
                r = next ? joined_nodes(map, c->src.node_id, &joined) : -ENOMEM;
                if (r < 0)
                        json_object_put(next);
        }
        if (r < 0) {
                json_object_put(map);
                log_warning("topology: cannot derive the map of %zu nodes: %s", in.n, strerror(-r));
                return;
        }
        c->map_inputs = inputs;
        is_empty = map_is_empty(map);
        c->map_has_links = json_object_array_length(json_object_object_get(map, "links")) > 0;
        json_object_put(map);
        strv_free(c->joined);
        c->joined = joined;
        held = c->map ? json_raw_text(c->map) : NULL;
        if (held && strcmp(held, json_raw_text(next)) == 0) {
                json_object_put(next);
                return;
        }
        (void)json_raw_pack(next);
        json_object_put(c->map);
        c->map = next;
        /* While nodes start or a cable moves, the maps in between (a node's table before its
         * peer's, lldpd's neighbour on a port that left until its TTL ends) are not news: the
         * journal hears of the map once it held still for a moment. A map with neither links nor
         * findings before any was reported (a node alone, or one without fabric ports) is no news
         * at all, and no reason to wake. */
        if (c->reported || !is_empty)
                evtimer_add(c->settle_timer, &(struct timeval){ .tv_sec = SETTLE_SEC });
}

static void on_settled(evutil_socket_t fd, short what, void *userdata)
{
        struct cabling *c = userdata;
        const char *map_text = c->map ? json_raw_text(c->map) : NULL;
        const char *reported_text = c->reported ? json_raw_text(c->reported) : NULL;
        json_object *old, *map;

        if (!map_text || c->reported == c->map || (reported_text && strcmp(reported_text, map_text) == 0))
                return;
        old = reported_text ? json_tokener_parse(reported_text) : NULL;
        map = json_tokener_parse(map_text);
        if (map)
                emit_if_changed(old, map);
        json_object_put(old);
        json_object_put(map);
        json_object_put(c->reported);
        c->reported = json_object_get(c->map);
}

static json_object *neighbours_now(struct cabling *c)
{
        json_object *links = links_to_json(c->src.links);
        json_object *peers = peers_to_json(c->src.peers);
        json_object *o = neighbours_build(links, lldp_watch_table(c->src.lldp), peers);

        json_object_put(links);
        json_object_put(peers);
        return o;
}

void cabling_update(struct cabling *c)
{
        json_object *next = neighbours_now(c);

        if (c->section && json_object_equal(c->section, next)) {
                json_object_put(next);
                return;
        }
        json_object_put(c->section);
        c->section = next;
        (void)cluster_set_section(c->src.cluster, "neighbours", json_object_get(next));
}

static void on_peer(const char *node_id, const char *type, json_object *msg, void *userdata)
{
        /* A peer came or went: the peer channel's neighbours and the chassis matches change. */
        cabling_update(userdata);
}

static void on_cluster_changed(void *userdata)
{
        /* A peer's chassis may have come with its summary (or its heartbeat) since the last build. */
        cabling_update(userdata);
        cabling_derive(userdata);
}

int cabling_new(struct event_base *base, const struct cabling_sources *sources, struct cabling **ret)
{
        struct cabling *c = calloc(1, sizeof(*c));
        int r;

        if (!c)
                return -ENOMEM;
        c->base = base;
        c->src = *sources;
        c->settle_timer = evtimer_new(base, on_settled, c);
        if (!c->settle_timer) {
                free(c);
                return -ENOMEM;
        }
        r = peers_add_message_handler(c->src.peers, "cabling-", on_peer, c);
        if (r >= 0)
                r = cluster_watch(c->src.cluster, on_cluster_changed, c);
        if (r < 0) {
                cabling_free(c);
                return r;
        }
        *ret = c;
        return 0;
}

void cabling_free(struct cabling *c)
{
        if (!c)
                return;
        peers_remove_message_handler(c->src.peers, "cabling-");
        if (c->settle_timer)
                event_free(c->settle_timer);
        json_object_put(c->section);
        json_object_put(c->reported);
        json_object_put(c->map);
        strv_free(c->joined);
        free(c);
}

void cabling_configure(struct cabling *c, const struct sparkd_config *config)
{
        snprintf(c->shape, sizeof(c->shape), "%s", config->cluster_topology);
        c->nodes = config->cluster_nodes;
        cabling_update(c);
        cabling_derive(c);
}

json_object *cabling_topology(struct cabling *c)
{
        const char *text = c->map ? json_raw_text(c->map) : NULL;

        return text ? json_tokener_parse(text) : NULL;
}

bool cabling_joins(struct cabling *c, const char *peer_id)
{
        /* No map, or one without a single link (no lldpd and no addressed ports): every pair. */
        if (!c->map || !c->map_has_links)
                return true;
        return strv_contains(c->joined, peer_id);
}

static int method_neighbours(struct api_request *req, json_object *params, void *userdata)
{
        struct cabling *c = userdata;

        cabling_update(c);
        api_request_reply(req, json_object_get(c->section));
        return 0;
}

static int method_topology(struct api_request *req, json_object *params, void *userdata)
{
        struct cabling *c = userdata;
        json_object *o = json_object_new_object();

        json_object *map = cabling_topology(c);

        json_object_object_add(o, "self", json_object_new_string(c->src.node_id));
        if (map) {
                json_object_object_foreach(map, key, value) {
                        json_object_object_add(o, key, json_object_get(value));
                }
        }
        json_object_put(map);
        api_request_reply(req, o);
        return 0;
}

static const struct api_method cabling_methods[] = {
        { "neighbours", method_neighbours, false },
        { "topology", method_topology, false },
};

int cabling_register(struct cabling *c, struct api_server *api)
{
        return api_server_add_methods(api, cabling_methods, ARRAY_SIZE(cabling_methods), c);
}
