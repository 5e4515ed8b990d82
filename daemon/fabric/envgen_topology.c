/* The variables a cabling shape wants, by shape and by the installed NCCL's version. Each
 * variable's release is where NCCL's source (github.com/NVIDIA/nccl, its tags) first reads it;
 * the file that reads it is named beside it. */
#include "envgen_topology.h"

#include <stdio.h>
#include <string.h>

#include "common/json_get.h"
#include "common/macro.h"

struct nccl_variable {
        const char *name;
        const char *since; /* the first release that reads it */
};

/* clang-format off */
static const struct nccl_variable nccl_variables[] = {
        { "NCCL_SOCKET_IFNAME",          "2.4.2" },  /* src/misc/socket.cc; the oldest tag */
        { "NCCL_IB_HCA",                 "2.4.2" },  /* src/transport/net_ib/init.cc */
        { "NCCL_IB_GID_INDEX",           "2.4.2" },  /* src/transport/net_ib/connect.cc */
        { "NCCL_IB_TIMEOUT",             "2.4.2" },  /* src/transport/net_ib/connect.cc */
        { "NCCL_NET_GDR_LEVEL",          "2.4.2" },  /* src/graph/paths.cc */
        { "NCCL_ALGO",                   "2.5.6" },  /* src/graph/tuning.cc */
        { "NCCL_NET_PLUGIN",             "2.11.4" }, /* src/plugin/net.cc */
        { "NCCL_DMABUF_ENABLE",          "2.13.4" }, /* src/init.cc */
        { "NCCL_CUMEM_ENABLE",           "2.18.1" }, /* src/misc/cudawrap.cc */
        { "NCCL_IB_MERGE_NICS",          "2.20.3" }, /* src/transport/net_ib/init.cc */
        { "NCCL_RUNTIME_CONNECT",        "2.22.3" }, /* src/init.cc */
        { "NCCL_IB_SUBNET_AWARE_ROUTING", "2.30.7" }, /* src/transport/net_ib/connect.cc */
};
/* clang-format on */

const char *envgen_nccl_since(const char *name)
{
        for (size_t i = 0; i < ARRAY_SIZE(nccl_variables); i++)
                if (strcmp(nccl_variables[i].name, name) == 0)
                        return nccl_variables[i].since;
        return NULL;
}

/* Adds a variable of the shape, or a note when the installed NCCL's version is not known: these
 * are recent, and one NCCL does not read is noise at best. envgen_nccl_filter then drops those
 * newer than the installed NCCL. */
static void add_known(const struct fabric_facts *f, json_object *vars, json_object *notes, const char *name,
                      const char *value, const char *why)
{
        json_object *v;
        char note[1024];

        if (!f->host.has_nccl || !f->host.nccl_version[0]) {
                snprintf(note, sizeof(note), "%s=%s not set: %s, and it needs NCCL %s or later (%s)", name,
                         value,
                         f->host.has_nccl ? "the installed NCCL's version is not known"
                                          : "no NCCL library found here",
                         envgen_nccl_since(name), why);
                json_object_array_add(notes, json_object_new_string(note));
                return;
        }
        v = json_object_new_object();
        json_object_object_add(v, "name", json_object_new_string(name));
        json_object_object_add(v, "value", json_object_new_string(value));
        json_object_object_add(v, "why", json_object_new_string(why));
        json_object_array_add(vars, v);
}

void envgen_nccl_filter(const struct fabric_facts *f, json_object *vars, json_object *notes)
{
        const char *installed = f->host.nccl_version;

        if (!f->host.has_nccl || !installed[0])
                return;
        for (size_t i = json_object_array_length(vars); i-- > 0;) {
                json_object *v = json_object_array_get_idx(vars, i);
                const char *name = json_get_string(v, "name", "");
                const char *since = envgen_nccl_since(name);
                char note[1024];

                if (!since || strverscmp(installed, since) >= 0)
                        continue;
                snprintf(note, sizeof(note),
                         "%s=%s not set: the installed NCCL %s does not read it (%s or later does): %s",
                         name, json_get_string(v, "value", ""), installed, since,
                         json_get_string(v, "why", ""));
                json_object_array_add(notes, json_object_new_string(note));
                json_object_array_del_idx(vars, i, 1);
        }
}

