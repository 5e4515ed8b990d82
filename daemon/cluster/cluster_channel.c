#include "cluster_channel.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "summary.h"

static int channel_send(void *userdata, const char *peer_id, json_object *msg)
{
        return peers_send(userdata, peer_id, msg);
}

static int channel_hello_name(void *userdata, const char *peer_id, char *buf, size_t size)
{
        json_object *all = NULL, *peer = peers_lookup(userdata, peer_id, &all), *name = NULL;
        int r = -ENOENT;

        /* A lookup by id matches a unique prefix too: only the whole id is this peer. */
        if (peer && strcmp(json_object_get_string(json_object_object_get(peer, "node_id")), peer_id) == 0 &&
            json_object_object_get_ex(peer, "name", &name) && json_object_is_type(name, json_type_string)) {
                snprintf(buf, size, "%s", json_object_get_string(name));
                r = 0;
        }
        json_object_put(all);
        return r;
}

static void on_peer_message(const char *node_id, const char *type, json_object *msg, void *userdata)
{
        struct cluster *c = userdata;

        if (strcmp(type, "peer-up") == 0)
                cluster_peer_up(c, node_id);
        else if (strcmp(type, "peer-down") == 0)
                cluster_peer_down(c, node_id);
        else if (strcmp(type, SUMMARY_TYPE) == 0)
                (void)cluster_receive(c, node_id, msg);
}

int cluster_channel_new(struct event_base *base, struct peers *peers, const char *node_id, const char *name,
                        struct cluster **ret)
{
        struct cluster_transport t = { channel_send, channel_hello_name, peers };
        struct cluster *c = NULL;
        int r = cluster_new(base, node_id, name, &t, &c);

        if (r < 0)
                return r;
        r = peers_add_message_handler(peers, "cluster-", on_peer_message, c);
        if (r < 0) {
                cluster_free(c);
                return r;
        }
        *ret = c;
        return 0;
}

void cluster_channel_free(struct peers *peers, struct cluster *c)
{
        if (!c)
                return;
        if (peers)
                peers_remove_message_handler(peers, "cluster-");
        cluster_free(c);
}
