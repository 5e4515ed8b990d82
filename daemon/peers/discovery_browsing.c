#include "discovery_browsing.h"

#include <avahi-client/lookup.h>
#include <avahi-common/error.h>
#include <avahi-common/strlst.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/macro.h"
#include "common/strutil.h"
#include "daemon/base/log.h"
#include "discovery_internal.h"

/* A service that could not be resolved (its answers were lost) is asked about again. */
#define RERESOLVE_USEC (10 * SEC)

/* One service instance as Avahi browses it: the same peer shows up once per interface. */
struct service {
        struct service *next;
        struct discovery *d;
        AvahiIfIndex ifindex;
        AvahiProtocol protocol;
        char *name;
        char *domain;
        AvahiServiceResolver *resolver;
        struct event *reresolve;
        bool has_record; /* record is a peer's valid TXT, not ours and not bad */
        struct discovery_record record;
};

/* Avahi's TXT strings are length-counted and may hold NUL bytes; ours never do. */
static int strlst_to_strv(AvahiStringList *l, char ***ret)
{
        _cleanup_strv_ char **v = calloc(1, sizeof(char *));

        if (!v)
                return -ENOMEM;
        for (; l; l = avahi_string_list_get_next(l)) {
                const char *text = (const char *)avahi_string_list_get_text(l);
                size_t n = avahi_string_list_get_size(l);
                _cleanup_free_ char *s = NULL;

                if (memchr(text, '\0', n))
                        return -EBADMSG;
                s = strndup(text, n);
                if (!s || strv_push(&v, s) < 0)
                        return -ENOMEM;
        }
        *ret = TAKE_PTR(v);
        return 0;
}

static bool node_has_other(struct discovery *d, const struct service *except, const char *node_id,
                           struct service **other)
{
        for (struct service *s = d->services; s; s = s->next)
                if (s != except && s->has_record && strcmp(s->record.node_id, node_id) == 0) {
                        if (other)
                                *other = s;
                        return true;
                }
        return false;
}

/* What a service instance leaving means for its node: lost when it was the last instance with a
 * record, or the record of the remaining instance when that one differs. */
static void service_forget_record(struct service *s)
{
        struct discovery *d = s->d;
        struct service *other = NULL;
        struct discovery_record old;

        if (!s->has_record)
                return;
        old = s->record;
        s->record = (struct discovery_record){ 0 };
        s->has_record = false;
        if (!node_has_other(d, s, old.node_id, &other)) {
                log_debug("mDNS: peer %s (%s) is gone", old.name, old.node_id);
                d->lost(old.node_id, d->userdata);
        } else if (!discovery_record_equal(&other->record, &old)) {
                d->found(&other->record, d->userdata);
        }
        discovery_record_clear(&old);
}

static void service_free(struct service *s)
{
        struct service **pp;

        for (pp = &s->d->services; *pp && *pp != s; pp = &(*pp)->next)
                ;
        if (*pp)
                *pp = s->next;
        if (s->resolver)
                avahi_service_resolver_free(s->resolver);
        if (s->reresolve)
                event_free(s->reresolve);
        discovery_record_clear(&s->record);
        free(s->name);
        free(s->domain);
        free(s);
}

void discovery_browsing_drop(struct discovery *d, bool report)
{
        while (d->services) {
                struct service *s = d->services;

                if (report && s->has_record && !node_has_other(d, s, s->record.node_id, NULL))
                        d->lost(s->record.node_id, d->userdata);
                service_free(s);
        }
}

static void service_take_record(struct service *s, struct discovery_record *rec)
{
        struct discovery *d = s->d;
        struct service *other = NULL;

        if (s->has_record && discovery_record_equal(&s->record, rec)) {
                discovery_record_clear(rec);
                return;
        }
        /* The service name now belongs to another node (a restarted host with a new id). */
        if (s->has_record && strcmp(s->record.node_id, rec->node_id) != 0)
                service_forget_record(s);
        discovery_record_clear(&s->record);
        s->record = *rec;
        *rec = (struct discovery_record){ 0 };
        s->has_record = true;
        /* Seen on another interface already with the same record: nothing new for the caller. */
        if (node_has_other(d, s, s->record.node_id, &other) &&
            discovery_record_equal(&other->record, &s->record))
                return;
        log_debug("mDNS: peer %s (%s) port %u via service '%s' on interface %d", s->record.name,
                  s->record.node_id, (unsigned)s->record.port, s->name, (int)s->ifindex);
        d->found(&s->record, d->userdata);
}

/* Our id with another name, or at none of our addresses, is another node running with a copy of
 * our id: it is passed on like any peer, so that its hello tells and both sides report it. */
