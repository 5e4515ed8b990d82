/* The map as a table and as a Graphviz graph. */
#include "topology_render.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "common/json_get.h"

static bool is_map(json_object *map)
{
        json_object *v;

        return json_object_object_get_ex(map, "links", &v) && json_object_is_type(v, json_type_array) &&
               json_object_object_get_ex(map, "nodes", &v) && json_object_is_type(v, json_type_array);
}

/* "spark1:enp1s0f0np0", or "sw1:swp3" for a switch port ("sw1" where the port is not known). */
static void end_label(json_object *end, char *buf, size_t size)
{
        if (json_object_object_get_ex(end, "name", NULL))
                snprintf(buf, size, "%s:%s", json_get_string(end, "name", "?"),
                         json_get_string(end, "netdev", "?"));
        else if (json_get_string(end, "port", "")[0])
                snprintf(buf, size, "%s:%s",
                         json_get_string(end, "switch", json_get_string(end, "other", "?")),
                         json_get_string(end, "port", "?"));
        else /* a switch silent to LLDP names no port */
                snprintf(buf, size, "%s",
                         json_get_string(end, "switch", json_get_string(end, "other", "?")));
}

static void speed_label(int mbps, char *buf, size_t size)
{
        if (mbps <= 0)
                snprintf(buf, size, "?");
        else
                snprintf(buf, size, "%dG", mbps / 1000);
}

/* "10.10.1.0/24" of "10.10.1.2/24"; false for anything but IPv4 with a prefix. */
static bool ipv4_subnet(const char *cidr, char *buf, size_t size)
{
        char addr[INET_ADDRSTRLEN];
        const char *slash = strchr(cidr, '/');
        struct in_addr in;
        char *end;
        unsigned long prefix;

        if (!slash || (size_t)(slash - cidr) >= sizeof(addr))
                return false;
        snprintf(addr, sizeof(addr), "%.*s", (int)(slash - cidr), cidr);
        prefix = strtoul(slash + 1, &end, 10);
        if (*end || end == slash + 1 || prefix > 32 || inet_pton(AF_INET, addr, &in) != 1)
                return false;
        in.s_addr = htonl(prefix ? ntohl(in.s_addr) & (0xffffffffu << (32 - prefix)) : 0);
        inet_ntop(AF_INET, &in, addr, sizeof(addr));
        snprintf(buf, size, "%s/%lu", addr, prefix);
        return true;
}

/* The addresses of end's twins, as the map's nodes list them, appended to out (at most max). */
static size_t end_addresses(json_object *map, json_object *end, const char **out, size_t max)
{
        json_object *nodes = json_object_object_get(map, "nodes"),
                    *twins = json_object_object_get(end, "twins");
        size_t n = 0;

        for (size_t i = 0; i < json_object_array_length(nodes); i++) {
                json_object *node = json_object_array_get_idx(nodes, i),
                            *ports = json_object_object_get(node, "ports");

                if (strcmp(json_get_string(node, "name", ""), json_get_string(end, "name", "-")) != 0)
                        continue;
                for (size_t p = 0; ports && p < json_object_array_length(ports); p++) {
                        json_object *port = json_object_array_get_idx(ports, p),
                                    *addresses = json_object_object_get(port, "addresses");
                        bool is_twin = false;

                        for (size_t t = 0; twins && t < json_object_array_length(twins); t++)
                                is_twin |=
                                        strcmp(json_object_get_string(json_object_array_get_idx(twins, t)),
                                               json_get_string(port, "netdev", "")) == 0;
                        for (size_t a = 0;
                             is_twin && addresses && a < json_object_array_length(addresses) && n < max; a++)
                                out[n++] = json_object_get_string(json_object_array_get_idx(addresses, a));
                }
        }
        return n;
}

/* The subnet a link uses: one both ends have an address in (a switch link: its node's), else
 * the plan's marked "*" (not configured yet). */
