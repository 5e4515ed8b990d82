/*
 * Writing what a socket bufferevent has queued now, in the caller's turn of the loop, rather than
 * when the loop next finds the socket writable. libevent writes a socket bufferevent's output only
 * from its write event, a turn later, and under load a turn is tens of milliseconds; it also
 * keeps the output's front frozen, so a plain evbuffer_write on it writes nothing.
 */
#pragma once

#include <event2/bufferevent.h>

/* As much as the socket takes without waiting; the rest stays for the bufferevent. The bytes
 * written, or a negative errno (-EAGAIN when the socket takes none now); an error on the socket
 * is the bufferevent's to report, from its write event. */
int socket_flush_now(struct bufferevent *bev);
