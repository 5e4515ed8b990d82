/* What this node sends: its own summary (to every up peer through the fan-out), a held node's
 * summary or alive to one peer, and the alives of a refresh with nothing new. */
#include <errno.h>
#include <string.h>

#include "cluster_internal.h"
#include "common/json_raw.h"
#include "common/macro.h"
#include "daemon/base/heap_trim.h"
#include "daemon/base/log.h"
#include "summary.h"

/* This node's summary as sent now, every section's text with it, or NULL when it is over the
 * limit (said once while it is); its digests into *digests (a reference the caller puts). */
static json_object *own_message(struct cluster *c, int64_t now, json_object **digests)
{
        struct cluster_node *self = cluster_self(c);
        json_object *msg = NULL;
        size_t len;

        *digests = c->node_key ? summary_digests(self->sections) : NULL;
        if (*digests)
                msg = summary_new(c->node_key, c->self_id, self->name, c->instance, c->seq,
                                  (uint64_t)(now - c->started_usec) / 1000, self->sections, *digests);
        if (!msg) {
                json_object_put(TAKE_PTR(*digests));
                return NULL;
        }
        len = strlen(json_object_to_json_string_ext(msg, JSON_C_TO_STRING_PLAIN));

        if (len <= SUMMARY_MAX_BYTES) {
                c->is_own_oversized = false;
                return msg;
        }
        if (!c->is_own_oversized)
                log_warning("cluster: this node's summary is %zu bytes, over the limit of %d bytes; "
                            "peers keep the previous one",
                            len, SUMMARY_MAX_BYTES);
        c->is_own_oversized = true;
        json_object_put(msg);
        json_object_put(TAKE_PTR(*digests));
        return NULL;
}

/* A new object holding held's members: what is sent is written on it, and json-c keeps the text it
 * writes on the object written, which on a held summary would stay as long as the summary. */
static json_object *members_shared(json_object *held)
{
        json_object *msg = json_object_new_object();

        if (!msg)
                return NULL;
        json_object_object_foreach(held, key, value) {
                if (json_object_object_add(msg, key, json_object_get(value)) < 0) {
                        json_object_put(value);
                        json_object_put(msg);
                        return NULL;
                }
        }
        return msg;
}

/* held (a held envelope or alive's text) as it came, with its age now: a relay changes nothing of
 * what its origin signed. */
static json_object *relayed(const char *held, const struct cluster_node *n, int64_t now)
{
        /* This node wrote the text, from a message it read strictly. */
        json_object *msg = json_tokener_parse(held), *age;

        if (!msg)
                return NULL;
        age = json_object_new_int64((int64_t)(cluster_node_age(n, now) / 1000));
        if (!age || json_object_object_add(msg, "age_ms", age) < 0) {
                json_object_put(age);
                json_object_put(msg);
                return NULL;
        }
        return msg;
}

/* n's summary with the text of every section held, whatever the message it came in carried: the
 * peer it goes to may hold none of them. */
static json_object *relayed_whole(const struct cluster_node *n, int64_t now)
{
        json_object *msg = relayed(n->envelope, n, now), *carried = json_object_new_object();

        if (!msg || !carried) {
                json_object_put(msg);
                json_object_put(carried);
                return NULL;
        }
        json_object_object_foreach(n->sections, name, value) {
                size_t len = 0;
                const char *text = json_raw_text_length(value, &len);
                json_object *string = text ? json_object_new_string_len(text, (int)len) : NULL;

                if (text && !string) {
                        json_object_put(msg);
                        json_object_put(carried);
                        return NULL;
                }
                if (string)
                        json_object_object_add(carried, name, string);
        }
        json_object_object_add(msg, "sections", carried);
        return msg;
}

/* This node's summary as the up peers hold it: the last one sent to them, every text with it.
 * Before the first, one is made with the next sequence, and they hold that from then on. A peer
 * that comes up and a want get it, not the sections as they are now: under a sequence of its
 * own those would make every other peer's next alive name a summary it does not hold, and each
 * would ask for the whole. What changed since goes to all with the next send. */
static json_object *own_held(struct cluster *c, int64_t now)
{
        json_object *digests, *full;

        if (c->last_full)
                return c->last_full;
        c->seq++;
        full = own_message(c, now, &digests);
        if (!full) {
                c->seq--;
                return NULL;
        }
        c->last_full = full;
        c->last_full_usec = now;
        json_object_put(c->sent_digests);
        c->sent_digests = digests;
        return full;
}

