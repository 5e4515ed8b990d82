/*
 * sparkd-probe-tcp's streams: one thread per TCP connection, sending for a while or receiving
 * until the peer ends its writing, while the main thread prints progress and takes the deadline's
 * signal. Both sides use both: the client sends then receives the reverse direction, the server
 * the other way round.
 */
#pragma once

#include <json-c/json.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

/* One connection and the thread that drives it. */
struct tcp_stream {
        int fd;
        pthread_t thread;
        int error; /* errno of the send or recv that ended it early */
        /* client */
        const char *buf;
        uint64_t size;
        double send_until;
        uint64_t sent; /* read by the main thread for progress while the thread adds to it */
        bool stopped;  /* the sending thread ended (its time is up, or send failed) */
        /* server, and on the client what the server said it received */
        uint64_t received;
        double first_byte, ended;
};

/* Sends size-byte writes on the n streams for duration seconds, a progress line each second. 0,
 * or 1 (the exit status) after printing the failure. */
int tcp_send_for(struct tcp_stream *s, unsigned n, double duration, uint64_t size);
/* Receives on the n streams until each ends: the earliest first byte and the last end. 0, or 1
 * after printing the failure. */
int tcp_receive_all(struct tcp_stream *s, unsigned n, double *first_byte, double *last_end);
/* The retransmits of the n streams' sockets so far, NULL when the kernel does not say. */
json_object *tcp_retransmits(const struct tcp_stream *s, unsigned n);
