#include "links_view.h"

#include <errno.h>
#include <stdio.h>
#include <stdio_ext.h>
#include <stdlib.h>
#include <string.h>

#include "common/macro.h"
#include "result_rows.h"

/* One end's measurement offered for one direction of one kind of a link; the newest is shown. */
struct offer {
        const char *a_id, *a_name, *b_id, *b_name; /* the link's ends, in name order */
        const struct result_kind *kind;
        const struct result_row *row;
        const char *value; /* "" offers nothing: the kind still shows, with no measurement */
        const char *measured_by;
        bool is_a_to_b;
        bool is_stale;
        size_t seq; /* the order offered: at equal times and ends, the first wins */
};

/* The links of one build, their offers and the rows these point into. */
struct links_build {
        const struct links_view_node *nodes;
        size_t n_nodes;
        const struct links_view_node **by_id; /* the nodes by id, the first of an id only */
        size_t n_ids;
        struct result_rows *rows; /* per node */
        struct offer *offers;
        size_t n_offers, cap_offers;
};

static int by_node_id(const void *p, const void *q)
{
        const struct links_view_node *x = *(const struct links_view_node *const *)p;
        const struct links_view_node *y = *(const struct links_view_node *const *)q;

        return strcmp(x->node_id, y->node_id);
}

static int by_node_id_then_order(const void *p, const void *q)
{
        const struct links_view_node *x = *(const struct links_view_node *const *)p;
        const struct links_view_node *y = *(const struct links_view_node *const *)q;
        int r = strcmp(x->node_id, y->node_id);

        return r ? r : (x > y) - (x < y);
}

/* The nodes by id for the names of a result's peers: the first of an id names it. */
static int index_ids(struct links_build *b)
{
        b->by_id = calloc(b->n_nodes + 1, sizeof(*b->by_id));
        if (!b->by_id)
                return -ENOMEM;
        for (size_t i = 0; i < b->n_nodes; i++)
                b->by_id[i] = &b->nodes[i];
        if (b->n_nodes)
                qsort(b->by_id, b->n_nodes, sizeof(*b->by_id), by_node_id_then_order);
        for (size_t i = 0; i < b->n_nodes; i++)
                if (b->n_ids == 0 || strcmp(b->by_id[b->n_ids - 1]->node_id, b->by_id[i]->node_id) != 0)
                        b->by_id[b->n_ids++] = b->by_id[i];
        return 0;
}

static const char *name_of(const struct links_build *b, const char *node_id, const char *fallback)
{
        struct links_view_node key = { .node_id = node_id };
        const struct links_view_node *k = &key, *const * found;

        found = bsearch(&k, b->by_id, b->n_ids, sizeof(*b->by_id), by_node_id);
        return found ? (*found)->name : fallback;
}

static int add_offer(struct links_build *b, const struct offer *o)
{
        if (b->n_offers == b->cap_offers) {
                size_t cap = b->cap_offers ? 2 * b->cap_offers : 256;
                struct offer *v = realloc(b->offers, cap * sizeof(*v));

                if (!v)
                        return -ENOMEM;
                b->offers = v;
                b->cap_offers = cap;
        }
        b->offers[b->n_offers] = *o;
        b->offers[b->n_offers].seq = b->n_offers;
        b->n_offers++;
        return 0;
}

