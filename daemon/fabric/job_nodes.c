/* The nodes a job starts on: read from the peer table, filtered by health, ordered the same way on
 * every node. */
#include "job_nodes.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/macro.h"
#include "common/strutil.h"
#include "inventory/fabric.h"

int job_nodes_add(struct job_nodes *nodes, const struct job_node *node)
{
        struct job_node *v = realloc(nodes->v, (nodes->n + 1) * sizeof(*v));

        if (!v)
                return -ENOMEM;
        nodes->v = v;
        v[nodes->n++] = *node;
        return 0;
}

void job_nodes_free(struct job_nodes *nodes)
{
        free(nodes->v);
        *nodes = (struct job_nodes){ 0 };
}

bool job_own_address(const struct fabric_facts *f, char *address, size_t size, char *ifname, size_t ifsize)
{
        /* First pass: netdevs under an active RDMA port (the ones NCCL_SOCKET_IFNAME names). */
        for (int pass = 0; pass < 2; pass++)
                for (size_t i = 0; i < f->netifs.n; i++) {
                        const struct netif *n = &f->netifs.v[i];
                        const struct rdma_port *port = rdma_find_port_by_netdev(&f->rdma, n->name, NULL);
                        char ipv4[16];

                        if (pass == 0 && (!port || port->state != RDMA_PORT_ACTIVE))
                                continue;
                        if (!fabric_ipv4_of(f, n->name, ipv4, sizeof(ipv4)))
                                continue;
                        snprintf(address, size, "%s", ipv4);
                        snprintf(ifname, ifsize, "%s", n->name);
                        return true;
                }
        return false;
}

static const char *member(json_object *o, const char *key)
{
        json_object *v;

        return json_object_object_get_ex(o, key, &v) && json_object_is_type(v, json_type_string)
                       ? json_object_get_string(v)
                       : NULL;
}

int job_nodes_add_peers(struct job_nodes *nodes, json_object *peers)
{
        json_object *list, *via;
        int r;

        if (!peers || !json_object_object_get_ex(peers, "peers", &list) ||
            !json_object_is_type(list, json_type_array))
                return 0;
        for (size_t i = 0; i < json_object_array_length(list); i++) {
                json_object *p = json_object_array_get_idx(list, i);
                const char *id = member(p, "node_id"), *name = member(p, "name"),
                           *state = member(p, "state");
                const char *remote = NULL;
                struct job_node node = { 0 };
                bool seen = false;

                /* Only a peer that said who it is counts; "self", "duplicate-id" and "rejected"
                 * entries are not other nodes of this cluster. */
                if (!id || !state ||
                    (strcmp(state, "up") != 0 && strcmp(state, "down") != 0 &&
                     strcmp(state, "connecting") != 0))
                        continue;
                for (size_t k = 0; k < nodes->n; k++)
                        if (strcmp(nodes->v[k].node_id, id) == 0)
                                seen = true;
                if (seen)
                        continue;
                if (json_object_object_get_ex(p, "via", &via) && via)
                        remote = member(via, "remote");
                snprintf(node.node_id, sizeof(node.node_id), "%s", id);
                snprintf(node.name, sizeof(node.name), "%s", name ? name : id);
                snprintf(node.address, sizeof(node.address), "%s", remote ? remote : "");
                node.is_up = strcmp(state, "up") == 0;
                if ((r = job_nodes_add(nodes, &node)) < 0)
                        return r;
        }
        return 0;
}

/* By name, then node id: names are what people set and read, so the head and the ranks are
 * predictable; the id only separates two nodes given one name. */
static int by_name(const void *a, const void *b)
{
        const struct job_node *x = *(const struct job_node *const *)a,
                              *y = *(const struct job_node *const *)b;
        int c = strcmp(x->name, y->name);

        return c ? c : strcmp(x->node_id, y->node_id);
}

static const char *left_out_reason(const struct job_node *n, char *buf, size_t size)
{
        char why[sizeof(n->doctor_why)];

        /* The failing checks fill doctor_why up to its size and no further: a full one was cut,
         * so it ends at a word with "..." rather than in the middle of a port's name. */
        snprintf(why, sizeof(why), "%s", n->doctor_why);
        if (strlen(why) >= sizeof(why) - 1)
                str_shorten(why, sizeof(why) - 2);
        if (!n->is_up)
                snprintf(buf, size, "not up: the peer channel to it is down");
        else if (strcmp(n->doctor, "failed") == 0)
                snprintf(buf, size, "its doctor fails%s%s", why[0] ? ": " : "", why);
        else if (!n->address[0])
                snprintf(buf, size, "no fabric address known for it");
        else
                return NULL;
        return buf;
}

