/*
 * The peer table: one entry per node known by id, by a static address or from mDNS, with its
 * state, what it told of itself, the backoff of its redials and the comparison of the MTU at the
 * two ends of its cable; and struct peers, the state of the whole peer module. An entry's
 * connections are not ended here: peer_remove() (peer_session.h) does both.
 */
#pragma once

#include <event2/dns.h>
#include <event2/event.h>
#include <event2/listener.h>
#include <json-c/json.h>
#include <net/if.h>
#include <openssl/ssl.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/queue.h>
#include <time.h>

#include "common/macro.h"
#include "common/node_key.h"
#include "common/text_check.h"
#include "daemon/host/links.h"
#include "peer_conn.h"
#include "peers.h"

#define BACKOFF_MIN_MS 500
#define BACKOFF_MAX_MS 30000
/* A dial refused at once is retried after 250 ms, then 500, then every second (and a quarter
 * more of jitter): nodes started together (a cluster powered on, a test) find each other within
 * a fraction of a second, and one whose sparkd starts long after its peers is dialled by them
 * within 1.25 s, with a SYN and its reset a second meanwhile. */
#define REFUSED_RETRY_MIN_MS 250
#define REFUSED_RETRY_MAX_MS 1000
#define REJECT_LOG_INTERVAL  10 /* seconds between logged inbound rejections; the rest are counted */

enum peer_state {
        PEER_DISCOVERED,
        PEER_CONNECTING,
        PEER_UP,
        PEER_DOWN,
        PEER_REJECTED,
        PEER_DUPLICATE_ID, /* another node runs with this node's id */
};

/* A node's LLDP chassis as lldpd there advertises it, so LLDP neighbours can be matched to nodes. */
struct peer_chassis {
        char id[TEXT_LLDP_SIZE];
        char name[TEXT_LLDP_SIZE];
};

struct peer {
        struct peers *owner;
        LIST_ENTRY(peer) link;
        char node_id[33]; /* "" until its hello (static peers) */
        char name[64];
        char **addresses;  /* where it may be reached */
        char *static_spec; /* as written in [peers] static, NULL when not static */
        bool is_discovered;
        bool is_self; /* a static address that turned out to be this node */
        /* Known only from a hello it sent: neither static nor found over mDNS. Such a node dials
         * this one again itself, so it is not redialled, and it is forgotten once down a while. */
        bool is_learned;
        enum peer_state state;
        time_t since;
        struct peer_conn *conn;    /* the connection in use, once up */
        struct peer_conn *dialing; /* an outbound attempt */
        struct event *retry;
        unsigned backoff_ms;
        unsigned refused_retry_ms; /* the next wait after a dial refused at once */
        unsigned next_address;
        char version[32];
        struct peer_chassis chassis; /* from its last hello or heartbeat; "" when it sent none */
        json_object *ports;          /* the peer's fabric ports from its last hello or heartbeat */
        char via_ifname[IF_NAMESIZE];
        char via_local[64];
        char via_remote[64];
        unsigned local_mtu, peer_mtu;
        bool is_mtu_mismatch;
        char *last_error;        /* why it is not up, for people; NULL when nothing went wrong */
        uint64_t n_send_dropped; /* messages dropped: too much waited to be sent to it */
        /* Up, but nothing came from it for two heartbeats or more (its host still acknowledges
         * what is sent there, or the timeout has not passed yet): a node stopped or starved of
         * CPU, not one gone. */
        bool is_slow;
        uint64_t silent_usec; /* at the last tick, while up */
        time_t send_drop_logged;
};

