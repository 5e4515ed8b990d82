/* sparkc's table of probe results: a row per result, each kind in its own terms beneath it. */
#include "probe_table.h"

#include <string.h>

#include "client.h"

#define ROW_FORMAT "%-20s %-12s %-8s %-12s %-30s %s\n"

struct kind_layout {
        const char *kind;
        /* The MEASURED and EXPECTED cells of the row. */
        void (*cells)(json_object *r, json_object *measured, char *value, size_t value_size, char *expected,
                      size_t expected_size);
        /* Lines beneath the row. */
        void (*details)(FILE *out, json_object *r, json_object *measured);
        /* A failed result's detail has numbers worth the row too (the path MTU that got through). */
        bool shows_failed_detail;
};

static double number(json_object *o, const char *key)
{
        json_object *v;

        return o && json_object_object_get_ex(o, key, &v) && v ? json_object_get_double(v) : 0;
}

static bool has_number(json_object *o, const char *key)
{
        json_object *v;

        return o && json_object_object_get_ex(o, key, &v) && v;
}

json_object *probe_kind_find(json_object *kinds, const char *name)
{
        for (size_t i = 0; kinds && i < json_object_array_length(kinds); i++) {
                json_object *k = json_object_array_get_idx(kinds, i);

                if (strcmp(client_get_string(k, "name", ""), name) == 0)
                        return k;
        }
        return NULL;
}

/* "14.20 us (baseline)", or only where the expectation will come from while there is none. */
static void expected_cell(json_object *r, const char *unit, char *cell, size_t size)
{
        json_object *e = NULL;

        if (!json_object_object_get_ex(r, "expected", &e) || !e)
                snprintf(cell, size, "-");
        else if (has_number(e, "value"))
                snprintf(cell, size, "%.2f %s (%s)", number(e, "value"), unit,
                         client_get_string(e, "source", "?"));
        else
                snprintf(cell, size, "none yet (%s)", client_get_string(e, "source", "?"));
}

static void rtt_cells(json_object *r, json_object *m, char *value, size_t value_size, char *expected,
                      size_t expected_size)
{
        snprintf(value, value_size, "%.1f us median", number(m, "median_us"));
        expected_cell(r, "us", expected, expected_size);
}

static void rtt_details(FILE *out, json_object *r, json_object *m)
{
        fprintf(out, "    round trip: min %.1f, median %.1f, p99 %.1f, max %.1f us (%.0f of %.0f bytes)\n",
                number(m, "min_us"), number(m, "median_us"), number(m, "p99_us"), number(m, "max_us"),
                number(m, "count"), number(m, "size"));
}

static void bandwidth_cells(json_object *r, json_object *m, char *value, size_t value_size, char *expected,
                            size_t expected_size)
{
        json_object *directions = NULL;

        json_object_object_get_ex(m, "directions", &directions);
        snprintf(value, value_size, "%.2f Gb/s%s", number(m, "gbps"),
                 directions && json_object_array_length(directions) > 1 ? " (slower direction)" : "");
        expected_cell(r, "Gb/s", expected, expected_size);
}

/* The daemon's verdict on one rail in one direction ("ok", "stale-initialization"), or "". */
static const char *rail_verdict(json_object *r, const char *rail, const char *direction)
{
        json_object *diagnosis = NULL, *rails = NULL;

        if (json_object_object_get_ex(r, "diagnosis", &diagnosis) && diagnosis)
                json_object_object_get_ex(diagnosis, "rails", &rails);
        for (size_t i = 0; rails && i < json_object_array_length(rails); i++) {
                json_object *v = json_object_array_get_idx(rails, i);

                if (strcmp(client_get_string(v, "rail", ""), rail) == 0 &&
                    strcmp(client_get_string(v, "direction", ""), direction) == 0)
                        return client_get_string(v, "verdict", "");
        }
        return "";
}

/* Each direction of a bandwidth result, a line per rail: who sent to whom, how fast, the
 * retransmits, and the daemon's verdict on the rail. */
static void directions_details(FILE *out, json_object *r, json_object *m)
{
        json_object *directions = NULL;

        json_object_object_get_ex(m, "directions", &directions);
        for (size_t i = 0; directions && i < json_object_array_length(directions); i++) {
                json_object *d = json_object_array_get_idx(directions, i), *rails = NULL;
                const char *direction = client_get_string(d, "direction", "?");
                char path[96], retransmits[64];
                size_t n;

                snprintf(path, sizeof(path), "%s -> %s", client_get_string(d, "from", "?"),
                         client_get_string(d, "to", "?"));
                if (has_number(d, "retransmits"))
                        snprintf(retransmits, sizeof(retransmits), "%.0f retransmits",
                                 number(d, "retransmits"));
                else
                        /* Only the sender counts them, and the peer's count does not come back. */
                        snprintf(retransmits, sizeof(retransmits), "retransmits: %s sends, not reported",
                                 client_get_string(r, "peer", "the peer"));
                json_object_object_get_ex(d, "rails", &rails);
                n = rails ? json_object_array_length(rails) : 0;
                if (n == 0)
                        fprintf(out, "    %-8s %-33s rail %-12s %8.2f Gb/s  %s\n", direction, path, "-",
                                number(d, "gbps"), retransmits);
                for (size_t j = 0; j < n; j++) {
                        json_object *rail = json_object_array_get_idx(rails, j);
                        const char *name = client_get_string(rail, "name", "?");
                        const char *verdict = rail_verdict(r, name, direction);

                        /* The retransmits are the direction's: said once, on its first rail. */
                        fprintf(out, "    %-8s %-33s rail %-12s %8.2f Gb/s  %s%s%s\n", direction, path, name,
                                number(rail, "gbps"), j == 0 ? retransmits : "",
                                verdict[0] ? "  verdict: " : "", verdict);
                }
        }
}