static json_object *node_json(const struct job_node *n)
{
        json_object *o = json_object_new_object();

        json_object_object_add(o, "name", json_object_new_string(n->name));
        json_object_object_add(o, "node_id", json_object_new_string(n->node_id));
        json_object_object_add(o, "address", n->address[0] ? json_object_new_string(n->address) : NULL);
        json_object_object_add(o, "self", json_object_new_boolean(n->is_self));
        json_object_object_add(o, "doctor", n->doctor[0] ? json_object_new_string(n->doctor) : NULL);
        if (n->doctor[0] && n->is_doctor_stale)
                json_object_object_add(o, "doctor_stale", json_object_new_boolean(true));
        return o;
}

json_object *job_plan_build(const struct job_nodes *nodes, const char *head_name)
{
        _cleanup_free_ const struct job_node **ok = calloc(nodes->n + 1, sizeof(*ok));
        json_object *o = json_object_new_object(), *list = json_object_new_array(),
                    *left = json_object_new_array(), *head = NULL;
        const struct job_node *chosen = NULL;
        char error[384] = "", why[256] = "", reason[320];
        size_t n_ok = 0, first = 0;
        int self_rank = -1;

        for (size_t i = 0; ok && i < nodes->n; i++) {
                const struct job_node *n = &nodes->v[i];

                if (left_out_reason(n, reason, sizeof(reason))) {
                        json_object *l = node_json(n);

                        json_object_object_add(l, "reason", json_object_new_string(reason));
                        json_object_array_add(left, l);
                } else
                        ok[n_ok++] = n;
        }
        if (ok)
                qsort(ok, n_ok, sizeof(*ok), by_name);
        if (head_name) {
                for (size_t i = 0; i < n_ok; i++)
                        if (strcmp(ok[i]->name, head_name) == 0) {
                                chosen = ok[i];
                                first = i;
                        }
                if (chosen)
                        snprintf(why, sizeof(why), "[cluster] head names it");
                else {
                        const char *r = NULL;

                        for (size_t i = 0; i < nodes->n && !r; i++)
                                if (strcmp(nodes->v[i].name, head_name) == 0)
                                        r = left_out_reason(&nodes->v[i], reason, sizeof(reason));
                        /* No other head instead: a node that sees the configured one healthy would
                         * pick it, and the job would have two rendezvous points. */
                        snprintf(error, sizeof(error), "[cluster] head is %s, which %s%s: no rendezvous",
                                 head_name, r ? "is left out: " : "this node does not know", r ? r : "");
                }
        } else if (n_ok > 0) {
                chosen = ok[0];
                snprintf(why, sizeof(why), "the first healthy node by name: [cluster] head is not set");
        } else
                snprintf(error, sizeof(error),
                         "no node is up with a doctor that does not fail: no rendezvous");

        /* Rank order: the head first (torchrun's rank 0 hosts the rendezvous store), then by name. */
        if (chosen) {
                memmove(ok + 1, ok, first * sizeof(*ok));
                ok[0] = chosen;
        }
        for (size_t i = 0; i < n_ok; i++) {
                json_object *e = node_json(ok[i]);

                json_object_object_add(e, "rank", json_object_new_int((int)i));
                json_object_array_add(list, e);
                if (ok[i]->is_self)
                        self_rank = (int)i;
        }
        if (chosen) {
                head = json_object_new_object();
                json_object_object_add(head, "name", json_object_new_string(chosen->name));
                json_object_object_add(head, "node_id", json_object_new_string(chosen->node_id));
                json_object_object_add(head, "address", json_object_new_string(chosen->address));
                json_object_object_add(head, "why", json_object_new_string(why));
        }
        json_object_object_add(o, "nodes", list);
        json_object_object_add(o, "left_out", left);
        json_object_object_add(o, "head", head);
        json_object_object_add(o, "error", error[0] ? json_object_new_string(error) : NULL);
        json_object_object_add(o, "rank", self_rank >= 0 ? json_object_new_int(self_rank) : NULL);
        json_object_object_add(o, "size", json_object_new_int((int)n_ok));
        return o;
}
