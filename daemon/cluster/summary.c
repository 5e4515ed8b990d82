#include "summary.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <openssl/evp.h>

#include "common/json_get.h"
#include "common/json_raw.h"
#include "common/json_strict.h"
#include "common/node_key.h"
#include "common/text_check.h"
#include "summary_splice.h"

bool summary_is_id(const char *s)
{
        return s && strlen(s) == SUMMARY_ID_LEN && strspn(s, "0123456789abcdef") == SUMMARY_ID_LEN;
}

bool summary_is_section_name(const char *s)
{
        size_t len = strlen(s);

        return len > 0 && len <= SUMMARY_SECTION_NAME_MAX &&
               strspn(s, "abcdefghijklmnopqrstuvwxyz0123456789_-") == len;
}

static int get_string(json_object *msg, const char *key, const char **ret)
{
        json_object *v;

        if (!json_object_object_get_ex(msg, key, &v) || !json_object_is_type(v, json_type_string))
                return -EBADMSG;
        *ret = json_object_get_string(v);
        return 0;
}

/* A whole number in [min, max]; json-c keeps integers beyond int64 out (json_strict refuses them). */
static int get_uint(json_object *msg, const char *key, uint64_t min, uint64_t max, uint64_t *ret)
{
        json_object *v;
        int64_t n;

        if (!json_object_object_get_ex(msg, key, &v) || !json_object_is_type(v, json_type_int))
                return -EBADMSG;
        n = json_object_get_int64(v);
        if (n < 0 || (uint64_t)n < min || (uint64_t)n > max)
                return -EBADMSG;
        *ret = (uint64_t)n;
        return 0;
}

#define REFUSE(...)                                                                                         \
        do {                                                                                                \
                snprintf(why, why_size, __VA_ARGS__);                                                       \
                return -EBADMSG;                                                                            \
        } while (0)

void summary_digest(const char *text, size_t len, char out[static SUMMARY_DIGEST_LEN + 1])
{
        unsigned char md[EVP_MAX_MD_SIZE];
        unsigned int md_len = 0;

        if (EVP_Digest(text, len, md, &md_len, EVP_sha256(), NULL) != 1 || md_len < SUMMARY_DIGEST_LEN / 2)
                memset(md, 0, sizeof(md));
        for (size_t i = 0; i < SUMMARY_DIGEST_LEN / 2; i++)
                snprintf(out + 2 * i, 3, "%02x", md[i]);
}

/* The body's "digests": at most SUMMARY_MAX_SECTIONS names, each with a digest. */
static int check_digests(json_object *digests, char *why, size_t why_size)
{
        size_t n = 0;

        if (!json_object_is_type(digests, json_type_object))
                REFUSE("\"digests\" is not an object");
        json_object_object_foreach(digests, key, value) {
                if (!summary_is_section_name(key))
                        REFUSE("section name \"%.40s\" is not 1 to %d of a-z, 0-9, '_' or '-'", key,
                               SUMMARY_SECTION_NAME_MAX);
                if (++n > SUMMARY_MAX_SECTIONS)
                        REFUSE("more than %d sections", SUMMARY_MAX_SECTIONS);
                if (!json_object_is_type(value, json_type_string) ||
                    !node_key_is_hex(json_object_get_string(value), SUMMARY_DIGEST_LEN))
                        REFUSE("the digest of section \"%s\" is not %d hex digits", key, SUMMARY_DIGEST_LEN);
        }
        return 0;
}

/* The texts carried beside the body: each a section the body names, its text that digest's (a
 * splice's text is checked against it once made, cluster_receive.c), and JSON within the depth
 * a section may use (a splice's elements added). */