static bool link_subnet(json_object *map, json_object *l, char *buf, size_t size)
{
        const char *a[16], *b[16];
        size_t na = end_addresses(map, json_object_object_get(l, "a"), a, 16),
               nb = end_addresses(map, json_object_object_get(l, "b"), b, 16);
        bool is_node = json_object_object_get_ex(json_object_object_get(l, "b"), "name", NULL);
        char x[64], y[64];

        for (size_t i = 0; i < na; i++) {
                if (!ipv4_subnet(a[i], x, sizeof(x)))
                        continue;
                for (size_t k = 0; is_node && k < nb; k++)
                        if (ipv4_subnet(b[k], y, sizeof(y)) && strcmp(x, y) == 0) {
                                snprintf(buf, size, "%s", x);
                                return true;
                        }
                if (!is_node) {
                        snprintf(buf, size, "%s", x);
                        return true;
                }
        }
        snprintf(buf, size, "%s*", json_get_string(l, "subnet", "-"));
        return false;
}

int topology_render_table(FILE *out, json_object *map)
{
        json_object *links = json_object_object_get(map, "links"),
                    *findings = json_object_object_get(map, "findings");
        size_t n_links, n_findings;
        bool has_planned = false;

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
                char al[160], bl[160], sa[16], sb[16], speed[40], mtu[40], subnet[72];
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
                has_planned |= !link_subnet(map, l, subnet, sizeof(subnet));
                fprintf(out, "%-26s %-26s %-9s %-9s %-11s %-18s %d\n", al, bl,
                        json_get_string(l, "state", "?"), speed, mtu, subnet, twins);
                if (json_object_object_get_ex(l, "why", NULL))
                        fprintf(out, "  %s\n", json_get_string(l, "why", ""));
        }
        if (has_planned)
                fprintf(out,
                        "* the plan's subnet: the link has no addresses in one subnet yet (sparkc topology "
                        "--netplan)\n");
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

/* The worst finding naming a port of end (any twin, as "NODE:NETDEV"): 2 failed, 1 a warning, 0
 * none; *id its id. */
static int end_finding(json_object *map, json_object *end, const char **id)
{
        json_object *findings = json_object_object_get(map, "findings"),
                    *twins = json_object_object_get(end, "twins");
        int worst = 0;

        for (size_t i = 0; findings && i < json_object_array_length(findings); i++) {
                json_object *f = json_object_array_get_idx(findings, i),
                            *ports = json_object_object_get(f, "ports");
                int level = strcmp(json_get_string(f, "status", ""), "failed") == 0 ? 2 : 1;

                if (level <= worst || json_object_object_get_ex(f, "absent", NULL))
                        continue;
                for (size_t p = 0; ports && p < json_object_array_length(ports); p++)
                        for (size_t t = 0; twins && t < json_object_array_length(twins); t++) {
                                char key[160];

                                snprintf(key, sizeof(key), "%s:%s", json_get_string(end, "name", "?"),
                                         json_object_get_string(json_object_array_get_idx(twins, t)));
                                if (strcmp(json_object_get_string(json_object_array_get_idx(ports, p)),
                                           key) == 0 &&
                                    level > worst) {
                                        worst = level;
                                        *id = json_get_string(f, "id", "?");
                                }
                        }
        }
        return worst;
}

/* The rail of port "NODE:NETDEV" in the map's nodes, -1 when not there. */
static int port_rail(json_object *map, const char *port)
{
        json_object *nodes = json_object_object_get(map, "nodes");
        const char *colon = strchr(port, ':');

        for (size_t i = 0; colon && i < json_object_array_length(nodes); i++) {
                json_object *n = json_object_array_get_idx(nodes, i),
                            *ports = json_object_object_get(n, "ports");
                const char *name = json_get_string(n, "name", "");

                if (strlen(name) != (size_t)(colon - port) || strncmp(name, port, strlen(name)) != 0)
                        continue;
                for (size_t p = 0; ports && p < json_object_array_length(ports); p++)
                        if (strcmp(json_get_string(json_object_array_get_idx(ports, p), "netdev", ""),
                                   colon + 1) == 0)
                                return json_get_int(json_object_array_get_idx(ports, p), "rail", -1);
        }
        return -1;
}

/* A node whose sparkd does not report: drawn as unknown, dashed, with its cables as seen from the
 * nodes that face it (one edge per port), never as a fault of the cables. */
