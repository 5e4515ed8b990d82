/*
 * A summary as a peer sends it: read strictly (summary_parse), then given to a cluster view as
 * from a direct peer, and the view's JSON, links and alerts made from whatever it kept, as the
 * cluster method would. Sends go nowhere; the view lives for one input.
 */
#include <event2/event.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/base/log.h"
#include "daemon/cluster/cluster.h"
#include "daemon/cluster/summary.h"
#include "fuzz.h"

#define SELF "0123456789abcdef0123456789abcdef"
#define PEER "fedcba9876543210fedcba9876543210"

static struct event_base *base;

static int drop(void *userdata, const char *peer_id, json_object *msg)
{
        (void)json_object_to_json_string(msg);
        json_object_put(msg);
        return 0;
}

static int hello_name(void *userdata, const char *peer_id, char *buf, size_t size)
{
        snprintf(buf, size, "peer");
        return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        struct cluster_transport t = { drop, hello_name, NULL };
        struct cluster *c = NULL;
        struct summary s;
        char why[256];

        if (!base) {
                base = event_base_new();
                if (!base)
                        abort();
                log_set_max_level(LOG_EMERG);
        }
        if (summary_parse((const char *)data, size, &s, why, sizeof(why)) < 0)
                return 0;
        if (cluster_new(base, SELF, "self", &t, &c) < 0)
                abort();
        cluster_peer_up(c, PEER);
        cluster_peer_up(c, "00000000000000000000000000000001");
        if (cluster_receive(c, PEER, s.msg) == 0) {
                json_object *o = cluster_nodes_to_json(c, true), *nodes = json_object_object_get(o, "nodes");
                json_object *links = cluster_links_to_json(c), *alerts = cluster_alerts_to_json(c, nodes);

                (void)json_object_to_json_string(links);
                (void)json_object_to_json_string(alerts);
                json_object_put(links);
                json_object_put(alerts);
                json_object_put(o);
                json_object_put(cluster_get_section(c, s.origin, "doctor", NULL, NULL));
        }
        json_object_put(s.msg);
        cluster_free(c);
        return 0;
}
