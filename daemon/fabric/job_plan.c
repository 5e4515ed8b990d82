/* The job plan from the cluster view's nodes: members, plane, head, ranks and digest. */
#include "job_plan.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/fnv1a.h"
#include "common/macro.h"
#include "common/strutil.h"

/* A member with the address it has on the plane. */
struct member {
        const struct job_node *node;
        const struct job_address *address;
};

bool job_plan_name_is_unique(const struct job_nodes *nodes, const char *name)
{
        const char *first = NULL;

        for (size_t i = 0; i < nodes->n; i++) {
                if (strcmp(nodes->v[i].name, name) != 0)
                        continue;
                /* The cluster table may remember the other carrier after the view dropped it: a
                 * rogue that leaves and comes back must not take the name while the real node is
                 * away. */
                if (nodes->v[i].is_name_shared || (first && strcmp(first, nodes->v[i].node_id) != 0))
                        return false;
                first = nodes->v[i].node_id;
        }
        return first != NULL;
}

static uint32_t mask_of(int prefix)
{
        return prefix <= 0 ? 0 : prefix >= 32 ? 0xffffffffu : ~((1u << (32 - prefix)) - 1);
}

/* n's lowest address in the subnet net/prefix, or NULL. */
static const struct job_address *address_in(const struct job_node *n, uint32_t net, int prefix)
{
        const struct job_address *best = NULL;

        for (size_t i = 0; i < n->n_fabric; i++) {
                const struct job_address *a = &n->fabric[i];

                if (a->prefix == prefix && (a->host & mask_of(prefix)) == net &&
                    (!best || a->host < best->host))
                        best = a;
        }
        return best;
}

static bool share_subnet(const struct job_node *a, const struct job_node *b)
{
        for (size_t i = 0; i < a->n_fabric; i++)
                if (address_in(b, a->fabric[i].host & mask_of(a->fabric[i].prefix), a->fabric[i].prefix))
                        return true;
        return false;
}

/* The lowest fabric subnet (network, then prefix) that holds an address of every candidate: true
 * with it in net and prefix. */
static bool common_subnet(struct member *c, size_t n, uint32_t *net, int *prefix)
{
        bool found = false;

        for (size_t i = 0; n > 0 && i < c[0].node->n_fabric; i++) {
                const struct job_address *a = &c[0].node->fabric[i];
                uint32_t m = a->host & mask_of(a->prefix);
                bool all = true;

                for (size_t k = 1; k < n && all; k++)
                        all = address_in(c[k].node, m, a->prefix) != NULL;
                if (all && (!found || m < *net || (m == *net && a->prefix < *prefix))) {
                        *net = m;
                        *prefix = a->prefix;
                        found = true;
                }
        }
        return found;
}

static int by_name(const void *a, const void *b)
{
        const struct member *x = a, *y = b;
        int c = strcmp(x->node->name, y->node->name);

        return c ? c : strcmp(x->node->node_id, y->node->node_id);
}

static const char *left_out_reason(const struct job_node *n, char *buf, size_t size)
{
        char why[sizeof(n->doctor_why)];

        /* The failing checks fill doctor_why up to its size and no further: a full one was cut,
         * so it ends at a word with "..." rather than in the middle of a port's name. */
        snprintf(why, sizeof(why), "%s", n->doctor_why);
        if (strlen(why) >= sizeof(why) - 1)
                str_shorten(why, sizeof(why) - 2);
        if (n->is_stale)
                snprintf(buf, size, "its summary is stale: last heard %" PRIu64 " s ago", n->age_s);
        else if (strcmp(n->doctor, "failed") == 0)
                snprintf(buf, size, "its doctor fails%s%s", why[0] ? ": " : "", why);
        else if (!n->has_addresses)
                snprintf(buf, size, "its addresses are not known (no addresses section in its summary)");
        else
                return NULL;
        return buf;
}

