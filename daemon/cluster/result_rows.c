#include "result_rows.h"

#include <errno.h>
#include <json-c/json.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/json_scan.h"
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

/* A row's members as picked: where each is in the strings being gathered. */
struct row_pick {
        size_t off[ROW_FIELDS];
        size_t len[ROW_FIELDS];
};

/* What one call gathers: the rows picked so far and their strings, one after another. */
struct rows_gather {
        struct row_pick *picks;
        size_t n, cap;
        char *strings;
        size_t len, cap_strings;
};

static int gather_bytes(struct rows_gather *g, const char *bytes, size_t len, struct row_pick *p, int field)
{
        p->off[field] = g->len;
        p->len[field] = len;
        if (len > field_max[field])
                return 0; /* a row with a longer member is no node's: left out */
        if (len == 0)
                return 1;
        if (g->len + len > g->cap_strings) {
                size_t cap = g->cap_strings ? 2 * g->cap_strings : 1024;
                char *v;

                while (cap < g->len + len)
                        cap *= 2;
                v = realloc(g->strings, cap);
                if (!v)
                        return -ENOMEM;
                g->strings = v;
                g->cap_strings = cap;
        }
        memcpy(g->strings + g->len, bytes, len);
        g->len += len;
        return 1;
}

/* The string text[span] holds, as its bytes: between the quotes when it has no escape, else
 * decoded. 1, 0 when it is not a string or too long, -ENOMEM. */
static int gather_string(struct rows_gather *g, const char *text, struct json_scan_span span,
                         struct row_pick *p, int field)
{
        const char *inner = text + span.start + 1;
        size_t inner_len = span.len - 2;
        json_object *decoded;
        int r;

        if (span.len < 2 || text[span.start] != '"')
                return 0;
        if (!memchr(inner, '\\', inner_len))
                return gather_bytes(g, inner, inner_len, p, field);
        decoded = json_scan_parse(text, span);
        r = json_object_is_type(decoded, json_type_string)
                    ? gather_bytes(g, json_object_get_string(decoded),
                                   (size_t)json_object_get_string_len(decoded), p, field)
                    : 0;
        json_object_put(decoded);
        return r;
}

/* The most keys find_members looks for at once. */
#define MEMBERS_MAX 16

/* Where the members named keys are in the object at text[elem] (a NULL key is none); the last of
 * a repeated member counts, as when the object is parsed. false when it is no object. */
static bool find_members(const char *text, struct json_scan_span elem, const char *const *keys, size_t n,
                         struct json_scan_span *spans, bool *has)
{
        struct json_scan_span key, value;
        struct json_scan_list list;
        int r;

        size_t key_len[MEMBERS_MAX];

        if (n > MEMBERS_MAX)
                return false;
        for (size_t i = 0; i < n; i++) {
                has[i] = false;
                key_len[i] = keys[i] ? strlen(keys[i]) : 0;
        }
        if (json_scan_open(&list, text, elem.start + elem.len, elem.start, '{') < 0)
                return false;
        /* Each member against every key: the lengths first, as most differ. */
        while ((r = json_scan_member(&list, &key, &value)) > 0)
                for (size_t i = 0; i < n; i++)
                        if (keys[i] && key.len == key_len[i] &&
                            memcmp(text + key.start, keys[i], key.len) == 0) {
                                spans[i] = value;
                                has[i] = true;
                        }
        return r == 0;
}

/* A string member: a required one must be there and be a string; another value of an optional
 * one reads as "" (a result's own business). */
static int pick_string(struct rows_gather *g, const char *text, const struct json_scan_span *span,
                       bool is_required, struct row_pick *p, int field)
{
        int r;

        if (!span)
                return is_required ? 0 : gather_bytes(g, "", 0, p, field);
        r = gather_string(g, text, *span, p, field);
        if (r == 0 && !is_required && text[span->start] != '"')
                return gather_bytes(g, "", 0, p, field);
        return r;
}

/* A value member as its JSON text ("12.30" stays "12.30"); "" when absent or null. */
static int pick_value(struct rows_gather *g, const char *text, const struct json_scan_span *span,
                      struct row_pick *p, int field)
{
        if (!span || (span->len == 4 && memcmp(text + span->start, "null", 4) == 0))
                return gather_bytes(g, "", 0, p, field);
        return gather_bytes(g, text + span->start, span->len, p, field);
}

#define N_KINDS (sizeof(kinds) / sizeof(kinds[0]))
/* The members a row may take, looked for in one pass: the row's own, then each kind's out and in. */
enum { MEMBER_KIND_VALUES = ROW_OUT, N_MEMBERS = ROW_OUT + 2 * N_KINDS };
_Static_assert(N_MEMBERS <= MEMBERS_MAX, "find_members takes them all at once");