/* A node's rows offered to their links: the value out of the node to its peer, and back. */
static int add_results(struct links_build *b, size_t i)
{
        const struct links_view_node *node = &b->nodes[i];
        const char *x = node->node_id, *x_name = node->name;
        struct result_rows *rows = &b->rows[i];
        int r = result_rows_read(node->results, node->results_len, rows);

        if (r < 0)
                return r;
        for (size_t k = 0; k < rows->n; k++) {
                const struct result_row *row = &rows->v[k];
                const struct result_kind *m = result_kind_of(row->kind);
                const char *y = row->peer_id, *y_name;
                struct offer o;
                int order;

                if (!m || !y[0] || strcmp(x, y) == 0)
                        continue;
                y_name = name_of(b, y, row->peer[0] ? row->peer : "?");
                order = strcmp(x_name, y_name);
                o = (struct offer){
                        .kind = m, .row = row, .measured_by = x_name, .is_stale = node->is_stale
                };
                if (order < 0 || (order == 0 && strcmp(x, y) < 0))
                        o.a_id = x, o.a_name = x_name, o.b_id = y, o.b_name = y_name, o.is_a_to_b = true;
                else
                        o.a_id = y, o.a_name = y_name, o.b_id = x, o.b_name = x_name, o.is_a_to_b = false;
                o.value = row->out;
                if ((r = add_offer(b, &o)) < 0)
                        return r;
                if (m->in) {
                        o.value = row->in;
                        o.is_a_to_b = !o.is_a_to_b;
                        if ((r = add_offer(b, &o)) < 0)
                                return r;
                }
        }
        return 0;
}

static int same_link(const struct offer *x, const struct offer *y)
{
        int r = strcmp(x->a_id, y->a_id);

        return r ? r : strcmp(x->b_id, y->b_id);
}

/* By link, kind and direction; within those the shown one first: one with a value, the newest,
 * at equal times the one measured by the node first in name order, so every node shows the same. */
static int by_preference(const void *p, const void *q)
{
        const struct offer *x = p, *y = q;
        int r = same_link(x, y);

        if (!r)
                r = strcmp(x->kind->kind, y->kind->kind);
        if (!r)
                r = (int)y->is_a_to_b - (int)x->is_a_to_b;
        if (!r)
                r = (int)(y->value[0] != '\0') - (int)(x->value[0] != '\0');
        if (!r)
                r = strcmp(y->row->at, x->row->at);
        if (!r)
                r = strcmp(x->measured_by, y->measured_by);
        if (!r)
                r = x->seq < y->seq ? -1 : x->seq > y->seq;
        return r;
}

/* A link as its run of offers; named as its first offer named its ends. */
struct link_run {
        size_t first, n;
        const struct offer *named;
};

static int by_names(const void *p, const void *q)
{
        const struct offer *x = ((const struct link_run *)p)->named,
                           *y = ((const struct link_run *)q)->named;
        int r = strcmp(x->a_name, y->a_name);

        if (!r)
                r = strcmp(x->b_name, y->b_name);
        return r ? r : same_link(x, y);
}

/* A string as json-c writes one: the two-character escapes, \u00XX below a space, "/" as "\/". */
static void write_string(FILE *f, const char *s)
{
        static const char hex[] = "0123456789abcdef", plain[] = "\b\n\r\t\f\"\\/", escaped[] = "bnrtf\"\\/";
        const char *run = s, *e;

        fputc('"', f);
        for (; *s; s++) {
                unsigned char c = (unsigned char)*s;

                if (c >= ' ' && c != '"' && c != '\\' && c != '/')
                        continue;
                e = strchr(plain, c);
                fwrite(run, 1, (size_t)(s - run), f);
                run = s + 1;
                if (e)
                        fprintf(f, "\\%c", escaped[e - plain]);
                else
                        fprintf(f, "\\u00%c%c", hex[c >> 4], hex[c & 0xf]);
        }
        fwrite(run, 1, (size_t)(s - run), f);
        fputc('"', f);
}

static void write_cell(FILE *f, const struct offer *o)
{
        if (!o) {
                fputs("null", f);
                return;
        }
        fputs("{\"value\":", f);
        result_row_value_write(f, o->value);
        fputs(",\"verdict\":", f);
        write_string(f, o->row->verdict[0] ? o->row->verdict : "?");
        fputs(",\"at\":", f);
        write_string(f, o->row->at);
        fputs(",\"measured_by\":", f);
        write_string(f, o->measured_by);
        /* From a node gone stale: shown as such, never as current. */
        fputs(o->is_stale ? ",\"stale\":true}" : ",\"stale\":false}", f);
}

