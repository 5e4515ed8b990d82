#include "cluster_channel.h"

#include <string.h>

#include "cluster_offer.h"
#include "summary.h"

static int channel_send(void *userdata, const char *peer_id, json_object *msg)
{
        return peers_send(userdata, peer_id, msg);
}

/* Asked for every summary and alive a peer sends of itself: a lookup, not the peers' JSON. */
static int channel_hello_name(void *userdata, const char *peer_id, char *buf, size_t size)
{
        return peers_hello_name(userdata, peer_id, buf, size);
}

static bool channel_is_slow(void *userdata, const char *peer_id)
{
        return peers_is_slow(userdata, peer_id);
}

static bool channel_budget_defers(void *userdata)
{
        return peers_budget_defers(userdata);
}

/* With the heartbeat: a peer gets this node's alive in the same write. */
static void on_heartbeat_tick(void *userdata)
{
        cluster_refresh(userdata);
}

static void on_peer_message(const char *node_id, const char *type, json_object *msg, void *userdata)
{
        struct cluster *c = userdata;

        if (strcmp(type, "peer-up") == 0)
                cluster_peer_up(c, node_id);
        else if (strcmp(type, "peer-down") == 0)
                cluster_peer_down(c, node_id);
        else if (strcmp(type, SUMMARY_TYPE) == 0 || strcmp(type, SUMMARY_ALIVE_TYPE) == 0 ||
                 strcmp(type, SUMMARY_WANT_TYPE) == 0 || strcmp(type, CLUSTER_OFFER_TYPE) == 0)
                (void)cluster_receive_message(c, node_id, msg);
}

int cluster_channel_new(struct event_base *base, struct peers *peers, const char *node_id, const char *name,
                        struct cluster **ret)
{
        struct cluster_transport t = { .send = channel_send,
                                       .hello_name = channel_hello_name,
                                       .is_slow = channel_is_slow,
                                       .budget_defers = channel_budget_defers,
                                       .userdata = peers };
        struct cluster *c = NULL;
        int r = cluster_new(base, node_id, name, &t, &c);

        if (r < 0)
                return r;
        r = peers_add_message_handler(peers, "cluster-", on_peer_message, c);
        if (r < 0) {
                cluster_free(c);
                return r;
        }
        peers_set_tick_hook(peers, on_heartbeat_tick, c);
        cluster_set_refresh_external(c, true);
        *ret = c;
        return 0;
}

void cluster_channel_free(struct peers *peers, struct cluster *c)
{
        if (!c)
                return;
        if (peers) {
                peers_set_tick_hook(peers, NULL, NULL);
                peers_remove_message_handler(peers, "cluster-");
        }
        cluster_free(c);
}