static int check_carried(json_object *carried, json_object *digests, char *why, size_t why_size)
{
        json_object_object_foreach(carried, key, value) {
                enum json_strict_error error;
                char digest[SUMMARY_DIGEST_LEN + 1];
                json_object *named = NULL, *parsed = NULL;
                struct summary_splice sp;
                const char *text;
                size_t len;

                if (!json_object_object_get_ex(digests, key, &named))
                        REFUSE("section \"%.40s\" is carried but its body names no such section", key);
                if (json_object_is_type(value, json_type_object)) {
                        if (summary_splice_read(value, &sp) < 0)
                                REFUSE("the change of section \"%s\" is not {from: a digest, at, drop: "
                                       "counts "
                                       "up to %d, add: an array's text}",
                                       key, SUMMARY_SPLICE_MAX_ELEMENTS);
                        text = sp.add;
                        len = sp.add_len;
                } else if (!json_object_is_type(value, json_type_string)) {
                        REFUSE("section \"%s\" is not carried as its JSON text", key);
                } else {
                        text = json_object_get_string(value);
                        len = (size_t)json_object_get_string_len(value);
                        summary_digest(text, len, digest);
                        if (strcmp(digest, json_object_get_string(named)) != 0)
                                REFUSE("the text of section \"%s\" is not the one its body's digest names",
                                       key);
                }
                if (json_strict_parse(text, len, SUMMARY_MAX_DEPTH, &parsed, &error, why, why_size) < 0) {
                        if (error == JSON_STRICT_SYNTAX)
                                snprintf(why, why_size, "section \"%s\" is not JSON", key);
                        return -EBADMSG;
                }
                json_object_put(parsed);
        }
        return 0;
}

const char *summary_carried_text(const struct summary *s, const char *name, size_t *len)
{
        json_object *v = NULL;

        if (!s->carried || !json_object_object_get_ex(s->carried, name, &v) ||
            !json_object_is_type(v, json_type_string))
                return NULL;
        *len = (size_t)json_object_get_string_len(v);
        return json_object_get_string(v);
}

json_object *summary_carried_splice(const struct summary *s, const char *name)
{
        json_object *v = NULL;

        if (!s->carried || !json_object_object_get_ex(s->carried, name, &v) ||
            !json_object_is_type(v, json_type_object))
                return NULL;
        return v;
}

/* The fields a summary's and an alive's bodies share; type is the one expected. */
static int check_body_fields(json_object *body, const char *type_wanted, struct summary *s, char *why,
                             size_t why_size)
{
        const char *type;
        uint64_t format;

        if (!json_object_is_type(body, json_type_object))
                REFUSE("its \"body\" is not a JSON object");
        if (get_string(body, "type", &type) < 0 || strcmp(type, type_wanted) != 0)
                REFUSE("its body's \"type\" is not \"%s\"", type_wanted);
        if (get_uint(body, "format", 1, INT32_MAX, &format) < 0)
                REFUSE("\"format\" is not a format number from 1");
        if (format < SUMMARY_FORMAT)
                REFUSE("it is of summary format %" PRIu64
                       ", from an older sparkd, which this version (format "
                       "%d) does not take; run one version on every node",
                       format, SUMMARY_FORMAT);
        s->format = (int64_t)format;
        if (get_string(body, "origin", &s->origin) < 0 || !summary_is_id(s->origin))
                REFUSE("\"origin\" is not a node id of %d hex digits", SUMMARY_ID_LEN);
        if (get_string(body, "instance", &s->instance) < 0 || !summary_is_id(s->instance))
                REFUSE("\"instance\" is not an id of %d hex digits", SUMMARY_ID_LEN);
        if (get_string(body, "name", &s->name) < 0 || !text_is_node_name(s->name))
                REFUSE("\"name\" is not a node name of 1 to %d letters, digits, '-', '_' or '.'",
                       SUMMARY_NODE_NAME_MAX);
        if (get_uint(body, "seq", 1, INT64_MAX, &s->seq) < 0)
                REFUSE("\"seq\" is not a sequence number from 1");
        if (get_uint(body, "uptime_ms", 0, INT64_MAX, &s->uptime_ms) < 0)
                REFUSE("\"uptime_ms\" is not a number of milliseconds");
        return 0;
}

/* The envelope: its size, type, age, key and signature, and the body read strictly into
 * s->body (a new reference, put on failure). */
