#include "cluster_matrix.h"

#include <string.h>

#include "client.h"

static const struct {
        const char *kind, *metric, *unit;
} metrics[] = {
        { "rtt", "rtt_median_us", "us" },   { "tcp", "gbps", "Gb/s" },          { "rdma", "gbps", "Gb/s" },
        { "nccl", "busbw_gbytes", "GB/s" }, { "pathmtu", "path_mtu", "bytes" },
};

const char *cluster_metric_of(const char *kind)
{
        for (size_t i = 0; i < sizeof(metrics) / sizeof(metrics[0]); i++)
                if (strcmp(metrics[i].kind, kind) == 0)
                        return metrics[i].metric;
        return NULL;
}

void cluster_metric_format(char *buf, size_t size, double value, const char *metric)
{
        if (strcmp(metric, "rtt_median_us") == 0)
                snprintf(buf, size, "%.1f us", value);
        else if (strcmp(metric, "gbps") == 0)
                snprintf(buf, size, "%.2f Gb/s", value);
        else if (strcmp(metric, "busbw_gbytes") == 0)
                snprintf(buf, size, "%.2f GB/s", value);
        else
                snprintf(buf, size, "%.0f", value);
}

static json_object *member(json_object *o, const char *key)
{
        json_object *v = NULL;

        return o && json_object_object_get_ex(o, key, &v) ? v : NULL;
}

/* The cell of kind from node x to node y: the link's a_to_b or b_to_a, whichever way it runs. */
static json_object *cell_of(json_object *links, const char *kind, const char *x, const char *y)
{
        for (size_t i = 0; links && i < json_object_array_length(links); i++) {
                json_object *l = json_object_array_get_idx(links, i), *kinds = member(l, "kinds");
                const char *a = client_get_string(member(l, "a"), "node_id", ""),
                           *b = client_get_string(member(l, "b"), "node_id", "");
                const char *direction = strcmp(a, x) == 0 && strcmp(b, y) == 0   ? "a_to_b"
                                        : strcmp(a, y) == 0 && strcmp(b, x) == 0 ? "b_to_a"
                                                                                 : NULL;

                for (size_t k = 0; direction && kinds && k < json_object_array_length(kinds); k++) {
                        json_object *e = json_object_array_get_idx(kinds, k);

                        if (strcmp(client_get_string(e, "kind", ""), kind) == 0)
                                return member(e, direction);
                }
        }
        return NULL;
}

void cluster_matrix_print(FILE *out, json_object *result, const char *kind)
{
        json_object *nodes = member(result, "nodes"), *links = member(result, "links");
        const char *metric = cluster_metric_of(kind);
        size_t n = nodes ? json_object_array_length(nodes) : 0;

        for (size_t i = 0; i < sizeof(metrics) / sizeof(metrics[0]); i++)
                if (strcmp(metrics[i].kind, kind) == 0)
                        fprintf(out, "%s %s (%s), rows from, columns to\n", kind, metric, metrics[i].unit);
        fprintf(out, "%-16s", "FROM \\ TO");
        for (size_t j = 0; j < n; j++)
                fprintf(out, " %14.14s",
                        client_get_string(json_object_array_get_idx(nodes, j), "name", "?"));
        fprintf(out, "\n");
        for (size_t i = 0; i < n; i++) {
                const char *x = client_get_string(json_object_array_get_idx(nodes, i), "node_id", "");

                fprintf(out, "%-16.16s",
                        client_get_string(json_object_array_get_idx(nodes, i), "name", "?"));
                for (size_t j = 0; j < n; j++) {
                        const char *y =
                                client_get_string(json_object_array_get_idx(nodes, j), "node_id", "");
                        json_object *cell = i == j ? NULL : cell_of(links, kind, x, y),
                                    *value = member(cell, "value");
                        char text[32];

                        if (i == j)
                                snprintf(text, sizeof(text), "x");
                        else if (!value)
                                snprintf(text, sizeof(text), "-");
                        else
                                snprintf(text, sizeof(text), "%.2f%s", json_object_get_double(value),
                                         strcmp(client_get_string(cell, "verdict", "ok"), "ok") == 0 ? ""
                                                                                                     : "!");
                        fprintf(out, " %14s", text);
                }
                fprintf(out, "\n");
        }
        fprintf(out, "(- not measured, ! not ok)\n");
}
