/* Summaries from peers: refused when not to be believed, kept when newer, passed on. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cluster_confirm.h"
#include "cluster_internal.h"
#include "cluster_offer.h"
#include "common/json_raw.h"
#include "daemon/base/heap_trim.h"
#include "daemon/base/log.h"
#include "summary.h"
#include "summary_splice.h"

#define REFUSAL_LOG_INTERVAL_USEC (60 * 1000000LL)

/* Whether a refusal from peer_id is to be logged now: once a minute per peer, the slot of the
 * peer logged longest ago reused for a new one. */
static bool refusal_is_logged(struct cluster *c, const char *peer_id, int64_t now)
{
        struct cluster_refusal_log *slot = &c->refusals[0];

        for (size_t i = 0; i < CLUSTER_REFUSAL_LOG_SLOTS; i++) {
                struct cluster_refusal_log *l = &c->refusals[i];

                if (strcmp(l->peer_id, peer_id) == 0) {
                        slot = l;
                        break;
                }
                if (l->logged_usec < slot->logged_usec)
                        slot = l;
        }
        if (strcmp(slot->peer_id, peer_id) == 0 && slot->logged_usec &&
            now - slot->logged_usec < REFUSAL_LOG_INTERVAL_USEC)
                return false;
        snprintf(slot->peer_id, sizeof(slot->peer_id), "%s", peer_id);
        slot->logged_usec = now;
        return true;
}

int cluster_refuse(struct cluster *c, const char *peer_id, int error, const char *why)
{
        char name[64];

        c->n_refused++;
        if (!refusal_is_logged(c, peer_id, cluster_now_usec()))
                return error;
        if (c->transport.hello_name(c->transport.userdata, peer_id, name, sizeof(name)) < 0)
                snprintf(name, sizeof(name), "?");
        log_warning("cluster: refused a summary from peer %s (%s): %s; further refusals from it are "
                    "not logged for 60 s",
                    name, peer_id, why);
        return error;
}

/* Whether s is newer than what n holds: the same instance with a higher sequence, or another
 * instance (the origin restarted) made more recently. */
static bool is_newer(const struct cluster_node *n, const struct summary *s, int64_t made)
{
        if (strcmp(n->instance, s->instance) == 0)
                return s->seq > n->seq;
        return made > n->made_usec;
}

/* Whether n's summary (or alive) is to go on to the up peer to: not back where it came from,
 * not to its origin, not to a peer up with its origin, which hears it first hand, and only from
 * one of the nodes that can pass it on (cluster_is_designated_relay). Where to's own summary is
 * not known yet, it goes: a copy too many costs less than one missing. */
static bool is_relayed_to(struct cluster *c, const char *from, const struct cluster_node *n, const char *to)
{
        return strcmp(to, from) != 0 && strcmp(to, n->node_id) != 0 &&
               !cluster_node_is_up_with(c, to, n->node_id) && cluster_is_designated_relay(c, n->node_id, to);
}

/* Offered, not sent: each asks for it once however many peers offer it (cluster_offer.h). */
static void relay(struct cluster *c, const char *from, struct cluster_node *n)
{
        for (size_t i = 0; i < c->n_up; i++)
                if (is_relayed_to(c, from, n, c->up[i]))
                        (void)cluster_offer_node(c, c->up[i], n);
}

static void relay_alive(struct cluster *c, const char *from, struct cluster_node *n)
{
        for (size_t i = 0; i < c->n_up; i++)
                if (is_relayed_to(c, from, n, c->up[i]))
                        (void)cluster_send_alive(c, c->up[i], n);
}

/* What a valid summary or alive claims of its origin, believed or not: < 0 refused, 0 not taken
 * (a copy of what an up peer says itself), 1 taken. */
static int check_origin(struct cluster *c, const char *peer_id, const struct summary *s)
{
        char why[256], hello[64];

        if (strcmp(s->origin, c->self_id) == 0)
                return cluster_refuse(c, peer_id, -EPERM, "it claims this node's id");
        if (strcmp(s->origin, peer_id) == 0) {
                if (c->transport.hello_name(c->transport.userdata, peer_id, hello, sizeof(hello)) < 0)
                        return cluster_refuse(c, peer_id, -EPERM, "its sender's hello is not known");
                if (strcmp(hello, s->name) != 0) {
                        snprintf(why, sizeof(why), "it names its sender \"%s\", whose hello said \"%s\"",
                                 s->name, hello);
                        return cluster_refuse(c, peer_id, -EPERM, why);
                }
        }
        /* A peer up now speaks for itself: copies of its summary through others are not needed,
         * and a forged one (a high sequence) could otherwise hide what it says. */
        if (strcmp(s->origin, peer_id) != 0 && cluster_is_peer_up(c, s->origin))
                return 0;
        return 1;
}

