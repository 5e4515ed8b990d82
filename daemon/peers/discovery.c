#include "discovery.h"

#include <arpa/inet.h>
#include <avahi-client/client.h>
#include <avahi-client/lookup.h>
#include <avahi-common/error.h>
#include <avahi-common/malloc.h>
#include <avahi-common/strlst.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "avahi_poll.h"
#include "common/strutil.h"
#include "daemon/base/log.h"
#include "discovery_group.h"

/* One TXT string is a length byte and its text (RFC 6763 6.1). */
#define SEC 1000000ULL
/* Reconnecting after Avahi or the bus went away: soon at first, then at most twice a minute. */
#define RESTART_FIRST_USEC (1 * SEC)
#define RESTART_MAX_USEC   (30 * SEC)
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

/* ---- browsing ---- */

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

/* report: lost() for every peer that goes with them (not when the caller frees us). */
static void services_drop(struct discovery *d, bool report)
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
        if (strcmp(rec.node_id, d->self.node_id) == 0) {
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

static void service_add(struct discovery *d, AvahiIfIndex ifindex, AvahiProtocol protocol, const char *name,
                        const char *domain)
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

static void client_fail(struct discovery *d);

static void browser_on_event(AvahiServiceBrowser *b, AvahiIfIndex ifindex, AvahiProtocol protocol,
                             AvahiBrowserEvent event, const char *name, const char *type, const char *domain,
                             AvahiLookupResultFlags flags, void *userdata)
{
        struct discovery *d = userdata;
        struct service *s;

        switch (event) {
        case AVAHI_BROWSER_NEW:
                /* Our own service too (AVAHI_LOOKUP_RESULT_OUR_OWN) is resolved, then dropped by
                 * node id: a peer with the same service name can hide behind that flag while our
                 * name is tentative, and Avahi reports the name only once. */
                service_add(d, ifindex, protocol, name, domain);
                break;
        case AVAHI_BROWSER_REMOVE:
                s = service_find(d, ifindex, protocol, name, domain);
                if (s) {
                        service_forget_record(s);
                        service_free(s);
                }
                break;
        case AVAHI_BROWSER_FAILURE:
                log_warning("mDNS: browsing %s failed: %s; reconnecting to avahi-daemon",
                            DISCOVERY_SERVICE_TYPE, avahi_strerror(avahi_client_errno(d->client)));
                client_fail(d);
                break;
        case AVAHI_BROWSER_ALL_FOR_NOW:
        case AVAHI_BROWSER_CACHE_EXHAUSTED:
                break;
        }
}

/* ---- the client ---- */

static void say_unavailable(struct discovery *d)
{
        if (d->said_unavailable)
                return;
        d->said_unavailable = true;
        d->said_running = false;
        log_notice("avahi-daemon is not running: peers come only from [peers] static until it starts");
}

static void schedule_restart(struct discovery *d)
{
        struct timeval tv = { d->restart_usec / SEC, d->restart_usec % SEC };

        evtimer_add(d->restart, &tv);
        d->restart_usec = d->restart_usec * 2 > RESTART_MAX_USEC ? RESTART_MAX_USEC : d->restart_usec * 2;
}

/* The client is no use any more: its peers are lost, and a new client is made from the loop,
 * never from inside the old one's callbacks. */
static void client_fail(struct discovery *d)
{
        say_unavailable(d);
        services_drop(d, true);
        d->is_published = false;
        schedule_restart(d);
}

/* Publishes our record and browses for the others. Browsing waits for our own record: its node
 * id is what keeps us out of what found() reports. With no browser there are no services, so
 * nothing here calls found() or lost(). */
static void client_activate(struct discovery *d)
{
        if (!d->has_self || !discovery_client_is_running(d))
                return;
        discovery_group_publish(d);
        if (d->browser)
                return;
        d->browser = avahi_service_browser_new(d->client, AVAHI_IF_UNSPEC, AVAHI_PROTO_INET,
                                               DISCOVERY_SERVICE_TYPE, NULL, 0, browser_on_event, d);
        if (!d->browser) {
                log_warning("mDNS: cannot browse %s: %s; trying again", DISCOVERY_SERVICE_TYPE,
                            avahi_strerror(avahi_client_errno(d->client)));
                client_fail(d);
        }
}

static void client_on_state(AvahiClient *c, AvahiClientState state, void *userdata)
{
        struct discovery *d = userdata;

        /* Called from inside avahi_client_new() already, before it returned c to us. */
        d->client = c;

        switch (state) {
        case AVAHI_CLIENT_S_RUNNING:
                if (!d->said_running)
                        log_info("avahi-daemon is running: publishing and browsing %s",
                                 DISCOVERY_SERVICE_TYPE);
                d->said_running = true;
                d->said_unavailable = false;
                d->restart_usec = RESTART_FIRST_USEC;
                client_activate(d);
                break;
        case AVAHI_CLIENT_S_REGISTERING:
        case AVAHI_CLIENT_S_COLLISION:
                /* Avahi is (re)establishing its host name: our records go and come back on RUNNING. */
                if (d->group)
                        avahi_entry_group_reset(d->group);
                d->is_published = false;
                break;
        case AVAHI_CLIENT_CONNECTING:
                say_unavailable(d);
                break;
        case AVAHI_CLIENT_FAILURE:
                log_debug("avahi client: %s", avahi_strerror(avahi_client_errno(c)));
                client_fail(d);
                break;
        }
}

static void client_stop(struct discovery *d)
{
        services_drop(d, false);
        /* Freeing the client frees its entry group and browser too. */
        if (d->client)
                avahi_client_free(d->client);
        d->client = NULL;
        d->group = NULL;
        d->browser = NULL;
        d->is_published = false;
}

static void client_start(struct discovery *d)
{
        AvahiClient *c;
        int error = 0;

        /* NO_FAIL: without avahi-daemon the client waits in CONNECTING for it to appear. Without a
         * system bus at all there is no client, and we try again on a timer. */
        c = avahi_client_new(avahi_poll_get(d->poll), AVAHI_CLIENT_NO_FAIL, client_on_state, d, &error);
        if (!c) {
                d->client = NULL;
                log_debug("avahi client: %s", avahi_strerror(error));
                say_unavailable(d);
                schedule_restart(d);
                return;
        }
        d->client = c;
}

static void on_restart(evutil_socket_t fd, short what, void *userdata)
{
        struct discovery *d = userdata;

        client_stop(d);
        client_start(d);
}

int discovery_new(struct event_base *base, discovery_found_fn found, discovery_lost_fn lost, void *userdata,
                  struct discovery **ret)
{
        struct discovery *d = calloc(1, sizeof(*d));
        int r;

        if (!d)
                return -ENOMEM;
        d->base = base;
        d->found = found;
        d->lost = lost;
        d->userdata = userdata;
        d->restart_usec = RESTART_FIRST_USEC;
        r = avahi_poll_new(base, &d->poll);
        if (r < 0) {
                free(d);
                return r;
        }
        d->restart = evtimer_new(base, on_restart, d);
        if (!d->restart) {
                discovery_free(d);
                return -ENOMEM;
        }
        client_start(d);
        *ret = d;
        return 0;
}

void discovery_free(struct discovery *d)
{
        if (!d)
                return;
        client_stop(d);
        if (d->restart)
                event_free(d->restart);
        if (d->poll)
                avahi_poll_free(d->poll);
        discovery_record_clear(&d->self);
        discovery_record_clear(&d->published);
        free(d->service_name);
        free(d);
}

int discovery_publish(struct discovery *d, const struct discovery_record *self)
{
        _cleanup_strv_ char **txt = NULL;
        struct discovery_record copy;
        int r;

        r = discovery_txt_encode(self, &txt);
        if (r < 0)
                return r;
        r = discovery_record_copy(&copy, self);
        if (r < 0)
                return r;
        discovery_record_clear(&d->self);
        d->self = copy;
        d->has_self = true;
        /* Without Avahi yet, this happens when it reaches RUNNING. */
        client_activate(d);
        return 0;
}

bool discovery_is_available(const struct discovery *d)
{
        return discovery_client_is_running(d);
}
