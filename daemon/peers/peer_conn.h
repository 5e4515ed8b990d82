/*
 * One connection of the peer channel carrying newline-separated JSON messages: the TLS handshake
 * (peer_tls.h), the records after it (peer_record.h), the framing of lines (at most
 * SPARKD_MAX_LINE bytes), a deadline and the time data last came in. What happens on it means something only
 * to its owner, which peer_conn_ops tells; the owner ends it with peer_conn_free(), also from inside those
 * callbacks.
 */
#pragma once

#include <event2/bufferevent.h>
#include <event2/event.h>
#include <json-c/json.h>
#include <netinet/in.h>
#include <openssl/ssl.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/queue.h>

#include "peer_record.h"

#define PEER_CONN_BINDING_LEN   32
#define PEER_CONN_BINDING_LABEL "EXPORTER-sparkd-hello"

struct peer_conn;
struct peer;
struct peers;

struct peer_conn_ops {
        /* A dial's TCP connection is up: its TLS handshake begins. */
        void (*on_dialled)(struct peer_conn *c);
        /* The TLS handshake completed; the records' keys are set. */
        void (*on_connected)(struct peer_conn *c);
        /* One line without its newline; returns < 0 when it ended (freed) c. */
        int (*on_line)(struct peer_conn *c, const char *line, size_t len);
        /* After the handshake: the peer closed, the connection failed or sent what cannot be read. */
        void (*on_broken)(struct peer_conn *c, const char *why);
        /* Before the handshake completed; is_refused when TLS refused it (no common key, not sparkd)
         * rather than the network failing. why is then "TLS: " and OpenSSL's words, a detail for
         * the owner to put after its own explanation; otherwise "cannot connect: ...". */
        void (*on_handshake_failed)(struct peer_conn *c, const char *why, bool is_refused);
        void (*on_deadline)(struct peer_conn *c);
};

struct peer_conn {
        const struct peer_conn_ops *ops;
        struct bufferevent *bev; /* the socket: handshake, then records */
        SSL_CTX *tls;            /* a reference: its cipher seals the records */
        SSL *handshake;          /* until the handshake completed */
        struct peer_records records;
        struct evbuffer *plain; /* what the records carried, not yet read as lines */
        const char *failure;    /* why c ends, once a record could not be sealed */
        struct event *deadline;
        bool is_outbound;
        bool is_handshake_done;
        int connect_error; /* a dial's: why its TCP connection failed (errno), 0 otherwise */
        char remote[64];
        char local[64];
        uint64_t last_rx_usec;

        /* The owner's, untouched here. */
        struct peers *owner;
        LIST_ENTRY(peer_conn) link;
        struct peer *peer; /* outbound: from the start; inbound: once its hello names it */
        bool is_hello_done;
        bool is_retiring;  /* replaced by a duplicate: read a while longer, only heartbeats sent */
        char refusal[320]; /* why its hello was refused, for the log */
        unsigned char binding[PEER_CONN_BINDING_LEN]; /* peer_conn_binding's */
};

/* Takes fd over; NULL without memory. */
struct peer_conn *peer_conn_new(struct event_base *base, SSL_CTX *tls, int fd, bool outbound,
                                const struct peer_conn_ops *ops);
void peer_conn_free(struct peer_conn *c);
int peer_conn_connect(struct peer_conn *c, const struct sockaddr_in *remote);
/* Sends msg (taken over) as one line; the bytes queued, the newline included. */
size_t peer_conn_send(struct peer_conn *c, json_object *msg);
/* ops->on_deadline runs sec seconds from now, unless cleared or set again. */
void peer_conn_set_deadline(struct peer_conn *c, unsigned sec);
void peer_conn_clear_deadline(struct peer_conn *c);
/* What binds a signature to this TLS session, the same at both ends and at no other session
 * (TLS exporter, RFC 8446 7.5, label PEER_CONN_BINDING_LABEL); after the handshake. */
int peer_conn_binding(struct peer_conn *c, unsigned char out[PEER_CONN_BINDING_LEN]);

/* Whether the far host's TCP acknowledged everything queued on c, or acknowledged something
 * within the last within_usec: its kernel is there, whatever its sparkd does. False when it
 * cannot be told. */
bool peer_conn_host_acks(const struct peer_conn *c, uint64_t within_usec);

uint64_t peer_now_usec(void);
void peer_format_sockaddr(const struct sockaddr_in *sa, char *buf, size_t size);