/* msg read as a summary (or an alive) and its origin judged, its signature not checked yet (see
 * believe): as check_origin; when 1, s holds the body (summary_clear). */
static int read_claim(struct cluster *c, const char *peer_id, json_object *msg, bool is_alive,
                      struct summary *s)
{
        char why[256];
        int r = summary_read(msg, is_alive, s, why, sizeof(why));

        if (r < 0)
                return cluster_refuse(c, peer_id, r, why);
        r = check_origin(c, peer_id, s);
        if (r <= 0)
                summary_clear(s);
        return r;
}

/* The costly checks, the signature among them, of a claim that would change what is held or be
 * passed on: copies that change nothing are dropped unverified. 0, or refused. */
static int believe(struct cluster *c, const char *peer_id, const struct summary *s)
{
        char why[256];
        int r = summary_verify(s, why, sizeof(why));

        return r < 0 ? cluster_refuse(c, peer_id, r, why) : 0;
}

/* The digests n's held summary names (name -> hex), read back from its envelope's body: a new
 * reference; NULL when n holds none. Read once for each summary received that is newer: holding
 * them as well came to a KiB a node at 64 nodes. */
static json_object *held_digests(const struct cluster_node *n)
{
        json_object *envelope, *body_text = NULL, *body, *digests = NULL;

        if (!n || !n->envelope)
                return NULL;
        /* This node wrote the envelope, from a message it read strictly; the body is as its origin
         * signed it and this node checked it. */
        envelope = json_tokener_parse(n->envelope);
        if (json_object_object_get_ex(envelope, "body", &body_text) &&
            (body = json_tokener_parse(json_object_get_string(body_text)))) {
                if (json_object_object_get_ex(body, "digests", &digests))
                        json_object_get(digests);
                json_object_put(body);
        }
        json_object_put(envelope);
        return digests;
}

/* Whether two bodies name the same sections with the same digests. */
static bool digests_equal(json_object *a, json_object *b)
{
        if (!a || !b || json_object_object_length(a) != json_object_object_length(b))
                return false;
        json_object_object_foreach(a, key, value) {
                json_object *other = NULL;

                if (!json_object_object_get_ex(b, key, &other) ||
                    strcmp(json_object_get_string(value), json_object_get_string(other)) != 0)
                        return false;
        }
        return true;
}

/* The section name that n holds under digest (held: n's digests, held_digests), a new reference;
 * NULL when it holds none. */
static json_object *held_section(const struct cluster_node *n, json_object *held, const char *name,
                                 const char *digest)
{
        json_object *held_digest = NULL, *section = NULL;

        if (!n || !json_object_object_get_ex(held, name, &held_digest) ||
            strcmp(json_object_get_string(held_digest), digest) != 0 ||
            !json_object_object_get_ex(n->sections, name, &section))
                return NULL;
        return json_object_get(section);
}

/* The text the splice carried for section name makes of the one n holds, held (json_raw.h), a new
 * reference. -ENOENT when n holds no text under the digest it changes; -EBADMSG when the text
 * it makes is not the one digest (the signed body's) names. */
static int spliced(const struct cluster_node *n, json_object *held, const char *name, json_object *splice,
                   const char *digest, json_object **ret)
{
        char made_digest[SUMMARY_DIGEST_LEN + 1];
        struct summary_splice sp;
        json_object *base;
        const char *base_text;
        size_t base_len = 0, len = 0;
        char *text;

        if (summary_splice_read(splice, &sp) < 0)
                return -EBADMSG;
        base = held_section(n, held, name, sp.from);
        if (!base)
                return -ENOENT;
        base_text = json_raw_text_length(base, &base_len);
        text = base_text ? summary_splice_apply(base_text, base_len, &sp, &len) : NULL;
        json_object_put(base);
        if (!text)
                return -EBADMSG;
        summary_digest(text, len, made_digest);
        if (strcmp(made_digest, digest) != 0) {
                free(text);
                return -EBADMSG;
        }
        *ret = json_raw_take(text);
        return *ret ? 0 : -ENOMEM;
}

/* The sections s names, each held as its text (json_raw.h): the text it carries or, where it
 * carries none, the one n holds under the same digest. -ENOENT when one is neither: s is the
 * change from a summary this node missed. -EMSGSIZE when they come to more than a summary may
 * (SUMMARY_MAX_BYTES, the body's text counted): each change is under it, and a node that sent
 * one large section a change would otherwise have every receiver hold 32 of them. */
