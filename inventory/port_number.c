#include "port_number.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct pci_place {
        bool is_pci;
        unsigned domain, bus, device, function;
};

static struct pci_place pci_place_of(const char *pci)
{
        struct pci_place p = { 0 };
        int n = 0;

        if (pci && pci[0] &&
            sscanf(pci, "%x:%x:%x.%x%n", &p.domain, &p.bus, &p.device, &p.function, &n) == 4 &&
            pci[n] == '\0')
                p.is_pci = true;
        return p;
}

static const char *str(const char *s)
{
        return s ? s : "";
}

/* PCI order, then name order: PCI netdevs first. */
static int compare_netdevs(const struct port_number_netdev *a, const struct port_number_netdev *b)
{
        struct pci_place x = pci_place_of(a->pci), y = pci_place_of(b->pci);

        if (x.is_pci != y.is_pci)
                return x.is_pci ? -1 : 1;
        if (x.is_pci) {
                unsigned kx[] = { x.domain, x.bus, x.device, x.function, (unsigned)a->dev_port },
                         ky[] = { y.domain, y.bus, y.device, y.function, (unsigned)b->dev_port };

                for (size_t i = 0; i < sizeof(kx) / sizeof(kx[0]); i++)
                        if (kx[i] != ky[i])
                                return kx[i] < ky[i] ? -1 : 1;
        }
        return strcmp(str(a->name), str(b->name));
}

/* Are a and b the two halves of one port: named twins, or one function in two PCI domains? */
static bool are_twins(const struct port_number_netdev *a, const struct port_number_netdev *b)
{
        struct pci_place x = pci_place_of(a->pci), y = pci_place_of(b->pci);

        if ((a->twin && strcmp(a->twin, str(b->name)) == 0) ||
            (b->twin && strcmp(b->twin, str(a->name)) == 0))
                return true;
        return x.is_pci && y.is_pci && x.domain != y.domain && x.bus == y.bus && x.device == y.device &&
               x.function == y.function && a->dev_port == b->dev_port;
}

void port_number_assign(const struct port_number_netdev *v, size_t n, int *ports)
{
        size_t *first = calloc(n ? n : 1, sizeof(*first));
        int next = 0;

        if (!first) {
                for (size_t i = 0; i < n; i++)
                        ports[i] = -1;
                return;
        }
        /* Each netdev's first half: the earliest of it and its twins, in PCI then name order. */
        for (size_t i = 0; i < n; i++) {
                first[i] = i;
                for (size_t k = 0; k < n; k++)
                        if (k != i && are_twins(&v[i], &v[k]) && compare_netdevs(&v[k], &v[first[i]]) < 0)
                                first[i] = k;
        }
        for (size_t i = 0; i < n; i++)
                ports[i] = -1;
        /* The first halves in order; a card's ports are its slots past the cards before it. */
        for (;;) {
                size_t best = n;
                struct pci_place p, q;

                for (size_t i = 0; i < n; i++)
                        if (first[i] == i && ports[i] < 0 &&
                            (best == n || compare_netdevs(&v[i], &v[best]) < 0))
                                best = i;
                if (best == n)
                        break;
                p = pci_place_of(v[best].pci);
                if (p.is_pci) {
                        int base = next,
                            slot = (int)p.function + (v[best].dev_port > 0 ? v[best].dev_port : 0);

                        /* The card's ports start where the previous card's ended: find this card's
                         * base among the numbered ones (same domain, bus and device). */
                        for (size_t i = 0; i < n; i++) {
                                q = pci_place_of(v[i].pci);
                                if (first[i] == i && ports[i] >= 0 && q.is_pci && q.domain == p.domain &&
                                    q.bus == p.bus && q.device == p.device) {
                                        int their =
                                                (int)q.function + (v[i].dev_port > 0 ? v[i].dev_port : 0);

                                        if (ports[i] - their < base)
                                                base = ports[i] - their;
                                }
                        }
                        ports[best] = base + slot;
                } else {
                        ports[best] = next;
                }
                if (ports[best] + 1 > next)
                        next = ports[best] + 1;
        }
        /* Numbers past the limit: the same order, without the gaps. */
        if (next > PORT_NUMBER_LIMIT)
                for (size_t i = 0; i < n; i++) {
                        int rank = 0;

                        if (first[i] != i)
                                continue;
                        for (size_t k = 0; k < n; k++)
                                rank += first[k] == k && ports[k] < ports[i];
                        ports[i] = rank;
                }
        for (size_t i = 0; i < n; i++)
                ports[i] = ports[first[i]];
        free(first);
}
