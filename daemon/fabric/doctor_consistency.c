/*
 * The doctor's check that the up nodes run the same software: each node's "software" section
 * (inventory/software.h) compared key by key. A difference of sparkd, kernel, driver, firmware
 * or NCCL version is named with the nodes on each side; one NCCL version in two builds (ELF
 * build ids differ) fails, since ranks of one job loading different builds may hang at init
 * with nothing in any log.
 */
#include <stdio.h>
#include <string.h>

#include "doctor_checks.h"

#define MAX_GROUPS    16
#define MAX_NODE_LIST 200

/* The nodes that share one value of a key. */
struct group {
        char value[160];
        char nodes[MAX_NODE_LIST];
        size_t n;
};

struct groups {
        struct group v[MAX_GROUPS];
        size_t n;
        size_t n_past; /* values past MAX_GROUPS, not shown */
};

static const char *jstr(json_object *o, const char *key)
{
        json_object *v;

        return json_object_object_get_ex(o, key, &v) && v && json_object_is_type(v, json_type_string)
                       ? json_object_get_string(v)
                       : NULL;
}

static const char *node_name(json_object *node)
{
        return jstr(node, "name") ? jstr(node, "name") : jstr(node, "node_id") ? jstr(node, "node_id") : "?";
}

static void group_add(struct groups *g, const char *value, const char *node)
{
        struct group *e = NULL;
        size_t len;

        for (size_t i = 0; i < g->n && !e; i++)
                if (strcmp(g->v[i].value, value) == 0)
                        e = &g->v[i];
        if (!e) {
                if (g->n == MAX_GROUPS) {
                        g->n_past++;
                        return;
                }
                e = &g->v[g->n++];
                snprintf(e->value, sizeof(e->value), "%s", value);
        }
        len = strlen(e->nodes);
        if (len < sizeof(e->nodes) - 1)
                snprintf(e->nodes + len, sizeof(e->nodes) - len, "%s%s", e->n ? ", " : "", node);
        e->n++;
}

static void groups_evidence(struct check *c, const struct groups *g, const char *what)
{
        for (size_t i = 0; i < g->n; i++)
                evidence(c, "%s %s: %s", what, g->v[i].value, g->v[i].nodes);
        if (g->n_past)
                evidence(c, "%s: %zu more values not shown", what, g->n_past);
}

/* The distinct fw_ver values of a node's RDMA devices, "28.45.1020" or "28.45.1020, 28.44.1036". */
static void firmware_value(json_object *software, char *buf, size_t size)
{
        json_object *list = NULL;
        size_t used = 0;

        buf[0] = '\0';
        json_object_object_get_ex(software, "firmware", &list);
        for (size_t i = 0; list && i < json_object_array_length(list); i++) {
                const char *fw = jstr(json_object_array_get_idx(list, i), "fw_ver");

                if (!fw || strstr(buf, fw) || used >= size)
                        continue;
                used += (size_t)snprintf(buf + used, size - used, "%s%s", used ? ", " : "", fw);
        }
        if (!buf[0])
                snprintf(buf, size, "none");
}

/* One scalar key over every node: 1 when the nodes differ (named in the evidence). */
static int compare_key(struct check *c, json_object *nodes, const char *key, const char *what)
{
        struct groups g = { .n = 0 };

        for (size_t i = 0; i < json_object_array_length(nodes); i++) {
                json_object *node = json_object_array_get_idx(nodes, i), *software = NULL;
                char value[160];

                json_object_object_get_ex(node, "software", &software);
                if (strcmp(key, "firmware") == 0)
                        firmware_value(software, value, sizeof(value));
                else
                        snprintf(value, sizeof(value), "%s",
                                 jstr(software, key) ? jstr(software, key) : "none");
                group_add(&g, value, node_name(node));
        }
        if (g.n < 2)
                return 0;
        groups_evidence(c, &g, what);
        return 1;
}

/* The library of node in slot ("system", or a wheel's path): NULL when the node has none. */
static json_object *nccl_in_slot(json_object *node, const char *slot)
{
        json_object *software = NULL, *list = NULL;

        json_object_object_get_ex(node, "software", &software);
        json_object_object_get_ex(software, "nccl", &list);
        for (size_t i = 0; list && i < json_object_array_length(list); i++) {
                json_object *lib = json_object_array_get_idx(list, i);
                const char *origin = jstr(lib, "origin"), *path = jstr(lib, "path");

                if (strcmp(slot, "system") == 0
                            ? origin && strcmp(origin, "system") == 0
                            : path && strcmp(path, slot) == 0 && !(origin && strcmp(origin, "system") == 0))
                        return lib;
        }
        return NULL;
}

