/* The collective's messages on their way: to this node itself (handled from the loop), to an up
 * peer, or through every up peer to be relayed; each (sender, number) taken once. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "collective_internal.h"

double collective_now(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

bool collective_seen_before(struct collective *c, const char *from, uint32_t mid)
{
        for (size_t i = 0; i < COLLECTIVE_SEEN_MAX; i++)
                if (c->seen[i].mid == mid && strcmp(c->seen[i].from, from) == 0)
                        return true;
        snprintf(c->seen[c->seen_at].from, sizeof(c->seen[0].from), "%s", from);
        c->seen[c->seen_at].mid = mid;
        c->seen_at = (c->seen_at + 1) % COLLECTIVE_SEEN_MAX;
        return false;
}

/* To the node itself when it is an up peer, else to every up peer to relay. */
void collective_forward(struct collective *c, const char *to, json_object *msg)
{
        if (peers_send(c->peers, to, json_object_get(msg)) == -ENOTCONN)
                (void)peers_broadcast(c->peers, msg);
}

void collective_send(struct collective *c, enum collective_msg type, const char *cid, const char *to,
                     json_object *fields)
{
        json_object *msg;

        if (++c->next_mid > INT32_MAX)
                c->next_mid = 1;
        msg = collective_wire_new(type, cid, c->node_id, to, c->next_mid);
        json_object_object_foreach(fields, key, value)
                json_object_object_add(msg, key, json_object_get(value));
        json_object_put(fields);
        (void)collective_seen_before(c, c->node_id, c->next_mid);
        if (strcmp(to, c->node_id) == 0) {
                json_object_array_add(c->local, msg);
                event_active(c->local_event, EV_TIMEOUT, 0);
                return;
        }
        collective_forward(c, to, msg);
        json_object_put(msg);
}