struct peers {
        struct event_base *base;
        struct links *links;
        char node_id[33];
        /* Random per process: tells this process's own hello from another node's that carries the
         * same id (a cloned disk image, or two daemons on one state directory). */
        char instance[33];
        char name[64];
        struct peer_chassis chassis; /* this node's, sent in hello and heartbeat; "" unknown */
        char node_id_file[512]; /* where the key the id comes from is kept, for the fix of a duplicate */
        EVP_PKEY *node_key;     /* proves node_id in the hello (borrowed) */
        char public_key[NODE_KEY_HEX_LEN + 1];
        SSL_CTX *tls;
        char key_id[17];
        char key_file[256];
        char off_reason[1024]; /* why peering is off, with what to do; "" when on */
        struct evconnlistener *listener;
        uint16_t port;
        struct discovery *discovery;
        char published[512];
        struct evdns_base *dns;
        struct event *tick;
        /* Runs at every tick once the heartbeats are queued (peers_set_tick_hook). */
        void (*tick_hook)(void *userdata);
        void *tick_hook_userdata;
        uint64_t heartbeat_usec;
        uint64_t timeout_usec;
        uint64_t handshakes; /* TLS handshakes begun, both ways, since start */
        uint64_t bytes_sent; /* lines of the peer protocol queued to be sent, since start */
        /* The same by second of the last minute (the slot of second s is s % 60), for the budget. */
        uint64_t sent_by_second[60];
        uint64_t sent_second;    /* the monotonic second of the newest slot written */
        uint64_t sends_deferred; /* changes that waited for the budget (peers_budget_defers) */
        unsigned max_learned;    /* entries known only from their inbound hello ([peers] max_learned) */
        time_t forget_after_sec; /* such an entry down this long is dropped ([peers] forget_after) */
        LIST_HEAD(, peer) peers;
        LIST_HEAD(, peer_conn) conns;
        unsigned n_pending; /* inbound connections before their hello */
        unsigned n_dialing; /* outbound ones */
        /* Dials the peers that wait for a place among the MAX_DIALING, once one is free. */
        struct event *dial_waiting;
        struct peers_handler {
                char prefix[32]; /* "" marks a free slot */
                peers_message_fn fn;
                void *userdata;
        } handlers[PEERS_MAX_HANDLERS];
        time_t last_reject_log;
        unsigned rejects_unlogged;
        /* Dials p when its backoff ends; dialling sits above the table, which only keeps time. */
        void (*redial)(struct peer *p);
        /* A peer or connection appeared: the heartbeat tick, which sits above, runs again. */
        void (*wake)(struct peers *ps);
};

const char *peer_label(const struct peer *p);
const char *peer_state_to_string(enum peer_state state);
void peer_set_state(struct peer *p, enum peer_state state);
struct peer *peer_find_by_id(struct peers *ps, const char *node_id);
/* Hands a message to the handler of the longest prefix of type; "peer-up" and "peer-down" go to
 * every handler. */
void peer_table_dispatch(struct peers *ps, const char *node_id, const char *type, json_object *msg);
/* A static entry not yet connected that dials this address. */
struct peer *peer_find_unnamed_by_address(struct peers *ps, const char *address);
struct peer *peer_new(struct peers *ps);
/* Frees the entry alone; its connections must be gone (peer_remove() sees to that). */
void peer_free(struct peer *p);
/* Sets why the peer is not up: a sentence for people, kept on the heap (at 64 nodes a buffer held
 * in every entry was 1 KiB a peer, nearly all of them empty). */
#define PEER_ERROR_MAX 1024 /* bytes of it kept, the terminating NUL included */
void peer_set_error(struct peer *p, const char *fmt, ...) _printf_(2, 3);
void peer_clear_error(struct peer *p);
/* Folds `from` (a static entry that turned out to be `into`) into `into`. */
void peer_merge(struct peer *into, struct peer *from);
/* Arms the redial after the current backoff and doubles it. */
void peer_schedule_retry(struct peer *p);
/* Arms the redial after the refused dials' own short wait (REFUSED_RETRY_MIN_MS doubling to
 * REFUSED_RETRY_MAX_MS), the backoff left as it is: the peer's host refused the dial at once
 * (nothing listens on the port: its sparkd is starting, or stopped), which cost a SYN and its
 * reset, no handshake. */
void peer_schedule_refused_retry(struct peer *p);
bool peer_is_retry_pending(const struct peer *p);
/* Drops a pending redial and starts the backoff again: the next tick dials. */
void peer_reset_retry(struct peer *p);
void peer_check_mtu(struct peer *p);
/* Learned from its hello alone, and since neither given in [peers] static nor found over mDNS. */
bool peer_is_learned(const struct peer *p);
/* An inbound connection refused: logged at most once per interval, the rest counted. */
void peer_log_inbound_reject(struct peers *ps, const char *remote, const char *why);
/* n bytes of the peer protocol queued to a peer: counted since start and in the last minute. */
void peer_count_sent(struct peers *ps, size_t n);
/* The bytes queued in the last minute. */
uint64_t peer_sent_last_minute(struct peers *ps);