/* pathmtu has no expectation of its own: the path must carry the interface's MTU. */
static void pathmtu_cells(json_object *r, json_object *m, char *value, size_t value_size, char *expected,
                          size_t expected_size)
{
        snprintf(value, value_size, "path MTU %.0f", number(m, "path_mtu"));
        snprintf(expected, expected_size, "the MTU of %s, %.0f", client_get_string(m, "iface", "?"),
                 number(m, "mtu"));
}

static void pathmtu_details(FILE *out, json_object *r, json_object *m)
{
        fprintf(out, "    largest payload %.0f of %.0f bytes through %s; larger packets %s\n",
                number(m, "largest_payload"), number(m, "full_payload"), client_get_string(m, "iface", "?"),
                client_get_bool(m, "over_mtu_refused") ? "refused, as they must be" : "NOT refused");
}

/* A kind this client has no layout of its own for: the daemon's metric in the kind's unit. */
static void metric_cells(json_object *r, json_object *m, json_object *kind, char *value, size_t value_size,
                         char *expected, size_t expected_size)
{
        const char *unit = client_get_string(kind, "unit", "");

        snprintf(value, value_size, "%.2f %s", number(m, client_get_string(kind, "metric", "")), unit);
        expected_cell(r, unit, expected, expected_size);
}

static const struct kind_layout layouts[] = {
        { "rtt", rtt_cells, rtt_details },
        { "tcp", bandwidth_cells, directions_details },
        { "pathmtu", pathmtu_cells, pathmtu_details, true },
        { "rdma", NULL, directions_details },
};

static const struct kind_layout *layout_of(const char *kind)
{
        for (size_t i = 0; i < sizeof(layouts) / sizeof(layouts[0]); i++)
                if (strcmp(layouts[i].kind, kind) == 0)
                        return &layouts[i];
        return NULL;
}

void probe_table_header(FILE *out)
{
        fprintf(out, ROW_FORMAT, "STARTED", "PEER", "KIND", "STATUS", "MEASURED", "EXPECTED");
}

/* The daemon's verdict on the rails of a bandwidth result: one line to act on, then each rail
 * and direction, then the recovery steps of a stale initialization. */
static void print_rail_verdicts(FILE *out, json_object *r)
{
        json_object *d, *rails = NULL, *steps = NULL, *m, *v;

        if (!json_object_object_get_ex(r, "diagnosis", &d) || !d)
                return;
        fprintf(out, "    verdict: %s\n", client_get_string(d, "summary", "?"));
        /* A result with directions has each rail's verdict on its direction's line already. */
        if (!json_object_object_get_ex(r, "measured", &m) || !m ||
            !json_object_object_get_ex(m, "directions", &v))
                json_object_object_get_ex(d, "rails", &rails);
        for (size_t i = 0; rails && i < json_object_array_length(rails); i++) {
                json_object *rail = json_object_array_get_idx(rails, i);

                fprintf(out, "    %-20s %-8s %8.2f Gb/s  %s\n", client_get_string(rail, "rail", "?"),
                        client_get_string(rail, "direction", "?"), number(rail, "gbps"),
                        client_get_string(rail, "verdict", "?"));
        }
        json_object_object_get_ex(d, "recovery", &steps);
        for (size_t i = 0; steps && i < json_object_array_length(steps); i++)
                fprintf(out, "    recovery %zu: %s\n", i + 1,
                        json_object_get_string(json_object_array_get_idx(steps, i)));
}