static json_object *node_json(const struct job_node *n, const struct job_address *a)
{
        json_object *o = json_object_new_object();

        json_object_object_add(o, "name", json_object_new_string(n->name));
        json_object_object_add(o, "node_id", json_object_new_string(n->node_id));
        json_object_object_add(o, "address", a && a->address[0] ? json_object_new_string(a->address) : NULL);
        json_object_object_add(o, "ifname", a && a->ifname[0] ? json_object_new_string(a->ifname) : NULL);
        json_object_object_add(o, "self", json_object_new_boolean(n->is_self));
        json_object_object_add(o, "doctor", n->doctor[0] ? json_object_new_string(n->doctor) : NULL);
        return o;
}

/* A node left out shows its lowest fabric address, else its management one: what an owner knows
 * it by. */
static void leave_out(json_object *left, const struct job_node *n, const char *why)
{
        const struct job_address *a = n->management.address[0] ? &n->management : NULL;
        json_object *l;

        for (size_t i = 0; i < n->n_fabric; i++)
                if (a == &n->management || !a || n->fabric[i].host < a->host)
                        a = &n->fabric[i];
        l = node_json(n, a);

        json_object_object_add(l, "reason", json_object_new_string(why));
        json_object_array_add(left, l);
}

static void ip_text(uint32_t host, char buf[16])
{
        snprintf(buf, 16, "%u.%u.%u.%u", host >> 24, (host >> 16) & 0xff, (host >> 8) & 0xff, host & 0xff);
}

/* Chooses the plane and each candidate's address on it; leaves out (and drops from c) those
 * without one. Returns the new count. */
/* [cluster] rendezvous = fabric where no subnet holds every member: the owner routes between the
 * fabric's subnets, and each member is at its lowest fabric address. */
static size_t routed_fabric(struct member *c, size_t n, json_object *left, char *why, size_t size)
{
        size_t kept = 0;

        snprintf(why, size,
                 "the fabric, routed: [cluster] rendezvous = fabric says the owner routes between its "
                 "subnets; each member at its lowest fabric address");
        for (size_t i = 0; i < n; i++) {
                const struct job_address *a = NULL;

                for (size_t k = 0; k < c[i].node->n_fabric; k++)
                        if (!a || c[i].node->fabric[k].host < a->host)
                                a = &c[i].node->fabric[k];
                if (!a) {
                        leave_out(left, c[i].node, "no fabric address, and [cluster] rendezvous = fabric");
                        continue;
                }
                c[i].address = a;
                c[kept++] = c[i];
        }
        return kept;
}

static size_t choose_plane(struct member *c, size_t n, json_object *left, const char *wanted,
                           bool *is_fabric, char *why, size_t size)
{
        uint32_t net = 0;
        int prefix = 0;
        size_t kept = 0;
        char text[16];
        bool is_management = strcmp(wanted, "management") == 0;

        if (!is_management && n > 0 && common_subnet(c, n, &net, &prefix)) {
                *is_fabric = true;
                for (size_t i = 0; i < n; i++)
                        c[i].address = address_in(c[i].node, net, prefix);
                ip_text(net, text);
                snprintf(why, size,
                         "the fabric: %s/%d holds an address of every member, so each reaches the others "
                         "there",
                         text, prefix);
                return n;
        }
        *is_fabric = !is_management && strcmp(wanted, "fabric") == 0;
        if (*is_fabric)
                return routed_fabric(c, n, left, why, size);
        if (is_management)
                snprintf(why, size,
                         "the management network (each node's IPv4 default route): [cluster] rendezvous = "
                         "management; the data stays on the fabric");
        else {
                const char *a = NULL, *b = NULL;

                for (size_t i = 0; i < n && !a; i++)
                        for (size_t k = i + 1; k < n && !a; k++)
                                if (!share_subnet(c[i].node, c[k].node)) {
                                        a = c[i].node->name;
                                        b = c[k].node->name;
                                }
                if (a)
                        snprintf(why, size,
                                 "the management network (each node's IPv4 default route): the fabric does "
                                 "not link every pair (%s and %s share no fabric subnet, as opposite nodes "
                                 "of a ring of four); the data stays on the fabric",
                                 a, b);
                else
                        snprintf(
                                why, size,
                                "the management network (each node's IPv4 default route): no fabric subnet "
                                "holds every member (each cable its own subnet, as on a ring of three), and "
                                "NCCL's bootstrap announces one address per node that all the others must "
                                "reach; the data stays on the fabric");
        }
        for (size_t i = 0; i < n; i++) {
                if (!c[i].node->management.address[0]) {
                        leave_out(left, c[i].node,
                                  "no management address (no IPv4 default route), and the fabric does not "
                                  "link it with every other member");
                        continue;
                }
                c[i].address = &c[i].node->management;
                c[kept++] = c[i];
        }
        return kept;
}