static int check_envelope(json_object *msg, const char *type_wanted, struct summary *s, char *why,
                          size_t why_size)
{
        enum json_strict_error error;
        json_object *v;
        const char *type;
        size_t len;

        if (!json_object_is_type(msg, json_type_object))
                REFUSE("not a JSON object");
        len = json_plain_text_length(msg);
        if (len > SUMMARY_MAX_BYTES) {
                snprintf(why, why_size, "%zu bytes, over the limit of %d bytes", len, SUMMARY_MAX_BYTES);
                return -EMSGSIZE;
        }
        if (get_string(msg, "type", &type) < 0 || strcmp(type, type_wanted) != 0)
                REFUSE("\"type\" is not \"%s\"", type_wanted);
        if (!json_object_object_get_ex(msg, "body", &v) || !json_object_is_type(v, json_type_string))
                REFUSE("no signed \"body\" text: it is from a sparkd older than this one (summary format "
                       "1, unsigned), which this version does not take; run one version on every node");
        s->body_text = json_object_get_string(v);
        s->body_len = (size_t)json_object_get_string_len(v);
        if (get_string(msg, "key", &s->key) < 0 || !node_key_is_hex(s->key, NODE_KEY_HEX_LEN))
                REFUSE("\"key\" is not an Ed25519 public key of %d hex digits", NODE_KEY_HEX_LEN);
        if (get_string(msg, "sig", &s->sig) < 0 || !node_key_is_hex(s->sig, NODE_SIG_HEX_LEN))
                REFUSE("\"sig\" is not an Ed25519 signature of %d hex digits", NODE_SIG_HEX_LEN);
        if (get_uint(msg, "age_ms", 0, SUMMARY_MAX_AGE_MS, &s->age_ms) < 0)
                REFUSE("\"age_ms\" is not milliseconds from 0 to %" PRIu64, (uint64_t)SUMMARY_MAX_AGE_MS);
        /* The body object and its digests: two levels, and one to spare for a field a newer
         * sparkd adds. */
        if (json_strict_parse(s->body_text, s->body_len, 3, &s->body, &error, why, why_size) < 0) {
                if (error == JSON_STRICT_SYNTAX)
                        snprintf(why, why_size, "its \"body\" is not JSON");
                return -EBADMSG;
        }
        return 0;
}

/* Whether the body is its origin's word: the key names the origin's id and signed the body's
 * very bytes. Checked last: the cheaper refusals come first. */
static int check_signature(const struct summary *s, char *why, size_t why_size)
{
        char id[NODE_KEY_ID_LEN + 1];

        if (node_key_id_of(s->key, id) < 0 || strcmp(id, s->origin) != 0)
                REFUSE("its key is not node %s's (that key names node %s)", s->origin, id);
        if (node_key_verify(s->key, s->body_text, s->body_len, s->sig) < 0)
                REFUSE("its signature does not verify with node %s's key: the body was altered or "
                       "not signed by that node",
                       s->origin);
        return 0;
}

int summary_read(json_object *msg, bool is_alive, struct summary *ret, char *why, size_t why_size)
{
        struct summary s = { .msg = msg, .is_alive = is_alive };
        int r = check_envelope(msg, is_alive ? SUMMARY_ALIVE_TYPE : SUMMARY_TYPE, &s, why, why_size);

        if (r < 0)
                return r;
        r = check_body_fields(s.body, is_alive ? SUMMARY_ALIVE_TYPE : SUMMARY_TYPE, &s, why, why_size);
        if (r == 0 && is_alive &&
            (json_object_object_get_ex(s.body, "digests", NULL) ||
             json_object_object_get_ex(msg, "sections", NULL))) {
                snprintf(why, why_size, "an alive with sections");
                r = -EBADMSG;
        }
        if (r == 0 && !is_alive) {
                if (!json_object_object_get_ex(s.body, "digests", &s.digests)) {
                        snprintf(why, why_size, "no \"digests\" of its sections");
                        r = -EBADMSG;
                } else {
                        r = check_digests(s.digests, why, why_size);
                }
                if (r == 0 && json_object_object_get_ex(msg, "sections", &s.carried) &&
                    !json_object_is_type(s.carried, json_type_object)) {
                        snprintf(why, why_size, "\"sections\" is not an object");
                        r = -EBADMSG;
                }
        }
        if (r < 0) {
                json_object_put(s.body);
                return r;
        }
        *ret = s;
        return 0;
}