/* The sizes, transport and phases of a result that has them (nccl), and a hang's diagnosis. */
static void print_details(FILE *out, json_object *r, bool is_full)
{
        json_object *m = NULL, *d = NULL, *ops = NULL, *t = NULL, *phases = NULL, *v;

        print_rail_verdicts(out, r);
        json_object_object_get_ex(r, "measured", &m);
        if (!m)
                json_object_object_get_ex(r, "detail", &m);
        if (!m)
                return;
        if (is_full)
                json_object_object_get_ex(m, "ops", &ops);
        for (size_t i = 0; ops && i < json_object_array_length(ops); i++) {
                json_object *op = json_object_array_get_idx(ops, i), *sizes = NULL;

                json_object_object_get_ex(op, "sizes", &sizes);
                for (size_t j = 0; sizes && j < json_object_array_length(sizes); j++) {
                        json_object *s = json_object_array_get_idx(sizes, j);

                        fprintf(out, "    %-10s %12.0f B %12.1f us  algbw %8.2f  busbw %8.2f GB/s  %s\n",
                                client_get_string(op, "op", "?"), number(s, "bytes"), number(s, "time_us"),
                                number(s, "algbw"), number(s, "busbw"),
                                json_object_object_get_ex(s, "correct", &v) && json_object_get_boolean(v)
                                        ? "correct"
                                        : "WRONG");
                }
        }
        if (json_object_object_get_ex(m, "transport", &t) && t) {
                char paths[128] = "";

                json_object_object_get_ex(t, "paths", &v);
                for (size_t i = 0; v && i < json_object_array_length(v); i++) {
                        size_t used = strlen(paths);

                        snprintf(paths + used, sizeof(paths) - used, "%s%s", i ? "," : "",
                                 json_object_get_string(json_object_array_get_idx(v, i)));
                }
                fprintf(out, "    transport: network %s, paths %s, GPU Direct RDMA %s%s\n",
                        client_get_string(t, "network", "?"), paths[0] ? paths : "?",
                        client_get_bool(t, "gdr_used") ? "used" : "not used",
                        client_get_bool(t, "socket_fallback")
                                ? "; FELL BACK TO TCP SOCKETS on a node with RDMA devices"
                                : "");
        }
        if (json_object_object_get_ex(m, "latency", &v) && v)
                fprintf(out,
                        "    write latency: typical %.2f us, min %.2f, p99 %.2f, max %.2f (%.0f bytes, %.0f "
                        "round "
                        "trips)\n",
                        number(v, "typical_us"), number(v, "min_us"), number(v, "p99_us"),
                        number(v, "max_us"), number(v, "size"), number(v, "iterations"));
        if (json_object_object_get_ex(m, "note", &v) && v)
                fprintf(out, "    note: %s\n", json_object_get_string(v));
        if (is_full && json_object_object_get_ex(m, "phases_ms", &phases) && phases &&
            json_object_object_length(phases)) {
                fprintf(out, "    phases (ms):");
                json_object_object_foreach(phases, name, ms)
                        fprintf(out, " %s %.1f", name, json_object_get_double(ms));
                fprintf(out, "\n");
        }
        if (json_object_object_get_ex(m, "diagnosis", &d) && d) {
                if (json_object_object_get_ex(d, "cause", &v) && v)
                        fprintf(out, "    cause: %s\n", json_object_get_string(v));
                if (json_object_object_get_ex(d, "fix", &v) && v)
                        fprintf(out, "    fix: %s\n", json_object_get_string(v));
        }
}

/* The daemon says "the peer ..." of what happened on the other node: the peer is named here, and
 * an error of this node's own says it is this node's. */
static void print_error(FILE *out, json_object *r)
{
        const char *error = client_get_string(r, "error", NULL),
                   *remote = client_get_string(r, "remote", "");
        const char *local = client_get_string(r, "local", "");

        if (!error)
                return;
        if (strncmp(error, "the peer ", strlen("the peer ")) == 0)
                fprintf(out, "    error: %s%s%s%s %s\n", client_get_string(r, "peer", "the peer"),
                        remote[0] ? " (" : "", remote, remote[0] ? ")" : "", error + strlen("the peer "));
        else
                fprintf(out, "    error: this node%s%s%s: %s\n", local[0] ? " (" : "", local,
                        local[0] ? ")" : "", error);
}

void probe_table_result(FILE *out, json_object *r, json_object *kinds, bool is_full)
{
        const char *name = client_get_string(r, "kind", "?");
        const struct kind_layout *layout = layout_of(name);
        char value[64] = "-", expected[64] = "-";
        json_object *m = NULL, *v;

        json_object_object_get_ex(r, "measured", &m);
        if (!m && layout && layout->shows_failed_detail)
                json_object_object_get_ex(r, "detail", &m);
        if (m && layout && layout->cells)
                layout->cells(r, m, value, sizeof(value), expected, sizeof(expected));
        else if (m)
                metric_cells(r, m, probe_kind_find(kinds, name), value, sizeof(value), expected,
                             sizeof(expected));
        fprintf(out, ROW_FORMAT, client_get_string(r, "started_at", "?"), client_get_string(r, "peer", "?"),
                name, client_get_string(r, "status", "?"), value, expected);
        if (m && layout && layout->details)
                layout->details(out, r, m);
        if (json_object_object_get_ex(r, "degraded_reason", &v) && v)
                fprintf(out, "    degraded: %s\n", json_object_get_string(v));
        if (json_object_object_get_ex(r, "deferred_reason", &v) && v)
                fprintf(out, "    deferred to the next slot: %s\n", json_object_get_string(v));
        if (json_object_object_get_ex(r, "fabric_busy", &v) && v)
                fprintf(out, "    fabric busy: %s; not judged against the baseline\n",
                        json_object_get_string(v));
        print_error(out, r);
        print_details(out, r, is_full);
}