static int sections_of(const struct cluster_node *n, json_object *held_digests, const struct summary *s,
                       json_object **ret)
{
        json_object *sections = json_object_new_object();
        size_t total = s->body_len;

        if (!sections)
                return -ENOMEM;
        json_object_object_foreach(s->digests, name, digest) {
                size_t len = 0;
                const char *text = summary_carried_text(s, name, &len);
                json_object *splice = summary_carried_splice(s, name), *held = NULL;
                int r = 0;

                if (text)
                        held = json_raw_new(text);
                else if (splice)
                        r = spliced(n, held_digests, name, splice, json_object_get_string(digest), &held);
                else
                        held = held_section(n, held_digests, name, json_object_get_string(digest));
                if (!held) {
                        json_object_put(sections);
                        return r < 0 ? r : text ? -ENOMEM : -ENOENT;
                }
                /* Held until the origin changes it, read when a client asks or a peer needs it:
                 * at 64 nodes the results sections alone, a row for each pair, came to most of
                 * a node's heap. Without memory to pack it stays as it came. */
                (void)json_raw_pack(held);
                if (!text)
                        (void)json_raw_length(held, &len);
                total += len + strlen(name);
                json_object_object_add(sections, name, held);
                if (total > SUMMARY_MAX_BYTES) {
                        json_object_put(sections);
                        return -EMSGSIZE;
                }
        }
        *ret = sections;
        return 0;
}

/* The message as held: what its origin signed and the fields beside it, without the texts it
 * carried, which are held once, as the sections, and without its age, which a relay writes anew.
 * Its JSON text; NULL without memory. */
static char *envelope_of(json_object *msg)
{
        json_object *held = json_object_new_object();
        const char *written;
        char *text = NULL;

        if (!held)
                return NULL;
        json_object_object_foreach(msg, key, value) {
                if (strcmp(key, "sections") != 0 && strcmp(key, "age_ms") != 0 &&
                    json_object_object_add(held, key, json_object_get(value)) < 0) {
                        json_object_put(value);
                        json_object_put(held);
                        return NULL;
                }
        }
        written = json_object_to_json_string_ext(held, JSON_C_TO_STRING_PLAIN);
        if (written)
                text = strdup(written);
        json_object_put(held);
        return text;
}

/* keep, with held the digests of what n holds of the origin (held_digests). */
static int keep_with(struct cluster *c, const char *peer_id, json_object *msg, struct summary *s,
                     int64_t made, struct cluster_node *n, json_object *held)
{
        int64_t now = cluster_now_usec();
        json_object *sections;
        char *envelope, why[256];
        bool is_changed;
        int r;

        r = sections_of(n, held, s, &sections);
        if (r == -ENOENT) {
                /* Ask for the whole: the sender holds it. */
                r = cluster_want_from(c, peer_id, s->origin);
                return r < 0 ? r : 0;
        }
        if (r == -EMSGSIZE) {
                snprintf(why, sizeof(why), "its sections with those held come to more than %d bytes",
                         SUMMARY_MAX_BYTES);
                return cluster_refuse(c, peer_id, r, why);
        }
        if (r == -EBADMSG)
                return cluster_refuse(
                        c, peer_id, r,
                        "a change of a section it carries does not make the text its body's digest "
                        "names");
        if (r < 0)
                return r;
        if (!n && cluster_make_room(c, s->origin, peer_id, why, sizeof(why)) < 0) {
                json_object_put(sections);
                return cluster_refuse(c, peer_id, -ENOSPC, why);
        }
        envelope = envelope_of(msg);
        if (!envelope) {
                json_object_put(sections);
                return -ENOMEM;
        }
        if (!n) {
                n = cluster_table_add(&c->nodes, s->origin);
                if (!n) {
                        json_object_put(sections);
                        free(envelope);
                        return -ENOMEM;
                }
                log_info("cluster: heard of node %s (%s) through peer %s", s->name, s->origin, peer_id);
        }
        is_changed = !n->envelope || !digests_equal(held, s->digests) || strcmp(n->name, s->name) != 0 ||
                     n->is_stale;
        if (n->envelope) {
                free(n->envelope);
                json_object_put(n->sections);
                free(n->alive);
                n->alive = NULL;
                /* The summary replaced, and the message's tree once the peer channel is done with
                 * it: what a busy cluster frees most often, between texts that stay. */
                heap_trim_soon();
        }
        n->envelope = envelope;
        n->sections = sections;
        cluster_table_summary_replaced(n);
        snprintf(n->name, sizeof(n->name), "%s", s->name);
        snprintf(n->instance, sizeof(n->instance), "%s", s->instance);
        snprintf(n->via, sizeof(n->via), "%s", peer_id);
        n->seq = s->seq;
        n->format = s->format;
        n->uptime_ms = s->uptime_ms;
        n->made_usec = made;
        n->is_stale = cluster_node_is_stale(c, n, now);
        cluster_want_answered(c, n->node_id);
        /* What it says may vouch for nodes held, itself among them. */
        cluster_confirm_all(c);
        if (is_changed)
                cluster_changed(c);
        relay(c, peer_id, n);
        return 0;
}