int cluster_send_node(struct cluster *c, const char *peer_id, struct cluster_node *n)
{
        int64_t now = cluster_now_usec();
        json_object *msg, *held;

        if (n->envelope) {
                msg = relayed_whole(n, now);
                if (!msg)
                        return -ENOMEM;
        } else {
                held = own_held(c, now);
                if (!held)
                        return -EMSGSIZE;
                msg = members_shared(held);
                if (!msg)
                        return -ENOMEM;
                json_object_object_add(msg, "age_ms",
                                       json_object_new_int64((now - c->last_full_usec) / 1000));
        }
        return c->transport.send(c->transport.userdata, peer_id, msg);
}

/* This node's alive now, signed; NULL without a key or memory. */
static json_object *own_alive(struct cluster *c, int64_t now)
{
        if (!c->node_key)
                return NULL;
        return summary_new_alive(c->node_key, c->self_id, cluster_self(c)->name, c->instance, c->seq,
                                 (uint64_t)(now - c->started_usec) / 1000);
}

int cluster_send_alive(struct cluster *c, const char *peer_id, struct cluster_node *n)
{
        int64_t now = cluster_now_usec();
        json_object *msg;

        if (n->envelope) {
                /* Only an alive its origin signed goes on; without one, nothing. */
                if (!n->alive)
                        return 0;
                msg = relayed(n->alive, n, now);
        } else {
                msg = own_alive(c, now);
        }
        if (!msg)
                return -ENOMEM;
        return c->transport.send(c->transport.userdata, peer_id, msg);
}

void cluster_send_own(struct cluster *c)
{
        json_object *full, *msg, *digests, *base;

        if (c->n_up == 0)
                return;
        c->seq++;
        if (c->is_dirty && c->is_dirty_lazily) {
                if (c->is_lazy_pending)
                        c->lazy_sent_usec = cluster_now_usec();
                if (c->is_paced_pending)
                        c->paced_sent_usec = cluster_now_usec();
        }
        c->is_dirty = false;
        c->is_dirty_lazily = false;
        c->is_lazy_pending = false;
        c->is_paced_pending = false;
        /* One message for every peer: at 32 nodes a summary built and written for each peer was
         * 31 trees and texts of up to SUMMARY_MAX_BYTES made and freed at every change. It
         * carries what changed since the summary sent before; a peer that missed that one asks
         * for the whole (cluster_receive.c), and a peer that comes up is sent the whole. */
        full = own_message(c, cluster_now_usec(), &digests);
        if (!full)
                return;
        /* A fan-out still going is replaced and its peers not served yet get this one: it then
         * carries what changed since the summary that one changed from. */
        base = fanout_is_going(c->fanout) ? c->fanout_base : c->sent_digests;
        /* The texts of the summary sent before are those of sent_digests: arrays among them are
         * sent as splices from those texts, but not across a fan-out replaced. */
        msg = summary_delta(full, digests, base,
                            base == c->sent_digests && c->last_full
                                    ? json_object_object_get(c->last_full, "sections")
                                    : NULL);
        json_object_put(c->last_full);
        c->last_full = full;
        c->last_full_usec = cluster_now_usec();
        json_object_get(base);
        json_object_put(c->fanout_base);
        c->fanout_base = base;
        json_object_put(c->sent_digests);
        c->sent_digests = digests;
        if (!msg)
                return;
        if (fanout_start(c->fanout, msg, (const char(*)[33])c->up, c->n_up) < 0)
                log_warning("cluster: out of memory sending this node's summary: peers get it with "
                            "the next change or ask for it after the next refresh");
        heap_trim_soon();
}

void cluster_send_alives(struct cluster *c)
{
        /* A peer still to get the summary of the fan-out would hear of a summary it does not
         * hold yet, and ask for it. */
        json_object *msg = NULL;

        for (size_t i = 0; i < c->n_up; i++) {
                if (fanout_is_pending(c->fanout, c->up[i]))
                        continue;
                /* Signed once for every peer: one signature a refresh, not one a peer. */
                if (!msg)
                        msg = own_alive(c, cluster_now_usec());
                if (!msg)
                        return;
                (void)c->transport.send(c->transport.userdata, c->up[i], json_object_get(msg));
        }
        json_object_put(msg);
}