json_object *envgen_topology_add(const struct fabric_facts *f, bool has_twins, json_object *vars,
                                 json_object *notes)
{
        const char *shape;
        json_object *o, *missing;
        size_t n_nodes;
        int pairs_without_link = 0;
        char why[512];

        if (!f->topology)
                return NULL;
        shape = json_get_string(f->topology, "shape", "unknown");
        n_nodes = json_object_array_length(json_object_object_get(f->topology, "nodes"));
        if (json_object_object_get_ex(f->topology, "pairs_without_link", &missing))
                pairs_without_link = json_object_get_int(missing);
        o = json_object_new_object();
        json_object_object_add(o, "shape", json_object_new_string(shape));
        json_object_object_add(o, "nodes", json_object_new_int((int)n_nodes));

        if ((strcmp(shape, "pair") == 0 || strcmp(shape, "switch") == 0) && has_twins)
                add_known(f, vars, notes, "NCCL_IB_MERGE_NICS", "1",
                          "both twins of the cabled port as one NIC, as NVIDIA's two-Spark and switch "
                          "playbooks run them: every peer is reached through the same port, and one twin "
                          "alone "
                          "gets about half its bandwidth (stated, since an inherited 0 would split them)");
        if (strcmp(shape, "ring") == 0 || strcmp(shape, "mesh") == 0) {
                snprintf(why, sizeof(why),
                         "%s of %zu: every cable its own subnet, and NCCL picks the local NIC on the peer's "
                         "subnet "
                         "instead of pairing HCAs by index (which times out QP setup where port 0 does not "
                         "face "
                         "port 0), as NVIDIA's three-Spark playbook runs it with stock NCCL 2.30.7 (before "
                         "it, "
                         "only a patched build, NVIDIA's dgxspark-3node-ring branch, had it)",
                         shape, n_nodes);
                add_known(f, vars, notes, "NCCL_IB_SUBNET_AWARE_ROUTING", "1", why);
                if (f->host.has_nccl && f->host.nccl_version[0] &&
                    strverscmp(f->host.nccl_version, envgen_nccl_since("NCCL_IB_SUBNET_AWARE_ROUTING")) >= 0)
                        add_known(
                                f, vars, notes, "NCCL_NET_PLUGIN", "none",
                                "NCCL's built-in IB transport, where subnet-aware routing lives, not a "
                                "network "
                                "plugin a container may ship (NVIDIA's three-Spark launch script sets it)");
        }
        if (strcmp(shape, "ring") == 0 || strcmp(shape, "mesh") == 0) {
                /* The field disagrees: the owner says. */
                if (f->ring_merge_nics)
                        add_known(f, vars, notes, "NCCL_IB_MERGE_NICS", f->ring_merge_nics,
                                  "[fabric] ring_merge_nics sets it: on rings reports disagree (0 with the "
                                  "patched three-Spark build NVIDIA's older script used, 1 where both twins "
                                  "of a cable should count as one NIC)");
                else
                        json_object_array_add(
                                notes,
                                json_object_new_string(
                                        "NCCL_IB_MERGE_NICS not set: on rings reports disagree whether "
                                        "it should be 0 (the patched three-Spark build NVIDIA's older "
                                        "script used) or 1 (both twins of a cable as one NIC); "
                                        "[fabric] ring_merge_nics = 0 or 1 sets it"));
        }
        if (strcmp(shape, "ring") == 0 && pairs_without_link > 0) {
                snprintf(why, sizeof(why),
                         "ring of %zu: %d pair%s of nodes ha%s no direct link, and the tree algorithm's "
                         "connect "
                         "fails there; the ring algorithm only talks to neighbours",
                         n_nodes, pairs_without_link, pairs_without_link == 1 ? "" : "s",
                         pairs_without_link == 1 ? "s" : "ve");
                add_known(f, vars, notes, "NCCL_ALGO", "Ring", why);
                add_known(
                        f, vars, notes, "NCCL_RUNTIME_CONNECT", "1",
                        "connect each peer at its first use, so no connection is tried to a node without a "
                        "direct link");
                add_known(f, vars, notes, "NCCL_CUMEM_ENABLE", "1",
                          "NCCL's cuMem allocations, as owners of four-Spark rings run them beside the ring "
                          "algorithm and runtime connect");
        }
        return o;
}