static void write_end(FILE *f, const char *node_id, const char *name)
{
        fputs("{\"node_id\":", f);
        write_string(f, node_id);
        fputs(",\"name\":", f);
        write_string(f, name);
        fputc('}', f);
}

/* The offers of one link sorted by preference: its kinds, each with its two directions' first. */
static void write_link(FILE *f, const struct offer *offers, const struct link_run *link)
{
        const struct offer *end = offers + link->first + link->n;

        fputs("{\"a\":", f);
        write_end(f, link->named->a_id, link->named->a_name);
        fputs(",\"b\":", f);
        write_end(f, link->named->b_id, link->named->b_name);
        fputs(",\"kinds\":[", f);
        for (const struct offer *o = offers + link->first; o < end;) {
                const struct result_kind *kind = o->kind;
                const struct offer *cell[2] = { NULL, NULL }; /* a_to_b, b_to_a */

                if (o != offers + link->first)
                        fputc(',', f);
                for (; o < end && o->kind == kind; o++) {
                        int d = o->is_a_to_b ? 0 : 1;

                        if (!cell[d] && o->value[0])
                                cell[d] = o;
                }
                fputs("{\"kind\":", f);
                write_string(f, kind->kind);
                fputs(",\"metric\":", f);
                write_string(f, kind->metric);
                fputs(",\"a_to_b\":", f);
                write_cell(f, cell[0]);
                fputs(",\"b_to_a\":", f);
                write_cell(f, cell[1]);
                fputc('}', f);
        }
        fputs("]}", f);
}

/* The offers sorted, split into links and written in the links' name order. */
static int write_links(struct links_build *b, FILE *f)
{
        _cleanup_free_ struct link_run *links = calloc(b->n_offers + 1, sizeof(*links));
        size_t n_links = 0;

        if (!links)
                return -ENOMEM;
        if (b->n_offers)
                qsort(b->offers, b->n_offers, sizeof(*b->offers), by_preference);
        for (size_t i = 0; i < b->n_offers; i++) {
                struct link_run *l = n_links ? &links[n_links - 1] : NULL;

                if (!l || same_link(&b->offers[l->first], &b->offers[i]) != 0) {
                        l = &links[n_links++];
                        *l = (struct link_run){ .first = i, .named = &b->offers[i] };
                }
                l->n++;
                if (b->offers[i].seq < l->named->seq)
                        l->named = &b->offers[i];
        }
        qsort(links, n_links, sizeof(*links), by_names);
        fputc('[', f);
        for (size_t i = 0; i < n_links; i++) {
                if (i)
                        fputc(',', f);
                write_link(f, b->offers, &links[i]);
        }
        fputc(']', f);
        return 0;
}

static void build_free(struct links_build *b)
{
        for (size_t i = 0; b->rows && i < b->n_nodes; i++)
                result_rows_free(&b->rows[i]);
        free(b->rows);
        free(b->by_id);
        free(b->offers);
}

int links_view_text(const struct links_view_node *nodes, size_t n, char **ret)
{
        _cleanup_(build_free) struct links_build b = { .nodes = nodes, .n_nodes = n };
        char *text = NULL;
        size_t len = 0;
        FILE *f;
        int r;

        b.rows = calloc(n + 1, sizeof(*b.rows));
        if (!b.rows || index_ids(&b) < 0)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++) {
                size_t mark = b.n_offers;

                if (add_results(&b, i) < 0) {
                        b.n_offers = mark; /* what it offered points into the rows freed */
                        result_rows_free(&b.rows[i]);
                }
        }
        f = open_memstream(&text, &len);
        if (!f)
                return -ENOMEM;
        /* Only this call writes it: some 50,000 writes at 32 nodes need no lock each. */
        __fsetlocking(f, FSETLOCKING_BYCALLER);
        r = write_links(&b, f);
        if (fclose(f) != 0 || r < 0) {
                free(text);
                return r < 0 ? r : -ENOMEM;
        }
        *ret = text;
        return 0;
}
