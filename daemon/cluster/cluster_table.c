#include "cluster_table.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cluster.h"
#include "common/json_raw.h"
#include "common/json_scan.h"
#include "daemon/base/clock.h"
#include "summary.h"

int64_t cluster_now_usec(void)
{
        return (int64_t)clock_monotonic_usec();
}

struct cluster_node *cluster_table_find(struct cluster_table *t, const char *node_id)
{
        for (size_t i = 0; i < t->n; i++)
                if (strcmp(t->v[i].node_id, node_id) == 0)
                        return &t->v[i];
        return NULL;
}

struct cluster_node *cluster_table_add(struct cluster_table *t, const char *node_id)
{
        struct cluster_node *n;

        if (t->n == t->allocated) {
                size_t want = t->allocated ? 2 * t->allocated : 8;
                struct cluster_node *v = realloc(t->v, want * sizeof(*v));

                if (!v)
                        return NULL;
                t->v = v;
                t->allocated = want;
        }
        n = &t->v[t->n++];
        *n = (struct cluster_node){ 0 };
        snprintf(n->node_id, sizeof(n->node_id), "%s", node_id);
        return n;
}

void cluster_table_summary_replaced(struct cluster_node *n)
{
        free(n->up_with);
        n->up_with = NULL;
        n->n_up_with = 0;
        n->has_up_with = false;
        n->is_up_with_in_text = false;
}

static void node_clear(struct cluster_node *n)
{
        cluster_table_summary_replaced(n);
        free(n->envelope);
        free(n->alive);
        json_object_put(n->sections);
}

void cluster_table_remove(struct cluster_table *t, struct cluster_node *n)
{
        size_t i = (size_t)(n - t->v);

        node_clear(n);
        memmove(&t->v[i], &t->v[i + 1], (t->n - i - 1) * sizeof(*n));
        t->n--;
}

void cluster_table_clear(struct cluster_table *t)
{
        for (size_t i = 0; i < t->n; i++)
                node_clear(&t->v[i]);
        free(t->v);
        *t = (struct cluster_table){ 0 };
}

size_t cluster_table_name_count(const struct cluster_table *t, const char *name)
{
        size_t n = 0;

        for (size_t i = 0; i < t->n; i++)
                n += strcmp(t->v[i].name, name) == 0;
        return n;
}

bool cluster_table_name_is_unique(const struct cluster_table *t, const char *name)
{
        return cluster_table_name_count(t, name) == 1;
}

uint64_t cluster_node_age_usec(const struct cluster_node *n, int64_t now)
{
        return now > n->made_usec ? (uint64_t)(now - n->made_usec) : 0;
}

static int by_name_then_id(const void *a, const void *b)
{
        const struct cluster_node *x = *(struct cluster_node *const *)a,
                                  *y = *(struct cluster_node *const *)b;
        int r = strcmp(x->name, y->name);

        return r ? r : strcmp(x->node_id, y->node_id);
}

struct cluster_node **cluster_table_sorted(struct cluster_table *t)
{
        struct cluster_node **v;

        if (t->n == 0)
                return NULL;
        v = calloc(t->n, sizeof(*v));
        if (!v)
                return NULL;
        for (size_t i = 0; i < t->n; i++)
                v[i] = &t->v[i];
        qsort(v, t->n, sizeof(*v), by_name_then_id);
        return v;
}

#define ID_LEN (sizeof(((struct cluster_node *)NULL)->node_id) - 1)

static int by_raw_id(const void *a, const void *b)
{
        return memcmp(a, b, NODE_KEY_ID_RAW_LEN);
}

/* The ids of a held "peers" section, read where the text lies: an id written with escapes, or
 * not a node id at all, is not read: a relay too many, never one missing. */
static int read_up_with(const char *text, struct cluster_node *n)
{
        struct json_scan_list list;
        struct json_scan_span v;
        size_t allocated = 0;

        if (json_scan_open(&list, text, strlen(text), 0, '[') < 0)
                return 0;
        /* No node is up with more nodes than are kept: a longer list is a hostile one. */
        while (n->n_up_with < CLUSTER_MAX_NODES && json_scan_element(&list, &v) == 1) {
                char id[ID_LEN + 1];

                if (v.len != ID_LEN + 2 || text[v.start] != '"')
                        continue;
                if (n->n_up_with == allocated) {
                        size_t want = allocated ? 2 * allocated : 32;
                        unsigned char(*ids)[NODE_KEY_ID_RAW_LEN] = realloc(n->up_with, want * sizeof(*ids));

                        if (!ids)
                                return -ENOMEM;
                        n->up_with = ids;
                        allocated = want;
                }
                memcpy(id, text + v.start + 1, ID_LEN);
                id[ID_LEN] = '\0';
                if (node_key_id_to_raw(id, n->up_with[n->n_up_with]) == 0)
                        n->n_up_with++;
        }
        if (n->n_up_with)
                qsort(n->up_with, n->n_up_with, sizeof(*n->up_with), by_raw_id);
        return 0;
}

