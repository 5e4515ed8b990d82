#include "result_rows.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/json_raw.h"
#include "common/macro.h"

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

/* The longest of each member a row takes: a result with a longer one is no node's. */
enum { ROW_PEER_ID, ROW_PEER, ROW_KIND, ROW_AT, ROW_VERDICT, ROW_OUT, ROW_IN, ROW_FIELDS };
static const size_t field_max[ROW_FIELDS] = { 32, 63, 15, 39, 15, 39, 39 };

/* A row's members as they are in the result's tree, before they are copied. */
struct row_pick {
        const char *text[ROW_FIELDS];
        size_t len[ROW_FIELDS];
};

/* The string member key of o; false when required and absent, not a string, or too long. */
static bool pick_string(json_object *o, const char *key, bool is_required, struct row_pick *p, int field)
{
        json_object *v = NULL;

        p->text[field] = "";
        p->len[field] = 0;
        if (!json_object_object_get_ex(o, key, &v) || !json_object_is_type(v, json_type_string))
                return !is_required;
        p->len[field] = (size_t)json_object_get_string_len(v);
        p->text[field] = json_object_get_string(v);
        return p->len[field] <= field_max[field];
}

/* The JSON text of the member key (a number, in practice); "" when absent or null. */
static bool pick_value(json_object *o, const char *key, struct row_pick *p, int field)
{
        json_object *v = NULL;

        p->text[field] = "";
        p->len[field] = 0;
        if (!key || !json_object_object_get_ex(o, key, &v) || json_object_is_type(v, json_type_null))
                return true;
        p->text[field] = json_object_to_json_string_ext(v, JSON_C_TO_STRING_PLAIN);
        if (!p->text[field])
                return false;
        p->len[field] = strlen(p->text[field]);
        return p->len[field] <= field_max[field];
}

static bool row_pick(json_object *r, struct row_pick *p)
{
        const struct result_kind *k;

        if (!json_object_is_type(r, json_type_object) || !pick_string(r, "kind", true, p, ROW_KIND) ||
            !(k = result_kind_of(p->text[ROW_KIND])))
                return false;
        return pick_string(r, "peer_id", true, p, ROW_PEER_ID) &&
               pick_string(r, "peer", false, p, ROW_PEER) && pick_string(r, "at", false, p, ROW_AT) &&
               pick_string(r, "verdict", false, p, ROW_VERDICT) && pick_value(r, k->out, p, ROW_OUT) &&
               pick_value(r, k->in, p, ROW_IN);
}

/* Copies a picked row's members to text, one after another, each ending in NUL; returns past them. */
static char *row_fill(struct result_row *row, const struct row_pick *p, char *text)
{
        const char **fields[ROW_FIELDS] = { &row->peer_id, &row->peer, &row->kind, &row->at,
                                            &row->verdict, &row->out,  &row->in };

        for (int f = 0; f < ROW_FIELDS; f++) {
                *fields[f] = memcpy(text, p->text[f], p->len[f]);
                text[p->len[f]] = '\0';
                text += p->len[f] + 1;
        }
        return text;
}

int result_rows_read(json_object *results, struct result_rows *out)
{
        size_t n = json_object_is_type(results, json_type_array) ? json_object_array_length(results) : 0;
        _cleanup_free_ struct row_pick *picks = NULL;
        size_t n_rows = 0, text_len = 0;
        char *text;

        *out = (struct result_rows){ 0 };
        if (n == 0)
                return 0;
        picks = calloc(n, sizeof(*picks));
        if (!picks)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++) {
                if (!row_pick(json_object_array_get_idx(results, i), &picks[n_rows]))
                        continue;
                for (int f = 0; f < ROW_FIELDS; f++)
                        text_len += picks[n_rows].len[f] + 1;
                n_rows++;
        }
        if (n_rows == 0)
                return 0;
        /* The rows and their strings in one block: a held node's rows are made and freed together. */
        out->v = malloc(n_rows * sizeof(*out->v) + text_len);
        if (!out->v)
                return -ENOMEM;
        text = (char *)(out->v + n_rows);
        for (size_t i = 0; i < n_rows; i++)
                text = row_fill(&out->v[i], &picks[i], text);
        out->n = n_rows;
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
