#include "result_rows.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/json_raw.h"

static const struct result_kind kinds[] = {
        { "nccl", "busbw_gbytes", "busbw_gbytes", NULL }, { "pathmtu", "path_mtu", "path_mtu", NULL },
        { "rdma", "gbps", "gbps_out", "gbps_in" },        { "rtt", "rtt_median_us", "rtt_median_us", NULL },
        { "tcp", "gbps", "gbps_out", "gbps_in" },
};

const struct result_kind *result_kind_of(const char *kind)
{
        for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
                if (strcmp(kinds[i].kind, kind) == 0)
                        return &kinds[i];
        return NULL;
}

/* Copies the string member key of o into buf; false when absent, not a string or too long. */
static bool copy_string(json_object *o, const char *key, char *buf, size_t size, bool is_required)
{
        json_object *v = NULL;
        size_t len;

        if (!json_object_object_get_ex(o, key, &v) || !json_object_is_type(v, json_type_string)) {
                buf[0] = '\0';
                return !is_required;
        }
        len = (size_t)json_object_get_string_len(v);
        if (len >= size)
                return false;
        memcpy(buf, json_object_get_string(v), len + 1);
        return true;
}

/* The JSON text of the member key (a number, in practice); "" when absent or null. */
static bool copy_value(json_object *o, const char *key, char *buf, size_t size)
{
        json_object *v = NULL;
        const char *text;

        buf[0] = '\0';
        if (!key || !json_object_object_get_ex(o, key, &v) || json_object_is_type(v, json_type_null))
                return true;
        text = json_object_to_json_string_ext(v, JSON_C_TO_STRING_PLAIN);
        if (!text || strlen(text) >= size)
                return false;
        snprintf(buf, size, "%s", text);
        return true;
}

static bool row_read(json_object *r, struct result_row *row)
{
        const struct result_kind *k;

        if (!json_object_is_type(r, json_type_object) ||
            !copy_string(r, "kind", row->kind, sizeof(row->kind), true) || !(k = result_kind_of(row->kind)))
                return false;
        return copy_string(r, "peer_id", row->peer_id, sizeof(row->peer_id), true) &&
               copy_string(r, "peer", row->peer, sizeof(row->peer), false) &&
               copy_string(r, "at", row->at, sizeof(row->at), false) &&
               copy_string(r, "verdict", row->verdict, sizeof(row->verdict), false) &&
               copy_value(r, k->out, row->out, sizeof(row->out)) &&
               copy_value(r, k->in, row->in, sizeof(row->in));
}

int result_rows_read(json_object *results, struct result_rows *out)
{
        size_t n = json_object_is_type(results, json_type_array) ? json_object_array_length(results) : 0;

        *out = (struct result_rows){ 0 };
        if (n == 0)
                return 0;
        out->v = calloc(n, sizeof(*out->v));
        if (!out->v)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++)
                if (row_read(json_object_array_get_idx(results, i), &out->v[out->n]))
                        out->n++;
        if (out->n == 0) {
                free(out->v);
                out->v = NULL;
        } else if (out->n < n) {
                struct result_row *v = realloc(out->v, out->n * sizeof(*v));

                if (v)
                        out->v = v;
        }
        return 0;
}

void result_rows_free(struct result_rows *rows)
{
        free(rows->v);
        *rows = (struct result_rows){ 0 };
}

json_object *result_row_value(const char *text)
{
        char *end;
        long long i;

        if (!text[0])
                return NULL;
        i = strtoll(text, &end, 10);
        if (*end == '\0' && end != text)
                return json_object_new_int64(i);
        /* A number with a fraction or exponent keeps its text; anything else is parsed as JSON. */
        if (strspn(text, "0123456789+-.eE") == strlen(text))
                return json_object_new_double_s(strtod(text, NULL), text);
        return json_tokener_parse(text);
}

const char *result_rows_held_text(json_object *held)
{
        return json_raw_text(held);
}

int result_rows_hold(json_object *sections, struct result_rows *out)
{
        json_object *results = NULL, *held;
        int r;

        *out = (struct result_rows){ 0 };
        if (!json_object_object_get_ex(sections, "results", &results) || result_rows_held_text(results))
                return 0;
        r = result_rows_read(results, out);
        if (r < 0)
                return r;
        held = json_raw_new(json_object_to_json_string_ext(results, JSON_C_TO_STRING_PLAIN));
        if (!held) {
                result_rows_free(out);
                return -ENOMEM;
        }
        json_object_object_add(sections, "results", held);
        return 0;
}
