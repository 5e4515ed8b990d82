#include "baselines.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/macro.h"

static bool baseline_is_valid(json_object *b)
{
        json_object *samples, *value;

        if (!json_object_is_type(b, json_type_object) ||
            !json_object_object_get_ex(b, "samples", &samples) ||
            !json_object_is_type(samples, json_type_array) ||
            json_object_array_length(samples) > BASELINE_SAMPLES)
                return false;
        for (size_t i = 0; i < json_object_array_length(samples); i++) {
                json_object *v = json_object_array_get_idx(samples, i);

                if (!json_object_is_type(v, json_type_double) && !json_object_is_type(v, json_type_int))
                        return false;
        }
        return !json_object_object_get_ex(b, "value", &value) ||
               json_object_is_type(value, json_type_double) || json_object_is_type(value, json_type_int);
}

void baselines_load(json_object *baselines, json_object *saved)
{
        if (!json_object_is_type(saved, json_type_object))
                return;
        json_object_object_foreach(saved, key, b) {
                if (json_object_object_length(baselines) >= BASELINES_MAX)
                        break;
                if (baseline_is_valid(b))
                        json_object_object_add(baselines, key, json_object_get(b));
        }
}

static int compare_double(const void *a, const void *b)
{
        double x = *(const double *)a, y = *(const double *)b;

        return x < y ? -1 : x > y;
}

static int compare_keys(const void *a, const void *b)
{
        return strcmp(*(char *const *)a, *(char *const *)b);
}

/* peer id, kind, metric and every parameter, keys sorted: a result measured with other
 * parameters (more streams, a longer run) is judged against its own baseline. */
static char *baseline_key(const char *peer_id, const char *kind, json_object *params, const char *metric)
{
        const char *keys[64];
        size_t n = 0, size = 0;
        char *text = NULL;
        FILE *out = open_memstream(&text, &size);

        if (!out)
                return NULL;
        if (json_object_is_type(params, json_type_object)) {
                json_object_object_foreach(params, name, ignored) {
                        (void)ignored;
                        if (n < ARRAY_SIZE(keys))
                                keys[n++] = name;
                }
        }
        qsort(keys, n, sizeof(keys[0]), compare_keys);
        fprintf(out, "%s/%s/%s", peer_id, kind, metric);
        for (size_t i = 0; i < n; i++) {
                json_object *v = NULL;

                json_object_object_get_ex(params, keys[i], &v);
                fprintf(out, "/%s=%s", keys[i], json_object_to_json_string_ext(v, JSON_C_TO_STRING_PLAIN));
        }
        if (fclose(out) != 0) {
                free(text);
                return NULL;
        }
        return text;
}

double baselines_value(json_object *baselines, const char *peer_id, const char *kind, json_object *params,
                       const char *metric)
{
        _cleanup_free_ char *key = baseline_key(peer_id, kind, params, metric);
        json_object *b, *value;

        if (!key || !json_object_object_get_ex(baselines, key, &b) ||
            !json_object_object_get_ex(b, "value", &value))
                return 0;
        return json_object_get_double(value);
}

bool baselines_learn(json_object *baselines, const char *peer_id, const char *kind, json_object *params,
                     const char *metric, double value)
{
        _cleanup_free_ char *key = baseline_key(peer_id, kind, params, metric);
        double sorted[BASELINE_SAMPLES];
        json_object *b, *samples;
        size_t n;

        if (!key)
                return false;
        if (!json_object_object_get_ex(baselines, key, &b)) {
                /* Bounded: ad-hoc parameters must not grow the state without end; the oldest
                 * baseline goes first. */
                if (json_object_object_length(baselines) >= BASELINES_MAX) {
                        struct json_object_iterator first = json_object_iter_begin(baselines);

                        json_object_object_del(baselines, json_object_iter_peek_name(&first));
                }
                b = json_object_new_object();
                json_object_object_add(b, "samples", json_object_new_array());
                json_object_object_add(baselines, key, b);
        }
        /* The first good results define normal; later ones are judged against them, never folded
         * in, so a slow decline cannot drag the baseline down with it. */
        if (json_object_object_get_ex(b, "value", NULL) ||
            !json_object_object_get_ex(b, "samples", &samples))
                return false;
        json_object_array_add(samples, json_object_new_double(value));
        n = json_object_array_length(samples);
        if (n >= BASELINE_SAMPLES) {
                for (size_t i = 0; i < BASELINE_SAMPLES; i++)
                        sorted[i] = json_object_get_double(json_object_array_get_idx(samples, i));
                qsort(sorted, BASELINE_SAMPLES, sizeof(double), compare_double);
                json_object_object_add(b, "value", json_object_new_double(sorted[BASELINE_SAMPLES / 2]));
        }
        return true;
}
