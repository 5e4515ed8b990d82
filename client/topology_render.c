/* The map as a table and as a Graphviz graph. */
#include "topology_render.h"

#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include "common/json_get.h"

static bool is_map(json_object *map)
{
        json_object *v;

        return json_object_object_get_ex(map, "links", &v) && json_object_is_type(v, json_type_array) &&
               json_object_object_get_ex(map, "nodes", &v) && json_object_is_type(v, json_type_array);
}

/* "spark1:enp1s0f0np0", or "sw1:swp3" for a switch port. */
static void end_label(json_object *end, char *buf, size_t size)
{
        if (json_object_object_get_ex(end, "name", NULL))
                snprintf(buf, size, "%s:%s", json_get_string(end, "name", "?"),
                         json_get_string(end, "netdev", "?"));
        else
                snprintf(buf, size, "%s:%s",
                         json_get_string(end, "switch", json_get_string(end, "other", "?")),
                         json_get_string(end, "port", "?"));
}

static void speed_label(int mbps, char *buf, size_t size)
{
        if (mbps <= 0)
                snprintf(buf, size, "?");
        else
                snprintf(buf, size, "%dG", mbps / 1000);
}

int topology_render_table(FILE *out, json_object *map)
{
        json_object *links = json_object_object_get(map, "links"),
                    *findings = json_object_object_get(map, "findings");
        size_t n_links, n_findings;

        if (!is_map(map))
                return -EINVAL;
        n_links = json_object_array_length(links);
        n_findings = findings ? json_object_array_length(findings) : 0;
        fprintf(out, "shape %s, %zu node%s, %zu link%s\n", json_get_string(map, "shape", "unknown"),
                json_object_array_length(json_object_object_get(map, "nodes")),
                json_object_array_length(json_object_object_get(map, "nodes")) == 1 ? "" : "s", n_links,
                n_links == 1 ? "" : "s");
        if (n_links)
                fprintf(out, "%-26s %-26s %-9s %-9s %-11s %-18s %s\n", "A", "B", "STATE", "SPEED", "MTU",
                        "SUBNET", "TWINS");
        for (size_t i = 0; i < n_links; i++) {
                json_object *l = json_object_array_get_idx(links, i);
                json_object *a = json_object_object_get(l, "a"), *b = json_object_object_get(l, "b");
                char al[160], bl[160], sa[16], sb[16], speed[40], mtu[40];
                int twins = (int)json_object_array_length(json_object_object_get(a, "twins"));

                end_label(a, al, sizeof(al));
                end_label(b, bl, sizeof(bl));
                speed_label(json_get_int(a, "speed_mbps", -1), sa, sizeof(sa));
                speed_label(json_get_int(b, "speed_mbps", -1), sb, sizeof(sb));
                snprintf(speed, sizeof(speed), "%s/%s", sa, sb);
                if (json_object_object_get_ex(b, "mtu", NULL))
                        snprintf(mtu, sizeof(mtu), "%d/%d", json_get_int(a, "mtu", -1),
                                 json_get_int(b, "mtu", -1));
                else
                        snprintf(mtu, sizeof(mtu), "%d", json_get_int(a, "mtu", -1));
                fprintf(out, "%-26s %-26s %-9s %-9s %-11s %-18s %d\n", al, bl,
                        json_get_string(l, "state", "?"), speed, mtu, json_get_string(l, "subnet", "-"),
                        twins);
                if (json_object_object_get_ex(l, "why", NULL))
                        fprintf(out, "  %s\n", json_get_string(l, "why", ""));
        }
        if (!n_findings) {
                fprintf(out, "no wiring findings\n");
                return 0;
        }
        fprintf(out, "findings:\n");
        for (size_t i = 0; i < n_findings; i++) {
                json_object *f = json_object_array_get_idx(findings, i);

                fprintf(out, "  %s %s: %s\n    fix: %s\n", json_get_string(f, "status", "?"),
                        json_get_string(f, "id", "?"), json_get_string(f, "summary", ""),
                        json_get_string(f, "fix", ""));
        }
        return 0;
}