int summary_verify(const struct summary *s, char *why, size_t why_size)
{
        int r = 0;

        if (s->carried)
                r = check_carried(s->carried, s->digests, why, why_size);
        return r < 0 ? r : check_signature(s, why, why_size);
}

static int check_message(json_object *msg, bool is_alive, struct summary *ret, char *why, size_t why_size)
{
        int r = summary_read(msg, is_alive, ret, why, why_size);

        if (r < 0)
                return r;
        r = summary_verify(ret, why, why_size);
        if (r < 0)
                summary_clear(ret);
        return r;
}

int summary_check(json_object *msg, struct summary *ret, char *why, size_t why_size)
{
        return check_message(msg, false, ret, why, why_size);
}

int summary_check_alive(json_object *msg, struct summary *ret, char *why, size_t why_size)
{
        return check_message(msg, true, ret, why, why_size);
}

void summary_clear(struct summary *s)
{
        json_object_put(s->body);
        s->body = NULL;
        s->digests = NULL;
        s->carried = NULL;
}

int summary_parse(const char *text, size_t len, struct summary *ret, char *why, size_t why_size)
{
        enum json_strict_error error;
        json_object *msg = NULL;
        int r;

        if (len > SUMMARY_MAX_BYTES + 1024) {
                snprintf(why, why_size, "%zu bytes, over the limit of %d bytes", len, SUMMARY_MAX_BYTES);
                return -EMSGSIZE;
        }
        if (json_strict_parse(text, len, 3, &msg, &error, why, why_size) < 0) {
                if (error == JSON_STRICT_SYNTAX)
                        snprintf(why, why_size, "not JSON");
                return -EBADMSG;
        }
        r = summary_check(msg, ret, why, why_size);
        if (r < 0)
                json_object_put(msg);
        return r;
}

/* The signed message for body (taken over): the body's text as written here, once, is what is
 * signed and what every relay passes on. NULL without memory or when signing fails. */
static json_object *signed_new(EVP_PKEY *key, const char *type, json_object *body)
{
        char public_hex[NODE_KEY_HEX_LEN + 1], sig[NODE_SIG_HEX_LEN + 1];
        json_object *m = NULL;
        const char *text = json_object_to_json_string_ext(body, JSON_C_TO_STRING_PLAIN);
        size_t len = text ? strlen(text) : 0;

        if (text && node_key_public_hex(key, public_hex) == 0 && node_key_sign(key, text, len, sig) == 0) {
                m = json_object_new_object();
                json_object_object_add(m, "type", json_object_new_string(type));
                json_object_object_add(m, "body", json_object_new_string_len(text, (int)len));
                json_object_object_add(m, "key", json_object_new_string(public_hex));
                json_object_object_add(m, "sig", json_object_new_string(sig));
                json_object_object_add(m, "age_ms", json_object_new_int64(0));
        }
        json_object_put(body);
        return m;
}

static json_object *body_new(const char *type, const char *origin, const char *name, const char *instance,
                             uint64_t seq, uint64_t uptime_ms)
{
        json_object *m = json_object_new_object();

        if (!m)
                return NULL;
        json_object_object_add(m, "type", json_object_new_string(type));
        json_object_object_add(m, "format", json_object_new_int(SUMMARY_FORMAT));
        json_object_object_add(m, "origin", json_object_new_string(origin));
        json_object_object_add(m, "name", json_object_new_string(name));
        json_object_object_add(m, "instance", json_object_new_string(instance));
        json_object_object_add(m, "seq", json_object_new_int64((int64_t)seq));
        json_object_object_add(m, "uptime_ms", json_object_new_int64((int64_t)uptime_ms));
        return m;
}