/* One NCCL slot over every node. *versions and *builds count what differs. */
static void compare_nccl_slot(struct check *c, json_object *nodes, const char *slot, unsigned *versions,
                              unsigned *builds)
{
        struct groups by_version = { .n = 0 }, by_build = { .n = 0 };
        const char *version = NULL;
        bool is_one_version = true;
        char what[300];

        snprintf(what, sizeof(what), "NCCL (%s)", strcmp(slot, "system") == 0 ? "the system's" : slot);
        for (size_t i = 0; i < json_object_array_length(nodes); i++) {
                json_object *node = json_object_array_get_idx(nodes, i), *lib = nccl_in_slot(node, slot);
                const char *v = lib && jstr(lib, "version") ? jstr(lib, "version")
                                : lib                       ? "unknown"
                                                            : "none";
                char build[160];

                group_add(&by_version, v, node_name(node));
                if (!lib)
                        continue;
                if (version && strcmp(version, v) != 0)
                        is_one_version = false;
                version = v;
                snprintf(build, sizeof(build), "%s build %s", jstr(lib, "path") ? jstr(lib, "path") : "?",
                         jstr(lib, "build_id") ? jstr(lib, "build_id") : "unknown");
                group_add(&by_build, build, node_name(node));
        }
        if (by_version.n > 1) {
                groups_evidence(c, &by_version, what);
                (*versions)++;
                return;
        }
        if (!is_one_version || by_build.n < 2)
                return;
        /* Builds count as different only where both ids are known; a path alone may differ. */
        for (size_t i = 0; i < by_build.n; i++)
                for (size_t j = i + 1; j < by_build.n; j++) {
                        const char *a = strstr(by_build.v[i].value, " build "),
                                   *b = strstr(by_build.v[j].value, " build ");

                        if (strcmp(a, " build unknown") != 0 && strcmp(b, " build unknown") != 0 &&
                            strcmp(a, b) != 0) {
                                evidence(c, "%s %s: same version, different build:", what, version);
                                groups_evidence(c, &by_build, "  libnccl");
                                (*builds)++;
                                return;
                        }
                }
}

/* Every slot any node has: the system's library, then each wheel path once. */
static void compare_nccl(struct check *c, json_object *nodes, unsigned *versions, unsigned *builds)
{
        struct groups slots = { .n = 0 };

        group_add(&slots, "system", "");
        for (size_t i = 0; i < json_object_array_length(nodes); i++) {
                json_object *software = NULL, *list = NULL;

                json_object_object_get_ex(json_object_array_get_idx(nodes, i), "software", &software);
                json_object_object_get_ex(software, "nccl", &list);
                for (size_t j = 0; list && j < json_object_array_length(list); j++) {
                        json_object *lib = json_object_array_get_idx(list, j);
                        const char *origin = jstr(lib, "origin");

                        if (jstr(lib, "path") && !(origin && strcmp(origin, "system") == 0))
                                group_add(&slots, jstr(lib, "path"), "");
                }
        }
        for (size_t i = 0; i < slots.n; i++)
                compare_nccl_slot(c, nodes, slots.v[i].value, versions, builds);
}

void doctor_check_consistency(struct check *c, const struct fabric_facts *f)
{
        static const char *const keys[][2] = {
                { "sparkd", "sparkd" },
                { "kernel", "kernel" },
                { "driver", "NVIDIA driver" },
                { "firmware", "ConnectX firmware" },
        };
        json_object *nodes = f->software_nodes;
        size_t n = json_object_array_length(nodes);
        unsigned differ = 0, versions = 0, builds = 0;

        check_begin(c, "consistency");
        if (n < 2) {
                check_end(c, DOCTOR_OK, NULL, "%s",
                          n ? "no other up node's software is known yet"
                            : "no node's software is known yet");
                return;
        }
        for (size_t i = 0; i < ARRAY_SIZE(keys); i++)
                differ += (unsigned)compare_key(c, nodes, keys[i][0], keys[i][1]);
        compare_nccl(c, nodes, &versions, &builds);
        if (builds) {
                check_end(c, DOCTOR_FAIL,
                          "install one NCCL build on every node (the same package or wheel file): ranks "
                          "loading different builds of one version can hang at init",
                          "the same NCCL version in different builds on %zu up nodes%s", n,
                          differ + versions ? ", and other software differs" : "");
                return;
        }
        if (differ + versions) {
                check_end(c, DOCTOR_WARN,
                          "install the same kernel, NVIDIA driver, ConnectX firmware, NCCL and sparkd on "
                          "every node",
                          "%u kind%s of software differ across %zu up nodes", differ + versions,
                          differ + versions == 1 ? "" : "s", n);
                return;
        }
        check_end(c, DOCTOR_OK, NULL, "the same software on %zu up nodes", n);
}
