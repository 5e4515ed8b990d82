#include "cabling.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/macro.h"
#include "daemon/fabric/neighbours.h"

struct cabling {
        struct event_base *base;
        struct cabling_sources src;
        json_object *section; /* this node's neighbours, as last published */
        json_object *map;     /* the topology map, NULL while not known */
};

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
}

int cabling_new(struct event_base *base, const struct cabling_sources *sources, struct cabling **ret)
{
        struct cabling *c = calloc(1, sizeof(*c));
        int r;

        if (!c)
                return -ENOMEM;
        c->base = base;
        c->src = *sources;
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
        json_object_put(c->section);
        json_object_put(c->map);
        free(c);
}

void cabling_configure(struct cabling *c, const struct sparkd_config *config)
{
        cabling_update(c);
}

json_object *cabling_topology(struct cabling *c)
{
        return c->map ? json_object_get(c->map) : NULL;
}

static int method_neighbours(struct api_request *req, json_object *params, void *userdata)
{
        struct cabling *c = userdata;

        cabling_update(c);
        api_request_reply(req, json_object_get(c->section));
        return 0;
}

static const struct api_method cabling_methods[] = {
        { "neighbours", method_neighbours, false },
};

int cabling_register(struct cabling *c, struct api_server *api)
{
        return api_server_add_methods(api, cabling_methods, ARRAY_SIZE(cabling_methods), c);
}