json_object *summary_digests(json_object *sections)
{
        json_object *digests = json_object_new_object();

        if (!digests)
                return NULL;
        json_object_object_foreach(sections, key, value) {
                char digest[SUMMARY_DIGEST_LEN + 1];
                size_t len;
                const char *text = json_raw_text_length(value, &len);
                json_object *hex;

                if (!text)
                        text = json_object_to_json_string_length(value, JSON_C_TO_STRING_PLAIN, &len);
                summary_digest(text, len, digest);
                hex = json_object_new_string(digest);
                if (!hex || json_object_object_add(digests, key, hex) < 0) {
                        json_object_put(hex);
                        json_object_put(digests);
                        return NULL;
                }
        }
        return digests;
}

/* Whether known names the same digest for section name. */
static bool is_known(json_object *known, const char *name, json_object *digest)
{
        json_object *v = NULL;

        return known && json_object_object_get_ex(known, name, &v) &&
               strcmp(json_object_get_string(v), json_object_get_string(digest)) == 0;
}

json_object *summary_new(EVP_PKEY *key, const char *origin, const char *name, const char *instance,
                         uint64_t seq, uint64_t uptime_ms, json_object *sections, json_object *digests)
{
        json_object *body = body_new(SUMMARY_TYPE, origin, name, instance, seq, uptime_ms);
        json_object *carried = json_object_new_object(), *m;

        if (!body || !carried) {
                json_object_put(body);
                json_object_put(carried);
                return NULL;
        }
        json_object_object_add(body, "digests", json_object_get(digests));
        json_object_object_foreach(digests, key_name, digest) {
                json_object *value = NULL;
                const char *text;
                size_t len;

                if (!json_object_object_get_ex(sections, key_name, &value))
                        continue;
                text = json_raw_text_length(value, &len);
                if (!text)
                        text = json_object_to_json_string_length(value, JSON_C_TO_STRING_PLAIN, &len);
                json_object_object_add(carried, key_name, json_object_new_string_len(text, (int)len));
        }
        m = signed_new(key, SUMMARY_TYPE, body);
        if (m)
                json_object_object_add(m, "sections", carried);
        else
                json_object_put(carried);
        return m;
}

/* The change of section name from its text in known_texts to text: a splice when that is much
 * smaller (summary_splice.h), else the text itself (a new reference). */
static json_object *change_of(json_object *known, json_object *known_texts, const char *name,
                              json_object *text)
{
        json_object *old = NULL, *old_digest = NULL, *splice;

        if (!known_texts || !json_object_object_get_ex(known_texts, name, &old) ||
            !json_object_is_type(old, json_type_string) ||
            !json_object_object_get_ex(known, name, &old_digest))
                return json_object_get(text);
        splice = summary_splice_new(json_object_get_string(old), (size_t)json_object_get_string_len(old),
                                    json_object_get_string(old_digest), json_object_get_string(text),
                                    (size_t)json_object_get_string_len(text));
        return splice ? splice : json_object_get(text);
}

json_object *summary_delta(json_object *full, json_object *digests, json_object *known,
                           json_object *known_texts)
{
        json_object *m = json_object_new_object(), *carried = json_object_new_object(), *all = NULL;

        if (!m || !carried) {
                json_object_put(m);
                json_object_put(carried);
                return NULL;
        }
        json_object_object_foreach(full, key, value) {
                if (strcmp(key, "sections") != 0)
                        json_object_object_add(m, key, json_object_get(value));
        }
        json_object_object_get_ex(full, "sections", &all);
        json_object_object_foreach(digests, name, digest) {
                json_object *text = NULL;

                if (!is_known(known, name, digest) && json_object_object_get_ex(all, name, &text))
                        json_object_object_add(carried, name, change_of(known, known_texts, name, text));
        }
        json_object_object_add(m, "sections", carried);
        return m;
}

json_object *summary_new_alive(EVP_PKEY *key, const char *origin, const char *name, const char *instance,
                               uint64_t seq, uint64_t uptime_ms)
{
        return signed_new(key, SUMMARY_ALIVE_TYPE,
                          body_new(SUMMARY_ALIVE_TYPE, origin, name, instance, seq, uptime_ms));
}