/* The row of the result at text[elem]: 1 when it is one the links view shows, 0 when not. */
static int pick_row(struct rows_gather *g, const char *text, struct json_scan_span elem, struct row_pick *p)
{
        const char *keys[N_MEMBERS] = { "peer_id", "peer", "kind", "at", "verdict" };
        struct json_scan_span spans[N_MEMBERS], *value;
        bool has[N_MEMBERS];
        const struct result_kind *k;
        size_t mark = g->len, v;
        char kind[16];
        int r = 0;

        for (size_t i = 0; i < N_KINDS; i++) {
                keys[MEMBER_KIND_VALUES + 2 * i] = kinds[i].out;
                keys[MEMBER_KIND_VALUES + 2 * i + 1] = kinds[i].in;
        }
        if (!find_members(text, elem, keys, N_MEMBERS, spans, has))
                goto left_out;
        /* The kind first: it names the members that hold the values. */
        r = pick_string(g, text, has[ROW_KIND] ? &spans[ROW_KIND] : NULL, true, p, ROW_KIND);
        if (r <= 0)
                goto left_out;
        snprintf(kind, sizeof(kind), "%.*s", (int)p->len[ROW_KIND],
                 p->len[ROW_KIND] ? g->strings + p->off[ROW_KIND] : "");
        g->len = mark;
        k = result_kind_of(kind);
        r = 0;
        if (!k)
                goto left_out;
        v = MEMBER_KIND_VALUES + 2 * (size_t)(k - kinds);
        r = 1;
        for (int f = 0; r > 0 && f < ROW_FIELDS; f++) {
                size_t m = f == ROW_OUT ? v : f == ROW_IN ? v + 1 : (size_t)f;

                value = has[m] ? &spans[m] : NULL;
                if (f == ROW_OUT || f == ROW_IN)
                        r = pick_value(g, text, value, p, f);
                else
                        r = pick_string(g, text, value, f == ROW_PEER_ID || f == ROW_KIND, p, f);
        }
        if (r > 0)
                return 1;
left_out:
        g->len = mark; /* what this result left is dropped with it */
        return r < 0 ? r : 0;
}

/* Copies a picked row's members to text, one after another, each ending in NUL; returns past them. */
static char *row_fill(struct result_row *row, const struct row_pick *p, const char *strings, char *text)
{
        const char **fields[ROW_FIELDS] = { &row->peer_id, &row->peer, &row->kind, &row->at,
                                            &row->verdict, &row->out,  &row->in };

        for (int f = 0; f < ROW_FIELDS; f++) {
                *fields[f] = p->len[f] ? memcpy(text, strings + p->off[f], p->len[f]) : text;
                text[p->len[f]] = '\0';
                text += p->len[f] + 1;
        }
        return text;
}

static void gather_free(struct rows_gather *g)
{
        free(g->picks);
        free(g->strings);
}

int result_rows_read(const char *text, size_t len, struct result_rows *out)
{
        _cleanup_(gather_free) struct rows_gather g = { 0 };
        struct json_scan_span elem;
        struct json_scan_list list;
        size_t text_len = 0;
        char *strings;
        int r;

        *out = (struct result_rows){ 0 };
        if (!text || json_scan_open(&list, text, len, 0, '[') < 0)
                return 0;
        while ((r = json_scan_element(&list, &elem)) > 0) {
                if (g.n == g.cap) {
                        size_t cap = g.cap ? 2 * g.cap : 64;
                        struct row_pick *v = realloc(g.picks, cap * sizeof(*v));

                        if (!v)
                                return -ENOMEM;
                        g.picks = v;
                        g.cap = cap;
                }
                r = pick_row(&g, text, elem, &g.picks[g.n]);
                if (r < 0)
                        return r;
                g.n += (size_t)r;
        }
        if (g.n == 0)
                return 0;
        for (size_t i = 0; i < g.n; i++)
                for (int f = 0; f < ROW_FIELDS; f++)
                        text_len += g.picks[i].len[f] + 1;
        /* The rows and their strings in one block, freed together. */
        out->v = malloc(g.n * sizeof(*out->v) + text_len);
        if (!out->v)
                return -ENOMEM;
        strings = (char *)(out->v + g.n);
        for (size_t i = 0; i < g.n; i++)
                strings = row_fill(&out->v[i], &g.picks[i], g.strings, strings);
        out->n = g.n;
        return 0;
}

void result_rows_free(struct result_rows *rows)
{
        free(rows->v);
        *rows = (struct result_rows){ 0 };
}

void result_row_value_write(FILE *f, const char *text)
{
        json_object *parsed;
        char *end;
        long long i;

        if (!text[0]) {
                fputs("null", f);
                return;
        }
        i = strtoll(text, &end, 10);
        if (*end == '\0' && end != text) {
                fprintf(f, "%lld", i);
                return;
        }
        /* A number with a fraction or exponent keeps its text; anything else is parsed as JSON. */
        if (strspn(text, "0123456789+-.eE") == strlen(text)) {
                fputs(text, f);
                return;
        }
        parsed = json_tokener_parse(text);
        fputs(parsed ? json_object_to_json_string_ext(parsed, JSON_C_TO_STRING_PLAIN) : "null", f);
        json_object_put(parsed);
}
