/* The remembered AER counts: a short list, one entry per PCI function with counters. */
#include "aer_watch.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

struct aer_seen {
        char pci[64];
        uint64_t first_fatal;
        uint64_t last_fatal;
};

struct aer_watch {
        struct aer_seen *v;
        size_t n;
};

int aer_watch_new(struct aer_watch **ret)
{
        *ret = calloc(1, sizeof(**ret));
        return *ret ? 0 : -ENOMEM;
}

void aer_watch_free(struct aer_watch *w)
{
        if (!w)
                return;
        free(w->v);
        free(w);
}

static struct aer_seen *find(struct aer_watch *w, const char *pci)
{
        for (size_t i = 0; i < w->n; i++)
                if (strcmp(w->v[i].pci, pci) == 0)
                        return &w->v[i];
        return NULL;
}

int aer_watch_observe(struct aer_watch *w, struct rdma_inventory *inv)
{
        for (size_t i = 0; i < inv->n; i++) {
                struct rdma_device *d = &inv->v[i];
                struct pcie_link *l = &d->pcie;
                struct aer_seen *s;

                if (!d->pci[0] || !l->has_aer)
                        continue;
                s = find(w, d->pci);
                if (!s) {
                        struct aer_seen *v = realloc(w->v, (w->n + 1) * sizeof(*v));

                        if (!v)
                                return -ENOMEM;
                        w->v = v;
                        s = &w->v[w->n++];
                        *s = (struct aer_seen){ .first_fatal = l->aer_fatal, .last_fatal = l->aer_fatal };
                        strcpy(s->pci, d->pci);
                        continue; /* the first look: nothing to compare with */
                }
                if (l->aer_fatal < s->last_fatal || l->aer_fatal < s->first_fatal)
                        s->first_fatal = s->last_fatal = l->aer_fatal;
                l->aer_fatal_since_start = (int64_t)(l->aer_fatal - s->first_fatal);
                l->aer_fatal_since_last = (int64_t)(l->aer_fatal - s->last_fatal);
                s->last_fatal = l->aer_fatal;
        }
        return 0;
}
