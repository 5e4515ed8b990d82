#include "collective_table.h"

#include <stdbool.h>

static const char *str(json_object *o, const char *key, const char *fallback)
{
        json_object *v;

        return o && json_object_object_get_ex(o, key, &v) && json_object_is_type(v, json_type_string)
                       ? json_object_get_string(v)
                       : fallback;
}

static double num(json_object *o, const char *key)
{
        json_object *v;

        return o && json_object_object_get_ex(o, key, &v) ? json_object_get_double(v) : 0;
}

static void print_ops(FILE *f, json_object *ops)
{
        fprintf(f, "%-11s %12s %12s %11s %11s %s\n", "op", "bytes", "time_us", "algbw GB/s", "busbw GB/s",
                "correct");
        for (size_t i = 0; ops && i < json_object_array_length(ops); i++) {
                json_object *op = json_object_array_get_idx(ops, i), *sizes = NULL;

                json_object_object_get_ex(op, "sizes", &sizes);
                for (size_t k = 0; sizes && k < json_object_array_length(sizes); k++) {
                        json_object *s = json_object_array_get_idx(sizes, k), *c = NULL;

                        json_object_object_get_ex(s, "correct", &c);
                        fprintf(f, "%-11.11s %12.0f %12.1f %11.2f %11.2f %s\n", str(op, "op", "?"),
                                num(s, "bytes"), num(s, "time_us"), num(s, "algbw"), num(s, "busbw"),
                                json_object_get_boolean(c) ? "yes" : "NO");
                }
        }
}

/* "cuda_init 812.0, buffers 3.1, ..." */
static void print_phases(FILE *f, json_object *phases)
{
        bool first = true;

        if (!phases || !json_object_is_type(phases, json_type_object)) {
                fputs("-", f);
                return;
        }
        json_object_object_foreach(phases, key, value) {
                fprintf(f, "%s", first ? "" : ",");
                fputs(key, f);
                fprintf(f, "=%.0f", json_object_get_double(value));
                first = false;
        }
        if (first)
                fputs("-", f);
}

void collective_table_print(FILE *f, json_object *report)
{
        json_object *nodes = NULL, *ops = NULL, *v;

        fprintf(f, "collective nccl across %d nodes: ", (int)num(report, "nranks"));
        fputs(str(report, "status", "?"), f);
        if (json_object_object_get_ex(report, "busbw_gbytes", &v))
                fprintf(f, ", busbw %.2f GB/s (algbw %.2f)", json_object_get_double(v),
                        num(report, "algbw_gbytes"));
        if (json_object_object_get_ex(report, "expected_busbw_gbytes", &v) && v) {
                fprintf(f, ", expected %.2f GB/s (", json_object_get_double(v));
                fputs(str(report, "expected_source", "?"), f);
                fputs(")", f);
        }
        fprintf(f, ", verdict ");
        fputs(str(report, "verdict", "?"), f);
        fprintf(f, ", %.1f s\n", num(report, "duration_ms") / 1000);
        if (str(report, "error", NULL)) {
                fputs("error: ", f);
                fputs(str(report, "error", ""), f);
                fputs("\n", f);
        }
        if (json_object_object_get_ex(report, "ops", &ops) && json_object_array_length(ops))
                print_ops(f, ops);
        fprintf(f, "%-4s %-16s %-11s %-9s %-16s %-14s %s\n", "rank", "node", "status", "stage", "last phase",
                "transport", "phases (ms) / error");
        json_object_object_get_ex(report, "nodes", &nodes);
        for (size_t i = 0; nodes && i < json_object_array_length(nodes); i++) {
                json_object *n = json_object_array_get_idx(nodes, i), *t = NULL, *ph = NULL;
                const char *error = str(n, "error", NULL);

                json_object_object_get_ex(n, "transport", &t);
                json_object_object_get_ex(n, "phases_ms", &ph);
                /* Names are node names (checked where the plan read them): no escape needed. */
                fprintf(f, "%-4d %-16.16s ", (int)num(n, "rank"), str(n, "name", "?"));
                fprintf(f, "%-11.11s %-9.9s %-16.16s %-14.14s ", str(n, "status", "?"), str(n, "stage", "?"),
                        str(n, "last_phase", "")[0] ? str(n, "last_phase", "") : "-",
                        str(t, "network", "-"));
                print_phases(f, ph);
                if (error) {
                        fputs("  ", f);
                        fputs(error, f);
                }
                fputs("\n", f);
                if (json_object_object_get_ex(n, "diagnosis", &v) && str(v, "cause", NULL)) {
                        fputs("     cause: ", f);
                        fputs(str(v, "cause", ""), f);
                        fputs("\n     fix: ", f);
                        fputs(str(v, "fix", ""), f);
                        fputs("\n", f);
                }
        }
}
