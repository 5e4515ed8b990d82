#include "discovery.h"

#include <avahi-client/client.h>
#include <avahi-client/lookup.h>
#include <avahi-common/error.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "avahi_poll.h"
#include "common/strutil.h"
#include "daemon/base/log.h"
#include "discovery_browsing.h"
#include "discovery_internal.h"
#include "discovery_publishing.h"

/* Reconnecting after Avahi or the bus went away: soon at first, then at most twice a minute. */
#define RESTART_FIRST_USEC (1 * SEC)
#define RESTART_MAX_USEC   (30 * SEC)

static void client_fail(struct discovery *d);

static void browser_on_event(AvahiServiceBrowser *b, AvahiIfIndex ifindex, AvahiProtocol protocol,
                             AvahiBrowserEvent event, const char *name, const char *type, const char *domain,
                             AvahiLookupResultFlags flags, void *userdata)
{
        struct discovery *d = userdata;
        switch (event) {
        case AVAHI_BROWSER_NEW:
                /* Our own service too (AVAHI_LOOKUP_RESULT_OUR_OWN) is resolved, then dropped by
                 * node id: a peer with the same service name can hide behind that flag while our
                 * name is tentative, and Avahi reports the name only once. */
                discovery_browsing_add(d, ifindex, protocol, name, domain);
                break;
        case AVAHI_BROWSER_REMOVE:
                discovery_browsing_remove(d, ifindex, protocol, name, domain);
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
        discovery_browsing_drop(d, true);
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
        discovery_publishing_update(d);
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
        discovery_browsing_drop(d, false);
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