/* Whether the text of this node's own "peers" section lists id, read where it lies. */
static bool text_lists_id(const char *text, const char *id)
{
        size_t n = strlen(id);
        struct json_scan_list list;
        struct json_scan_span v;

        if (json_scan_open(&list, text, strlen(text), 0, '[') < 0)
                return false;
        while (json_scan_element(&list, &v) == 1)
                if (v.len == n + 2 && text[v.start] == '"' && memcmp(text + v.start + 1, id, n) == 0)
                        return true;
        return false;
}

/* Stride of an id in a "peers" section as this version writes it: `"<32 hex>",`. */
#define LISTED_ID_STRIDE (ID_LEN + 3)

/* How many ids text lists when it is written as set_peers_section writes it: no space, each id
 * 32 lowercase hex digits, sorted, at most CLUSTER_MAX_NODES; -1 when it is not. Such a list is
 * searched where it lies (listed_in_text), with no copy of its ids. */
static ssize_t canonical_id_count(const char *text)
{
        size_t len = strlen(text), count;

        if (len < 2 || text[0] != '[' || text[len - 1] != ']')
                return -1;
        if (len == 2)
                return 0;
        if ((len - 1) % LISTED_ID_STRIDE != 0)
                return -1;
        count = (len - 1) / LISTED_ID_STRIDE;
        if (count > CLUSTER_MAX_NODES)
                return -1;
        for (size_t i = 0; i < count; i++) {
                const char *at = text + 1 + i * LISTED_ID_STRIDE;
                char id[ID_LEN + 1];

                if (at[0] != '"' || at[ID_LEN + 1] != '"' || at[ID_LEN + 2] != (i + 1 < count ? ',' : ']'))
                        return -1;
                memcpy(id, at + 1, ID_LEN);
                id[ID_LEN] = '\0';
                if (!summary_is_id(id) || (i > 0 && memcmp(at - LISTED_ID_STRIDE + 1, id, ID_LEN) >= 0))
                        return -1;
        }
        return (ssize_t)count;
}

static bool listed_in_text(const char *text, size_t count, const char *node_id)
{
        size_t lo = 0, hi = count;

        if (strlen(node_id) != ID_LEN)
                return false;
        while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;
                int r = memcmp(text + 2 + mid * LISTED_ID_STRIDE, node_id, ID_LEN);

                if (r == 0)
                        return true;
                if (r < 0)
                        lo = mid + 1;
                else
                        hi = mid;
        }
        return false;
}

static bool up_with_lists(const struct cluster_node *n, const char *node_id)
{
        unsigned char raw[NODE_KEY_ID_RAW_LEN];

        return n->n_up_with && node_key_id_to_raw(node_id, raw) == 0 &&
               bsearch(raw, n->up_with, n->n_up_with, sizeof(*n->up_with), by_raw_id);
}

/* This runs for every up peer at every alive and summary passed on, at 32 nodes some 500 times a
 * second, where parsing the section each time made and freed millions of objects an hour and
 * scanning its text was 2.5% of the daemons' time: a held node's list is read once per summary,
 * then searched. A list as sparkd writes it is searched in its text; any other is read into ids
 * (at 64 nodes, a KiB a node). */
bool cluster_node_lists_peer(struct cluster_node *n, const char *node_id)
{
        json_object *peers = NULL;
        const char *text;
        ssize_t count;

        /* Read already: most calls end here, without a lookup of the section. */
        if (n->envelope && n->has_up_with && !n->is_up_with_in_text)
                return up_with_lists(n, node_id);
        if (!json_object_object_get_ex(n->sections, "peers", &peers))
                return false;
        text = json_raw_text(peers);
        if (text && !n->envelope)
                return text_lists_id(text, node_id); /* this node's, set without a summary */
        if (text && n->has_up_with)
                return listed_in_text(text, n->n_up_with, node_id);
        if (text) {
                count = canonical_id_count(text);
                if (count < 0 && read_up_with(text, n) < 0) {
                        cluster_table_summary_replaced(n);
                        return false;
                }
                if (count >= 0) {
                        n->n_up_with = (size_t)count;
                        n->is_up_with_in_text = true;
                }
                n->has_up_with = true;
                return n->is_up_with_in_text ? listed_in_text(text, n->n_up_with, node_id)
                                             : up_with_lists(n, node_id);
        }
        for (size_t i = 0;
             json_object_is_type(peers, json_type_array) && i < json_object_array_length(peers); i++) {
                const char *id = json_object_get_string(json_object_array_get_idx(peers, i));

                if (id && strcmp(id, node_id) == 0)
                        return true;
        }
        return false;
}