static bool is_our_own(const struct discovery *d, const struct discovery_record *rec)
{
        if (strcmp(rec->node_id, d->self.node_id) != 0)
                return false;
        if (strcmp(rec->name, d->self.name) != 0)
                return false;
        for (char **a = rec->addresses; a && *a; a++)
                if (strv_contains(d->self.addresses, *a))
                        return true;
        return !rec->addresses || !rec->addresses[0];
}

static void service_on_resolved(AvahiServiceResolver *r, AvahiIfIndex ifindex, AvahiProtocol protocol,
                                AvahiResolverEvent event, const char *name, const char *type,
                                const char *domain, const char *host, const AvahiAddress *a, uint16_t port,
                                AvahiStringList *txt, AvahiLookupResultFlags flags, void *userdata)
{
        struct service *s = userdata;
        struct discovery *d = s->d;
        _cleanup_(discovery_record_clear) struct discovery_record rec = { 0 };
        _cleanup_strv_ char **items = NULL;
        int k;

        if (event == AVAHI_RESOLVER_FAILURE) {
                /* Its answers were lost or it went quiet; ask again later unless it is removed. */
                log_debug("mDNS: cannot resolve service '%s' on interface %d: %s", s->name, (int)ifindex,
                          avahi_strerror(avahi_client_errno(d->client)));
                avahi_service_resolver_free(s->resolver);
                s->resolver = NULL;
                if (!s->has_record) {
                        const struct timeval tv = { RERESOLVE_USEC / SEC, 0 };
                        evtimer_add(s->reresolve, &tv);
                }
                return;
        }
        /* The resolver stays and reports again when the peer changes its TXT record. */
        k = strlst_to_strv(txt, &items);
        if (k >= 0)
                k = discovery_txt_decode(items, &rec);
        if (k < 0) {
                log_debug("mDNS: ignoring service '%s' on interface %d: bad TXT record (%s)", s->name,
                          (int)ifindex, strerror(-k));
                return;
        }
        if (is_our_own(d, &rec)) {
                log_debug("mDNS: service '%s' on interface %d is our own", s->name, (int)ifindex);
                return;
        }
        service_take_record(s, &rec);
}

static int service_resolve(struct service *s)
{
        s->resolver = avahi_service_resolver_new(s->d->client, s->ifindex, s->protocol, s->name,
                                                 DISCOVERY_SERVICE_TYPE, s->domain, AVAHI_PROTO_INET, 0,
                                                 service_on_resolved, s);
        if (!s->resolver) {
                log_debug("mDNS: cannot resolve service '%s': %s", s->name,
                          avahi_strerror(avahi_client_errno(s->d->client)));
                return -EIO;
        }
        return 0;
}

static void service_on_reresolve(evutil_socket_t fd, short what, void *userdata)
{
        struct service *s = userdata;

        if (!s->resolver && service_resolve(s) < 0) {
                const struct timeval tv = { RERESOLVE_USEC / SEC, 0 };
                evtimer_add(s->reresolve, &tv);
        }
}

static struct service *service_find(struct discovery *d, AvahiIfIndex ifindex, AvahiProtocol protocol,
                                    const char *name, const char *domain)
{
        for (struct service *s = d->services; s; s = s->next)
                if (s->ifindex == ifindex && s->protocol == protocol && strcmp(s->name, name) == 0 &&
                    strcmp(s->domain, domain) == 0)
                        return s;
        return NULL;
}

void discovery_browsing_add(struct discovery *d, AvahiIfIndex ifindex, AvahiProtocol protocol,
                            const char *name, const char *domain)
{
        struct service *s;

        if (service_find(d, ifindex, protocol, name, domain))
                return;
        s = calloc(1, sizeof(*s));
        if (!s) {
                log_warning("mDNS: out of memory; service '%s' ignored", name);
                return;
        }
        s->d = d;
        s->ifindex = ifindex;
        s->protocol = protocol;
        s->name = strdup(name);
        s->domain = strdup(domain);
        s->reresolve = evtimer_new(d->base, service_on_reresolve, s);
        s->next = d->services;
        d->services = s;
        if (!s->name || !s->domain || !s->reresolve) {
                log_warning("mDNS: out of memory; service '%s' ignored", name);
                service_free(s);
                return;
        }
        (void)service_resolve(s);
}

void discovery_browsing_remove(struct discovery *d, AvahiIfIndex ifindex, AvahiProtocol protocol,
                               const char *name, const char *domain)
{
        struct service *s = service_find(d, ifindex, protocol, name, domain);

        if (s) {
                service_forget_record(s);
                service_free(s);
        }
}