/* Appends printf text to a growing buffer; the digest's input. */
static void canon(char **text, size_t *len, size_t *allocated, const char *fmt, ...) _printf_(4, 5);

static void canon(char **text, size_t *len, size_t *allocated, const char *fmt, ...)
{
        va_list ap;
        int n;

        if (!*text)
                return;
        for (;;) {
                va_start(ap, fmt);
                n = vsnprintf(*text + *len, *allocated - *len, fmt, ap);
                va_end(ap);
                if (n < 0) {
                        free(*text);
                        *text = NULL;
                        return;
                }
                if ((size_t)n < *allocated - *len) {
                        *len += (size_t)n;
                        return;
                }
                char *bigger = realloc(*text, *allocated * 2 + (size_t)n);

                if (!bigger) {
                        free(*text);
                        *text = NULL;
                        return;
                }
                *text = bigger;
                *allocated = *allocated * 2 + (size_t)n;
        }
}

static json_object *digest_of(const struct member *m, size_t n, bool is_fabric, bool has_head)
{
        size_t len = 0, allocated = 256;
        char *text = malloc(allocated), hex[17];

        if (text)
                text[0] = '\0';
        canon(&text, &len, &allocated, "sparkd-plan %d\nplane %s\n", JOB_PLAN_FORMAT,
              is_fabric ? "fabric" : "management");
        if (has_head)
                canon(&text, &len, &allocated, "rendezvous %s\nhead %s\n", m[0].address->address,
                      m[0].node->node_id);
        else
                canon(&text, &len, &allocated, "head none\n");
        for (size_t i = 0; i < n; i++)
                canon(&text, &len, &allocated, "member %zu %s %s %s\n", i, m[i].node->node_id,
                      m[i].address->address, m[i].node->name);
        if (!text)
                return NULL;
        snprintf(hex, sizeof(hex), "%016" PRIx64, fnv1a64(FNV1A64_INIT, text, len));
        free(text);
        return json_object_new_string(hex);
}

json_object *job_plan_build(const struct job_nodes *nodes, const char *head_name)
{
        return job_plan_build_on(nodes, head_name, "auto");
}

