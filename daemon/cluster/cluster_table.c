#include "cluster_table.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "daemon/base/clock.h"

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
}

static void node_clear(struct cluster_node *n)
{
        cluster_table_summary_replaced(n);
        if (n->msg)
                json_object_put(n->msg);
        else
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