/* s, newer than what is held of its origin, kept: -ENOSPC, refused, when there is no room. */
static int keep(struct cluster *c, const char *peer_id, json_object *msg, struct summary *s, int64_t made)
{
        struct cluster_node *n = cluster_table_find(&c->nodes, s->origin);
        json_object *held = held_digests(n);
        int r = keep_with(c, peer_id, msg, s, made, n, held);

        json_object_put(held);
        return r;
}

int cluster_receive(struct cluster *c, const char *peer_id, json_object *msg)
{
        int64_t now = cluster_now_usec(), made;
        struct cluster_node *n;
        struct summary s;
        int r;

        r = read_claim(c, peer_id, msg, false, &s);
        if (r <= 0)
                return r;
        made = now - (int64_t)s.age_ms * 1000;
        n = cluster_table_find(&c->nodes, s.origin);
        /* Older than what is kept (nothing to show, nothing to pass on), or not newer. */
        if (s.age_ms * 1000 > c->forget_after_usec || (n && !is_newer(n, &s, made)))
                r = 0;
        else
                r = believe(c, peer_id, &s) < 0 ? -EBADMSG : keep(c, peer_id, msg, &s, made);
        summary_clear(&s);
        return r;
}

int cluster_receive_alive(struct cluster *c, const char *peer_id, json_object *msg)
{
        int64_t now = cluster_now_usec(), made;
        struct cluster_node *n;
        struct summary s;
        bool was_stale;
        char *alive;
        int r;

        r = read_claim(c, peer_id, msg, true, &s);
        if (r <= 0)
                return r;
        n = cluster_table_find(&c->nodes, s.origin);
        if (!n || strcmp(n->instance, s.instance) != 0 || n->seq != s.seq) {
                /* A summary this node missed (it came up after, or a relay skipped it): ask, once
                 * however many peers pass the alive on. */
                r = believe(c, peer_id, &s) < 0 ? -EBADMSG : cluster_want_from(c, peer_id, s.origin);
                summary_clear(&s);
                return r < 0 ? r : 0;
        }
        made = now - (int64_t)s.age_ms * 1000;
        /* age_ms is the relay's word, the uptime its origin's (signed): an alive kept and sent
         * again with a fresh age would keep a node that has gone looking alive. */
        if (made <= n->made_usec || s.uptime_ms <= n->uptime_ms) {
                summary_clear(&s);
                return 0;
        }
        r = believe(c, peer_id, &s);
        summary_clear(&s);
        if (r < 0)
                return r;
        n->made_usec = made;
        n->uptime_ms = s.uptime_ms;
        /* Passed on as it came: its origin signed it. Without memory, none is passed on. */
        alive = envelope_of(msg);
        free(n->alive);
        n->alive = alive;
        was_stale = n->is_stale;
        n->is_stale = cluster_node_is_stale(c, n, now);
        if (was_stale != n->is_stale)
                cluster_changed(c);
        else
                cluster_deadline_moved(c);
        relay_alive(c, peer_id, n);
        return 0;
}

int cluster_receive_want(struct cluster *c, const char *peer_id, json_object *msg)
{
        json_object *origin = NULL;
        struct cluster_node *n;

        if (!json_object_object_get_ex(msg, "origin", &origin) ||
            !json_object_is_type(origin, json_type_string) || !summary_is_id(json_object_get_string(origin)))
                return cluster_refuse(c, peer_id, -EBADMSG,
                                      "a want without the node id of 32 hex digits it wants");
        n = cluster_table_find(&c->nodes, json_object_get_string(origin));
        return n ? cluster_send_node(c, peer_id, n) : 0;
}

int cluster_receive_message(struct cluster *c, const char *peer_id, json_object *msg)
{
        json_object *type = NULL;
        const char *t;

        if (!json_object_object_get_ex(msg, "type", &type) || !json_object_is_type(type, json_type_string))
                return -EBADMSG;
        t = json_object_get_string(type);
        if (strcmp(t, SUMMARY_ALIVE_TYPE) == 0)
                return cluster_receive_alive(c, peer_id, msg);
        if (strcmp(t, SUMMARY_WANT_TYPE) == 0)
                return cluster_receive_want(c, peer_id, msg);
        if (strcmp(t, CLUSTER_OFFER_TYPE) == 0) {
                char why[160];
                int r = cluster_receive_offer(c, peer_id, msg);

                if (r >= 0)
                        return 0;
                snprintf(why, sizeof(why),
                         "an offer that is not \"nodes\": at most %d entries [node id, instance, "
                         "sequence from 1, age in ms]",
                         CLUSTER_MAX_NODES);
                return cluster_refuse(c, peer_id, r, why);
        }
        return cluster_receive(c, peer_id, msg);
}
