/* Internals shared by peers.c (the table) and peer_conn.c (the connections); not for other modules. */
#pragma once

#include <event2/bufferevent.h>
#include <event2/dns.h>
#include <event2/listener.h>
#include <json-c/json.h>
#include <net/if.h>
#include <netinet/in.h>
#include <openssl/ssl.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/queue.h>
#include <time.h>

#include "daemon/host/links.h"
#include "discovery.h"
#include "peers.h"

#define PEER_PROTO        1
#define HELLO_TIMEOUT_SEC 5
/* How long a connection replaced by a duplicate is still read: what the peer sent on it before
 * it learned of the other one arrives, instead of being lost with it. */
#define RETIRE_GRACE_SEC    5
#define MAX_PENDING_INBOUND 64
#define BACKOFF_MIN_MS      500
#define BACKOFF_MAX_MS      30000
#define REJECT_LOG_INTERVAL 10 /* seconds between logged inbound rejections; the rest are counted */

enum peer_state {
        PEER_DISCOVERED,
        PEER_CONNECTING,
        PEER_UP,
        PEER_DOWN,
        PEER_REJECTED,
};

struct peer_conn;

struct peer {
        struct peers *owner;
        LIST_ENTRY(peer) link;
        char node_id[33]; /* "" until its hello (static peers) */
        char name[64];
        char **addresses;  /* where it may be reached */
        char *static_spec; /* as written in [peers] static, NULL when not static */
        bool is_discovered;
        bool is_self; /* a static address that turned out to be this node */
        enum peer_state state;
        time_t since;
        struct peer_conn *conn;    /* the connection in use, once up */
        struct peer_conn *dialing; /* an outbound attempt */
        struct event *retry;
        unsigned backoff_ms;
        unsigned next_address;
        char version[32];
        json_object *ports; /* the peer's fabric ports from its last hello or heartbeat */
        char via_ifname[IF_NAMESIZE];
        char via_local[64];
        char via_remote[64];
        unsigned local_mtu, peer_mtu;
        bool is_mtu_mismatch;
        char last_error[320];
};

struct peer_conn {
        struct peers *owner;
        LIST_ENTRY(peer_conn) link;
        struct peer *peer; /* outbound: from the start; inbound: once its hello names it */
        struct bufferevent *bev;
        bool is_outbound;
        bool is_tls_up;
        bool is_hello_done;
        bool is_retiring; /* replaced by a duplicate: read until RETIRE_GRACE_SEC, only heartbeats sent */
        char remote[64];
        char local[64];
        uint64_t last_rx_usec;
        struct event *deadline;
};

struct peers {
        struct event_base *base;
        struct links *links;
        char node_id[33];
        char name[64];
        SSL_CTX *tls;
        char key_id[17];
        struct evconnlistener *listener;
        uint16_t port;
        struct discovery *discovery;
        char published[512];
        struct evdns_base *dns;
        struct event *tick;
        uint64_t heartbeat_usec;
        uint64_t timeout_usec;
        LIST_HEAD(, peer) peers;
        LIST_HEAD(, peer_conn) conns;
        unsigned n_pending;
        peers_message_fn on_message;
        void *on_message_userdata;
        time_t last_reject_log;
        unsigned rejects_unlogged;
};

/* peers.c: the table */
uint64_t peer_now_usec(void);
const char *peer_label(const struct peer *p);
void peer_set_state(struct peer *p, enum peer_state state);
struct peer *peer_find_by_id(struct peers *ps, const char *node_id);
struct peer *peer_new(struct peers *ps);
void peer_free(struct peer *p);
/* Folds `from` (a static entry that turned out to be `into`) into `into`. */
void peer_merge(struct peer *into, struct peer *from);
void peer_schedule_retry(struct peer *p);
void peer_check_mtu(struct peer *p);
void peer_log_inbound_reject(struct peers *ps, const char *remote, const char *why);

/* This node's fabric ports as the protocol describes them: [{ifname, addresses, mtu}]. */
json_object *peer_local_ports(struct peers *ps);
bool peer_ipv4_parse(const char *s, struct in_addr *addr, unsigned *prefix);
/* The port whose addresses include ip (or share its subnet, when by_subnet). */
json_object *peer_port_for_address(json_object *ports, const char *ip, bool by_subnet, const char **address);
const char *peer_port_string(json_object *port, const char *key);
unsigned peer_port_mtu(json_object *port);

/* peer_conn.c: one TLS connection */
struct peer_conn *peer_conn_new(struct peers *ps, int fd, bool outbound, struct peer *p);
void peer_conn_free(struct peer_conn *c);
/* Ends a connection; reason NULL means quietly (a duplicate being dropped). */
void peer_conn_close(struct peer_conn *c, const char *reason);
void peer_conn_send_heartbeat(struct peer_conn *c);
void peer_conn_send(struct peer_conn *c, json_object *msg);
/* Handles one line the peer sent (without its newline); on a protocol error, a duplicate or a
 * connection to itself the connection is closed (c freed) and a negative errno returned. */
int peer_conn_receive(struct peer_conn *c, const char *line, size_t len);
void peer_conn_on_accept(struct evconnlistener *l, evutil_socket_t fd, struct sockaddr *addr, int len,
                         void *userdata);
void peer_dial_address(struct peer *p, const char *address);
void peer_format_sockaddr(const struct sockaddr_in *sa, char *buf, size_t size);
