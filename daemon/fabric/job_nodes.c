/* The nodes a job may start on, read from the cluster view's nodes and their sections. */
#include "job_nodes.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/json_get.h"
#include "common/macro.h"

int job_nodes_add(struct job_nodes *nodes, const struct job_node *node)
{
        struct job_node *v = realloc(nodes->v, (nodes->n + 1) * sizeof(*v));

        if (!v)
                return -ENOMEM;
        nodes->v = v;
        v[nodes->n++] = *node;
        return 0;
}

static bool get_bool(json_object *o, const char *key)
{
        json_object *v;

        return json_object_object_get_ex(o, key, &v) && json_object_is_type(v, json_type_boolean) &&
               json_object_get_boolean(v);
}

void job_nodes_free(struct job_nodes *nodes)
{
        free(nodes->v);
        *nodes = (struct job_nodes){ 0 };
}

void job_node_read_doctor(struct job_node *n, json_object *doctor)
{
        json_object *v, *checks;
        const char *s = NULL;

        n->doctor[0] = n->doctor_why[0] = '\0';
        if (json_object_object_get_ex(doctor, "verdict", &v) ||
            json_object_object_get_ex(doctor, "status", &v))
                s = json_object_get_string(v);
        if (!s)
                return;
        /* Anything else ("unknown": the node could not run it) leaves the doctor not known. */
        if (strcmp(s, "fail") == 0 || strcmp(s, "failed") == 0)
                snprintf(n->doctor, sizeof(n->doctor), "failed");
        else if (strcmp(s, "warn") == 0 || strcmp(s, "warning") == 0)
                snprintf(n->doctor, sizeof(n->doctor), "warning");
        else if (strcmp(s, "ok") == 0)
                snprintf(n->doctor, sizeof(n->doctor), "ok");
        else
                return;
        if (strcmp(n->doctor, "failed") != 0 || !json_object_object_get_ex(doctor, "checks", &checks) ||
            !json_object_is_type(checks, json_type_array))
                return;
        for (size_t i = 0; i < json_object_array_length(checks); i++) {
                json_object *c = json_object_array_get_idx(checks, i);
                const char *status = json_get_string(c, "status", "");
                size_t used = strlen(n->doctor_why);

                if (strcmp(status, "fail") != 0 && strcmp(status, "failed") != 0)
                        continue;
                snprintf(n->doctor_why + used, sizeof(n->doctor_why) - used, "%s%s: %s", used ? "; " : "",
                         json_get_string(c, "id", "?"), json_get_string(c, "summary", ""));
        }
}

/* A netdev name as the kernel allows it: 1 to 15 bytes, printable, no space or slash. */
static bool is_ifname(const char *s)
{
        size_t len = s ? strlen(s) : 0;

        if (len == 0 || len >= IF_NAMESIZE)
                return false;
        for (; *s; s++)
                if (*s <= ' ' || *s >= 0x7f || *s == '/' || *s == ':')
                        return false;
        return true;
}

/* "A.B.C.D" or "A.B.C.D/P" (P 1 to 32; none: 32) from another node into a. */
static bool read_address(json_object *o, struct job_address *a)
{
        const char *ifname = json_get_string(o, "ifname", NULL), *text = json_get_string(o, "address", NULL);
        char buf[24], *slash, *end;
        struct in_addr in;
        long prefix = 32;

        if (!is_ifname(ifname) || !text || strlen(text) >= sizeof(buf))
                return false;
        snprintf(buf, sizeof(buf), "%s", text);
        slash = strchr(buf, '/');
        if (slash) {
                *slash = '\0';
                errno = 0;
                prefix = strtol(slash + 1, &end, 10);
                if (errno || *end || end == slash + 1 || prefix < 1 || prefix > 32)
                        return false;
        }
        if (inet_pton(AF_INET, buf, &in) != 1)
                return false;
        *a = (struct job_address){ .host = ntohl(in.s_addr), .prefix = (int)prefix };
        snprintf(a->ifname, sizeof(a->ifname), "%s", ifname);
        inet_ntop(AF_INET, &in, a->address, sizeof(a->address));
        a->has_rdma = get_bool(o, "rdma");
        return true;
}

void job_node_read_addresses(struct job_node *n, json_object *addresses)
{
        json_object *management, *fabric;

        n->has_addresses = false;
        n->n_fabric = 0;
        n->management = (struct job_address){ 0 };
        if (!json_object_object_get_ex(addresses, "fabric", &fabric) ||
            !json_object_is_type(fabric, json_type_array))
                return;
        n->has_addresses = true;
        if (json_object_object_get_ex(addresses, "management", &management) && management &&
            !read_address(management, &n->management))
                n->management = (struct job_address){ 0 };
        for (size_t i = 0; i < json_object_array_length(fabric) && n->n_fabric < JOB_NODE_MAX_ADDRESSES; i++)
                if (read_address(json_object_array_get_idx(fabric, i), &n->fabric[n->n_fabric]))
                        n->n_fabric++;
}

int job_nodes_add_cluster(struct job_nodes *nodes, json_object *list)
{
        for (size_t i = 0; list && i < json_object_array_length(list); i++) {
                json_object *e = json_object_array_get_idx(list, i), *section;
                const char *id = json_get_string(e, "node_id", NULL),
                           *name = json_get_string(e, "name", NULL);
                struct job_node n = { 0 };
                int r;

                if (!id || !name || !id[0])
                        continue;
                snprintf(n.node_id, sizeof(n.node_id), "%s", id);
                snprintf(n.name, sizeof(n.name), "%s", name[0] ? name : id);
                n.is_self = get_bool(e, "self");
                n.is_stale = get_bool(e, "stale");
                n.age_s = (uint64_t)json_get_int(e, "age_s", 0);
                if (json_object_object_get_ex(e, "doctor", &section) && section)
                        job_node_read_doctor(&n, section);
                if (json_object_object_get_ex(e, "addresses", &section) && section)
                        job_node_read_addresses(&n, section);
                if ((r = job_nodes_add(nodes, &n)) < 0)
                        return r;
        }
        return 0;
}