static void dot_absent(FILE *out, json_object *map)
{
        json_object *findings = json_object_object_get(map, "findings");

        for (size_t i = 0; findings && i < json_object_array_length(findings); i++) {
                json_object *f = json_object_array_get_idx(findings, i), *absent, *ports;
                char id[160], label[200], port_id[160], drawn[64][160];
                size_t n_drawn = 0;

                if (!json_object_object_get_ex(f, "absent", &absent))
                        continue;
                dot_id(id, sizeof(id), "absent", json_get_string(absent, "name", "?"), -1);
                snprintf(label, sizeof(label), "%s\nnot reporting: unknown",
                         json_get_string(absent, "name", "?"));
                fprintf(out,
                        "  %s [shape=box, style=\"rounded,dashed\", color=grey50, fontcolor=grey40, label=",
                        id);
                dot_quoted(out, label);
                fprintf(out, "];\n");
                ports = json_object_object_get(f, "ports");
                for (size_t p = 0; ports && p < json_object_array_length(ports); p++) {
                        const char *port = json_object_get_string(json_object_array_get_idx(ports, p));
                        const char *colon = strchr(port, ':');
                        int rail = port_rail(map, port);
                        bool is_drawn = false;
                        char node[128];

                        if (!colon || rail < 0)
                                continue;
                        snprintf(node, sizeof(node), "%.*s", (int)(colon - port), port);
                        dot_id(port_id, sizeof(port_id), "port", node, rail);
                        for (size_t k = 0; k < n_drawn; k++) /* one edge per physical port */
                                is_drawn |= strcmp(drawn[k], port_id) == 0;
                        if (is_drawn || n_drawn >= 64)
                                continue;
                        snprintf(drawn[n_drawn++], sizeof(drawn[0]), "%s", port_id);
                        fprintf(out, "  %s -- %s [color=grey50, style=dashed, label=\"unknown\"];\n",
                                port_id, id);
                }
        }
}

/* What the colours say. */
static void dot_legend(FILE *out)
{
        static const char *const rows[][3] = {
                { "forestgreen", "solid", "cable ok" },
                { "darkorange", "solid", "degraded, or a warning finding" },
                { "red", "solid", "down, or a failed finding (named on the edge)" },
                { "grey50", "dashed", "far node not reporting: unknown" },
        };

        fprintf(out,
                "  subgraph cluster_legend {\n    label=\"legend\";\n    style=dashed;\n    fontsize=9;\n");
        for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
                fprintf(out, "    legend_%zu [shape=point, width=0.05];\n", i);
                fprintf(out, "    legend_%zu_text [shape=plaintext, fontsize=9, label=\"%s\"];\n", i,
                        rows[i][2]);
                fprintf(out, "    legend_%zu -- legend_%zu_text [color=%s, style=%s];\n", i, i, rows[i][0],
                        rows[i][1]);
        }
        fprintf(out, "  }\n");
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
                const char *id_a = NULL, *id_b = NULL, *colour;
                int finding_a, finding_b;

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
                /* A finding on either end colours the edge and names itself, over the state. */
                finding_a = end_finding(map, a, &id_a);
                finding_b = end_finding(map, b, &id_b);
                if (finding_a || finding_b) {
                        bool is_a = finding_a >= finding_b;

                        snprintf(label, sizeof(label), "%s %s\n%s", speed, is_a ? id_a : id_b,
                                 json_get_string(l, "subnet", ""));
                        colour = (is_a ? finding_a : finding_b) == 2 ? "red" : "darkorange";
                } else {
                        snprintf(label, sizeof(label), "%s %s\n%s", speed, json_get_string(l, "state", "?"),
                                 json_get_string(l, "subnet", ""));
                        colour = state_colour(json_get_string(l, "state", "down"));
                }
                fprintf(out, "  %s -- %s [color=%s, label=", ida, idb, colour);
                dot_quoted(out, label);
                fprintf(out, "];\n");
        }
        dot_absent(out, map);
        dot_legend(out);
        fprintf(out, "}\n");
        return 0;
}
