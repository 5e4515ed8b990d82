/*
 * This node's record in Avahi: the entry group that holds it, renamed after a collision, its TXT
 * record updated in place where Avahi allows that. It works on struct discovery, defined here for
 * the files of discovery (discovery.c runs the client and browses for the peers).
 */
#pragma once

#include <avahi-client/client.h>
#include <avahi-client/lookup.h>
#include <avahi-client/publish.h>
#include <event2/event.h>
#include <stdbool.h>
#include <stdint.h>

#include "avahi_poll.h"
#include "discovery.h"

struct service;

struct discovery {
        struct event_base *base;
        struct avahi_poll *poll;
        AvahiClient *client;
        AvahiEntryGroup *group;
        AvahiServiceBrowser *browser;
        struct event *restart;
        uint64_t restart_usec;

        discovery_found_fn found;
        discovery_lost_fn lost;
        void *userdata;

        struct discovery_record self; /* what discovery_publish() asked for */
        bool has_self;
        struct discovery_record published; /* what the entry group holds */
        bool is_published;
        char *service_name; /* the node name, or Avahi's alternative after a collision */

        struct service *services;
        bool said_unavailable;
        bool said_running;
};

static inline bool discovery_client_is_running(const struct discovery *d)
{
        return d->client && avahi_client_get_state(d->client) == AVAHI_CLIENT_S_RUNNING;
}

/* Publishes d->self, or updates what is published, once the client runs. */
void discovery_group_publish(struct discovery *d);