/* A dot identifier: letters, digits and '_' only, so no name needs quoting rules. */
static void dot_id(char *buf, size_t size, const char *prefix, const char *name, int rail)
{
        size_t used = (size_t)snprintf(buf, size, "%s_", prefix);

        for (const char *c = name; *c && used + 4 < size; c++)
                buf[used++] = (char)((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') ||
                                                     (*c >= '0' && *c <= '9')
                                             ? *c
                                             : '_');
        buf[used] = '\0';
        if (rail >= 0)
                snprintf(buf + used, size - used, "_r%d", rail);
}

/* A label in double quotes: " and \ escaped, a line break as dot's \n. */
static void dot_quoted(FILE *out, const char *s)
{
        fputc('"', out);
        for (; *s; s++) {
                if (*s == '\n') {
                        fputs("\\n", out);
                        continue;
                }
                if (*s == '"' || *s == '\\')
                        fputc('\\', out);
                fputc(*s, out);
        }
        fputc('"', out);
}

static const char *state_colour(const char *state)
{
        return strcmp(state, "ok") == 0         ? "forestgreen"
               : strcmp(state, "degraded") == 0 ? "darkorange"
                                                : "red";
}

static void dot_nodes(FILE *out, json_object *map)
{
        json_object *nodes = json_object_object_get(map, "nodes");

        for (size_t i = 0; i < json_object_array_length(nodes); i++) {
                json_object *n = json_object_array_get_idx(nodes, i),
                            *ports = json_object_object_get(n, "ports");
                const char *name = json_get_string(n, "name", "?");
                bool is_drawn[32] = { false };
                char id[160];

                dot_id(id, sizeof(id), "cluster", name, -1);
                fprintf(out, "  subgraph %s {\n    label=", id);
                dot_quoted(out, name);
                fprintf(out, ";\n    style=rounded;\n");
                /* One box per physical port: its twins share it, as they share the cable. */
                for (size_t p = 0; p < json_object_array_length(ports); p++) {
                        json_object *port = json_object_array_get_idx(ports, p);
                        int rail = json_get_int(port, "rail", -1);
                        char label[256];

                        if (rail < 0 || rail >= 32 || is_drawn[rail])
                                continue;
                        is_drawn[rail] = true;
                        snprintf(label, sizeof(label), "port %d", rail);
                        for (size_t q = p; q < json_object_array_length(ports); q++) {
                                json_object *twin = json_object_array_get_idx(ports, q);
                                size_t used = strlen(label);

                                if (json_get_int(twin, "rail", -1) == rail)
                                        snprintf(label + used, sizeof(label) - used, "\n%s",
                                                 json_get_string(twin, "netdev", "?"));
                        }
                        dot_id(id, sizeof(id), "port", name, rail);
                        fprintf(out, "    %s [shape=box, style=rounded, label=", id);
                        dot_quoted(out, label);
                        fprintf(out, "];\n");
                }
                fprintf(out, "  }\n");
        }
}

int topology_render_dot(FILE *out, json_object *map)
{
        json_object *links = json_object_object_get(map, "links");
        char title[128];

        if (!is_map(map))
                return -EINVAL;
        fprintf(out, "graph topology {\n  graph [fontname=\"sans\", labelloc=t, label=");
        snprintf(title, sizeof(title), "%s", json_get_string(map, "shape", "unknown"));
        dot_quoted(out, title);
        fprintf(out, "];\n  node [fontname=\"sans\", fontsize=10];\n  edge [fontname=\"sans\", fontsize=9, "
                     "penwidth=2];\n");
        dot_nodes(out, map);
        for (size_t i = 0; i < json_object_array_length(links); i++) {
                json_object *l = json_object_array_get_idx(links, i);
                json_object *a = json_object_object_get(l, "a"), *b = json_object_object_get(l, "b");
                char ida[160], idb[160], label[256], speed[16];

                dot_id(ida, sizeof(ida), "port", json_get_string(a, "name", "?"),
                       json_get_int(a, "rail", -1));
                if (json_object_object_get_ex(b, "name", NULL))
                        dot_id(idb, sizeof(idb), "port", json_get_string(b, "name", "?"),
                               json_get_int(b, "rail", -1));
                else {
                        const char *far = json_get_string(b, "switch", json_get_string(b, "other", "?"));
                        bool is_switch = json_object_object_get_ex(b, "switch", NULL);

                        dot_id(idb, sizeof(idb), is_switch ? "switch" : "other", far, -1);
                        fprintf(out, "  %s [shape=box, style=filled, fillcolor=%s, label=", idb,
                                is_switch ? "lightgrey" : "white");
                        dot_quoted(out, far);
                        fprintf(out, "];\n");
                }
                speed_label(json_get_int(a, "speed_mbps", -1), speed, sizeof(speed));
                snprintf(label, sizeof(label), "%s %s\n%s", speed, json_get_string(l, "state", "?"),
                         json_get_string(l, "subnet", ""));
                fprintf(out, "  %s -- %s [color=%s, label=", ida, idb,
                        state_colour(json_get_string(l, "state", "down")));
                dot_quoted(out, label);
                fprintf(out, "];\n");
        }
        fprintf(out, "}\n");
        return 0;
}
