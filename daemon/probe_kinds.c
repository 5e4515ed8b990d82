#include "probe_kinds.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "macro.h"

/* Request, set-up on the peer, the report back: on top of every measurement. */
#define SETUP_MARGIN_SEC 15

/* ---- rtt ---- */

static const struct probe_param_spec rtt_params[] = {
        { "count", 1, 100000, 1000, "--count", PROBE_SIDE_CLIENT },
        { "size", 1, 1 << 20, 64, "--size", PROBE_SIDE_CLIENT },
        { "interval_us", 0, 10000000, 0, "--interval-us", PROBE_SIDE_CLIENT },
        {},
};

static unsigned rtt_measure_sec(json_object *params)
{
        const struct probe_kind *k = probe_kind_find("rtt");
        uint64_t count = probe_kind_param(k, params, "count");
        uint64_t interval_us = probe_kind_param(k, params, "interval_us");

        /* A millisecond per round trip is far more than any fabric link takes. */
        return (unsigned)(5 + count * (interval_us + 1000) / 1000000);
}

static double rtt_expectation(const struct sparkd_config *c)
{
        return c->probe_expect_rtt_us;
}

/* ---- tcp ---- */

static const struct probe_param_spec tcp_params[] = {
        { "duration_s", 1, 600, 5, "--duration", PROBE_SIDE_CLIENT },
        { "streams", 1, 64, 1, "--streams", PROBE_SIDE_CLIENT },
        { "size", 1024, 16 << 20, 128 << 10, "--size", PROBE_SIDE_CLIENT },
        {},
};

static unsigned duration_measure_sec(json_object *params)
{
        json_object *v;

        return json_object_object_get_ex(params, "duration_s", &v) ? (unsigned)json_object_get_int64(v) : 0;
}

static double tcp_expectation(const struct sparkd_config *c)
{
        return c->probe_expect_tcp_gbps;
}

static const struct probe_kind kinds[] = {
        {
                .name = "rtt",
                .helper = "sparkd-probe-rtt",
                .summary = "TCP round trips: min/median/p99/max in microseconds",
                .metric = "median_us",
                .unit = "us median",
                .params = rtt_params,
                .measure_sec = rtt_measure_sec,
                .configured_expectation = rtt_expectation,
        },
        {
                .name = "tcp",
                .helper = "sparkd-probe-tcp",
                .summary = "TCP throughput in Gb/s, with retransmits",
                .is_bandwidth = true,
                .metric = "gbps",
                .unit = "Gb/s",
                .higher_is_better = true,
                .params = tcp_params,
                .measure_sec = duration_measure_sec,
                .configured_expectation = tcp_expectation,
        },
};

const struct probe_kind *probe_kind_at(size_t i)
{
        return i < ARRAY_SIZE(kinds) ? &kinds[i] : NULL;
}

_Static_assert(ARRAY_SIZE(kinds) <= PROBE_KINDS_MAX, "PROBE_KINDS_MAX is too small");

size_t probe_kind_index(const struct probe_kind *kind)
{
        return (size_t)(kind - kinds);
}

const struct probe_kind *probe_kind_find(const char *name)
{
        for (size_t i = 0; name && i < ARRAY_SIZE(kinds); i++)
                if (strcmp(kinds[i].name, name) == 0)
                        return &kinds[i];
        return NULL;
}

void probe_kind_names(char *buf, size_t size)
{
        size_t used = 0;

        buf[0] = '\0';
        for (size_t i = 0; i < ARRAY_SIZE(kinds) && used < size; i++) {
                int n = snprintf(buf + used, size - used, "%s%s", i ? ", " : "", kinds[i].name);

                if (n < 0)
                        break;
                used += (size_t)n;
        }
}

static const struct probe_param_spec *spec_find(const struct probe_kind *kind, const char *name)
{
        for (const struct probe_param_spec *s = kind->params; s->name; s++)
                if (strcmp(s->name, name) == 0)
                        return s;
        return NULL;
}

static void describe_params(const struct probe_kind *kind, char *buf, size_t size)
{
        size_t used = 0;

        buf[0] = '\0';
        for (const struct probe_param_spec *s = kind->params; s->name && used < size; s++) {
                int n = snprintf(buf + used, size - used, "%s%s %" PRIu64 "-%" PRIu64,
                                 s == kind->params ? "" : ", ", s->name, s->min, s->max);

                if (n < 0)
                        break;
                used += (size_t)n;
        }
}

int probe_kind_params(const struct probe_kind *kind, json_object *params, json_object **out, char *err,
                      size_t err_size)
{
        json_object *o;
        char known[256];

        if (params && !json_object_is_type(params, json_type_object)) {
                snprintf(err, err_size, "the %s probe's parameters are an object", kind->name);
                return -EINVAL;
        }
        describe_params(kind, known, sizeof(known));
        if (params) {
                json_object_object_foreach(params, key, value) {
                        const struct probe_param_spec *s = spec_find(kind, key);
                        int64_t v;

                        if (!s) {
                                snprintf(err, err_size, "the %s probe takes no \"%s\" (it takes %s)",
                                         kind->name, key, known);
                                return -EINVAL;
                        }
                        v = json_object_get_int64(value);
                        if (!json_object_is_type(value, json_type_int) || v < 0 || (uint64_t)v < s->min ||
                            (uint64_t)v > s->max) {
                                snprintf(err, err_size,
                                         "the %s probe's %s is an integer from %" PRIu64 " to %" PRIu64,
                                         kind->name, key, s->min, s->max);
                                return -ERANGE;
                        }
                }
        }
        o = json_object_new_object();
        if (!o)
                return -ENOMEM;
        for (const struct probe_param_spec *s = kind->params; s->name; s++) {
                json_object *v = NULL;

                if (params && json_object_object_get_ex(params, s->name, &v))
                        json_object_object_add(o, s->name, json_object_get(v));
                else
                        json_object_object_add(o, s->name, json_object_new_int64((int64_t)s->def));
        }
        *out = o;
        return 0;
}

uint64_t probe_kind_param(const struct probe_kind *kind, json_object *params, const char *name)
{
        const struct probe_param_spec *s = spec_find(kind, name);
        json_object *v;

        if (params && json_object_object_get_ex(params, name, &v))
                return (uint64_t)json_object_get_int64(v);
        return s ? s->def : 0;
}

int probe_kind_helper_args(const struct probe_kind *kind, json_object *params, enum probe_side side,
                           char **argv, size_t *n, size_t max, char (*storage)[24])
{
        for (const struct probe_param_spec *s = kind->params; s->name; s++) {
                uint64_t v = probe_kind_param(kind, params, s->name);

                if (!s->option || !(s->sides & side) || (s->is_switch && v == 0))
                        continue;
                if (*n + 2 >= max)
                        return -E2BIG;
                argv[(*n)++] = (char *)s->option;
                if (s->is_switch)
                        continue;
                snprintf(storage[*n], 24, "%" PRIu64, v);
                argv[*n] = storage[*n];
                (*n)++;
        }
        return 0;
}

unsigned probe_kind_deadline_sec(const struct probe_kind *kind, json_object *params)
{
        return kind->measure_sec(params) + kind->setup_sec + SETUP_MARGIN_SEC;
}
