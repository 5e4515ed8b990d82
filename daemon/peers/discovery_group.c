#include "discovery_group.h"

#include <avahi-common/alternative.h>
#include <avahi-common/error.h>
#include <avahi-common/malloc.h>
#include <avahi-common/strlst.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/strutil.h"
#include "daemon/base/log.h"

/* Bounds the renaming loop when every alternative name is taken too. */
#define MAX_RENAMES 32

static AvahiStringList *txt_to_strlst(const struct discovery_record *r)
{
        _cleanup_strv_ char **txt = NULL;
        AvahiStringList *l;

        if (discovery_txt_encode(r, &txt) < 0)
                return NULL;
        /* new_from_array prepends; reversed, the record reads v, id, name, addrs, port on the wire. */
        l = avahi_string_list_new_from_array((const char **)txt, -1);
        return avahi_string_list_reverse(l);
}

static int set_service_name(struct discovery *d, const char *name)
{
        char *copy = strdup(name);

        if (!copy)
                return -ENOMEM;
        free(d->service_name);
        d->service_name = copy;
        return 0;
}

static int use_alternative_name(struct discovery *d)
{
        char *alt = avahi_alternative_service_name(d->service_name);
        int r;

        if (!alt)
                return -ENOMEM;
        log_notice("mDNS: service name '%s' is taken; publishing as '%s'", d->service_name, alt);
        r = set_service_name(d, alt);
        avahi_free(alt);
        return r;
}

/* Adds our service to the (empty) entry group and commits it; logs what fails. */
static void group_add(struct discovery *d)
{
        AvahiStringList *txt = txt_to_strlst(&d->self);
        int r = AVAHI_ERR_NO_MEMORY;

        for (int i = 0; txt && i < MAX_RENAMES; i++) {
                r = avahi_entry_group_add_service_strlst(d->group, AVAHI_IF_UNSPEC, AVAHI_PROTO_INET, 0,
                                                         d->service_name, DISCOVERY_SERVICE_TYPE, NULL, NULL,
                                                         d->self.port, txt);
                if (r != AVAHI_ERR_COLLISION || use_alternative_name(d) < 0)
                        break;
        }
        avahi_string_list_free(txt);
        if (r >= 0)
                r = avahi_entry_group_commit(d->group);
        if (r < 0) {
                log_warning("mDNS: cannot publish %s '%s': %s", DISCOVERY_SERVICE_TYPE, d->service_name,
                            avahi_strerror(r));
                return;
        }
        discovery_record_clear(&d->published);
        if (discovery_record_copy(&d->published, &d->self) < 0)
                return; /* not marked published: the next publish starts over */
        d->is_published = true;
}

static void group_on_state(AvahiEntryGroup *g, AvahiEntryGroupState state, void *userdata)
{
        struct discovery *d = userdata;

        switch (state) {
        case AVAHI_ENTRY_GROUP_ESTABLISHED:
                log_info("mDNS: published %s '%s' port %u", DISCOVERY_SERVICE_TYPE, d->service_name,
                         (unsigned)d->self.port);
                break;
        case AVAHI_ENTRY_GROUP_COLLISION:
                /* Another host has the name: Avahi withdrew ours; take the next one and add again. */
                d->is_published = false;
                if (use_alternative_name(d) < 0)
                        break;
                group_add(d);
                break;
        case AVAHI_ENTRY_GROUP_FAILURE:
                d->is_published = false;
                log_warning("mDNS: publishing %s '%s' failed: %s", DISCOVERY_SERVICE_TYPE, d->service_name,
                            avahi_strerror(avahi_client_errno(avahi_entry_group_get_client(g))));
                break;
        case AVAHI_ENTRY_GROUP_UNCOMMITED:
        case AVAHI_ENTRY_GROUP_REGISTERING:
                break;
        }
}

void discovery_group_publish(struct discovery *d)
{
        int r;

        if (!d->has_self || !discovery_client_is_running(d))
                return;

        /* Same name and port: only the TXT record changes, in place, as Avahi asks. */
        if (d->is_published && strcmp(d->published.name, d->self.name) == 0 &&
            d->published.port == d->self.port) {
                AvahiStringList *txt;

                if (discovery_record_equal(&d->published, &d->self))
                        return;
                txt = txt_to_strlst(&d->self);
                r = txt ? avahi_entry_group_update_service_txt_strlst(d->group, AVAHI_IF_UNSPEC,
                                                                      AVAHI_PROTO_INET, 0, d->service_name,
                                                                      DISCOVERY_SERVICE_TYPE, NULL, txt)
                        : AVAHI_ERR_NO_MEMORY;
                avahi_string_list_free(txt);
                if (r >= 0) {
                        discovery_record_clear(&d->published);
                        if (discovery_record_copy(&d->published, &d->self) < 0)
                                d->is_published = false;
                        return;
                }
                log_debug("mDNS: cannot update the TXT record in place (%s); publishing anew",
                          avahi_strerror(r));
        }

        if (!d->group) {
                d->group = avahi_entry_group_new(d->client, group_on_state, d);
                if (!d->group) {
                        log_warning("mDNS: cannot create an entry group: %s",
                                    avahi_strerror(avahi_client_errno(d->client)));
                        return;
                }
        } else {
                avahi_entry_group_reset(d->group);
        }
        d->is_published = false;
        /* Every full publish starts from the node name: an old collision may be gone. */
        if (set_service_name(d, d->self.name) < 0) {
                log_warning("mDNS: out of memory; not published");
                return;
        }
        group_add(d);
}
