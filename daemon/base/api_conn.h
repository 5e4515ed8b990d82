/*
 * One client of the control API server: its line framing, size limit and half-line timeout, the
 * requests it has open and their answers (api_request_*), and its going away. The server (api.c)
 * accepts and admits clients and hands each one over here; nothing here calls back into it.
 */
#pragma once

#include <event2/bufferevent.h>
#include <event2/listener.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/queue.h>
#include <sys/types.h>

#include "api.h"

struct method_entry {
        const struct api_method *method;
        void *userdata;
};

struct api_conn {
        struct api_server *server;
        struct bufferevent *bev;
        LIST_ENTRY(api_conn) link;
        LIST_HEAD(, api_request) pending;
        uid_t uid;
        pid_t pid;
        bool is_admin;
        bool closing;
        bool subscribed;
        bool hung_up;                /* the peer closed its socket: nobody reads what is sent */
        char **event_types;          /* NULL: every type */
        uint64_t partial_since_usec; /* 0: no half-sent line */
        bool sent_large;             /* a reply of API_TRIM_AFTER bytes or more is being written */
};

struct api_request {
        struct api_conn *conn;        /* NULL once the client went away */
        LIST_ENTRY(api_request) link; /* on conn->pending, or on api_conn_free's orphans */
        bool is_linked;
        json_object *id;
        bool has_id;
        bool subscribe;
        char **subscribe_types;
        void (*on_orphan)(void *userdata);
        void *orphan_userdata;
};

/* The server's state, which its connections read (methods) and keep (the list and count). */
struct api_server {
        struct event_base *base;
        struct evconnlistener *listener;
        struct event *accept_retry;
        char *path;
        bool activated;
        /* The socket this server made, so that only it is ever removed at stop. */
        dev_t socket_dev;
        ino_t socket_ino;
        struct api_access access;
        struct method_entry *methods;
        size_t n_methods;
        LIST_HEAD(, api_conn) conns;
        unsigned n_conns;
        uint64_t refusal_logged_usec; /* 0: none logged yet */
        uint64_t refusals_unlogged;
};

uint64_t api_monotonic_usec(void);
/* Serves the client on fd (which it then owns) until it goes; NULL when out of memory, fd closed. */
struct api_conn *api_conn_new(struct api_server *server, int fd, uid_t uid, pid_t pid, bool is_admin);
/* Takes it off the server now; its open requests are orphaned. */
void api_conn_free(struct api_conn *conn);
/* Queues msg as one line. A large one is queued as its own text, a reference held until it is
 * written: msg must not be changed, or written with other flags, after it was sent. */
void api_conn_send(struct api_conn *conn, json_object *msg);
/* For a client that hung up: serves what it sent, as at EOF, and frees it at once. */
void api_conn_reap(struct api_conn *conn);