json_object *job_plan_build_on(const struct job_nodes *nodes, const char *head_name, const char *plane)
{
        _cleanup_free_ struct member *c = calloc(nodes->n + 1, sizeof(*c));
        json_object *o, *list, *left, *head = NULL, *self = NULL;
        char error[512] = "", why[256] = "", plane_why[512] = "", reason[320];
        size_t n = 0, first = 0;
        bool is_fabric = true;
        int self_rank = -1;

        if (!c)
                return NULL;
        o = json_object_new_object();
        list = json_object_new_array();
        left = json_object_new_array();
        for (size_t i = 0; i < nodes->n; i++) {
                if (left_out_reason(&nodes->v[i], reason, sizeof(reason)))
                        leave_out(left, &nodes->v[i], reason);
                else
                        c[n++].node = &nodes->v[i];
        }
        qsort(c, n, sizeof(*c), by_name);
        n = choose_plane(c, n, left, plane, &is_fabric, plane_why, sizeof(plane_why));

        if (head_name && !job_plan_name_is_unique(nodes, head_name)) {
                bool known = false;

                for (size_t i = 0; i < nodes->n; i++)
                        known = known || strcmp(nodes->v[i].name, head_name) == 0;
                snprintf(error, sizeof(error), "[cluster] head is %s, which %s: no rendezvous", head_name,
                         known ? "names more than one node of the cluster"
                               : "no node of the cluster is called");
        } else if (head_name) {
                for (size_t i = 0; i < n; i++)
                        if (strcmp(c[i].node->name, head_name) == 0)
                                first = i + 1;
                if (first)
                        snprintf(why, sizeof(why), "[cluster] head names it");
                else {
                        const char *r = NULL;

                        for (size_t i = 0; i < json_object_array_length(left) && !r; i++) {
                                json_object *l = json_object_array_get_idx(left, i), *v;

                                if (json_object_object_get_ex(l, "name", &v) &&
                                    strcmp(json_object_get_string(v), head_name) == 0 &&
                                    json_object_object_get_ex(l, "reason", &v))
                                        r = json_object_get_string(v);
                        }
                        /* No other head instead: a node that sees the configured one healthy would
                         * pick it, and the job would have two rendezvous points. */
                        snprintf(error, sizeof(error),
                                 "[cluster] head is %s, which is left out: %s: no rendezvous", head_name,
                                 r ? r : "?");
                }
        } else if (n > 0) {
                /* A name two node ids carry picks no head: whichever id sorted first would win. */
                for (size_t i = 0; i < n && !first; i++)
                        if (job_plan_name_is_unique(nodes, c[i].node->name))
                                first = i + 1;
                if (first)
                        snprintf(why, sizeof(why), "the first member by name: [cluster] head is not set");
                else
                        snprintf(error, sizeof(error),
                                 "every member's name is carried by another node id too (see sparkc "
                                 "cluster): no rendezvous");
        } else
                snprintf(error, sizeof(error),
                         "no node is fresh, with a doctor that does not fail and its addresses known: no "
                         "rendezvous");

        if (first) {
                struct member chosen = c[first - 1];

                memmove(c + 1, c, (first - 1) * sizeof(*c));
                c[0] = chosen;
        }
        for (size_t i = 0; i < n; i++) {
                json_object *e = node_json(c[i].node, c[i].address);

                json_object_object_add(e, "rank", json_object_new_int((int)i));
                json_object_array_add(list, e);
                if (c[i].node->is_self) {
                        self_rank = (int)i;
                        self = json_object_new_object();
                        json_object_object_add(self, "address",
                                               json_object_new_string(c[i].address->address));
                        json_object_object_add(self, "ifname", json_object_new_string(c[i].address->ifname));
                }
        }
        if (first) {
                head = json_object_new_object();
                json_object_object_add(head, "name", json_object_new_string(c[0].node->name));
                json_object_object_add(head, "node_id", json_object_new_string(c[0].node->node_id));
                json_object_object_add(head, "address", json_object_new_string(c[0].address->address));
                json_object_object_add(head, "why", json_object_new_string(why));
        }
        json_object_object_add(o, "format", json_object_new_int(JOB_PLAN_FORMAT));
        json_object_object_add(o, "digest", digest_of(c, n, is_fabric, first != 0));
        json_object_object_add(o, "plane", json_object_new_string(is_fabric ? "fabric" : "management"));
        json_object_object_add(o, "plane_why", json_object_new_string(plane_why));
        json_object_object_add(o, "head", head);
        json_object_object_add(o, "error", error[0] ? json_object_new_string(error) : NULL);
        json_object_object_add(o, "nodes", list);
        json_object_object_add(o, "left_out", left);
        json_object_object_add(o, "rank", self_rank >= 0 ? json_object_new_int(self_rank) : NULL);
        json_object_object_add(o, "size", json_object_new_int((int)n));
        json_object_object_add(o, "self", self);
        return o;
}
