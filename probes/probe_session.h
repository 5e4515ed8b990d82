/*
 * The data connections of the socket probe helpers: the server listens and accepts one client
 * session (its connections authenticated by the one-time token handshake of probe_common.h), the
 * client connects and authenticates, both within the process deadline.
 */
#pragma once

#include "probe_common.h"

/* The server side: listens on addr:port (0 = any free port) and prints the listening line. */
int probe_listen(const struct in_addr *addr, uint16_t port, int buffer_bytes, char *err, size_t err_size);
/* Accepts connections until one session of a client is complete: hello.streams authenticated
 * connections with the same session id. Wrong tokens, strangers and connections that do not
 * authenticate within 2 s are answered (where they said anything) and closed. fds has room for
 * max_streams; on success *first holds the session's hello and fds the connections in stream
 * order. */
int probe_accept_session(int listen_fd, const char *kind, const char *token, unsigned max_streams, int *fds,
                         struct probe_hello *first, char *err, size_t err_size);
/* The client side: connects (from bind_addr when given) within the connect timeout, sends the
 * handshake and waits for the server's answer. */
int probe_connect(const struct in_addr *bind_addr, const struct in_addr *addr, uint16_t port,
                  int buffer_bytes, const char *token, const struct probe_hello *hello, char *err,
                  size_t err_size);
/* A random session id (hex). */
void probe_session_id(char *buf, size_t size);
/* Writes all of buf on a blocking socket. */
int probe_write_all(int fd, const void *buf, size_t len);
/* Reads one line (without the newline) from fd within timeout_ms; -ETIMEDOUT, -ECONNRESET on
 * EOF before a line, -EMSGSIZE when longer than size-1. Reads byte by byte: for short lines. */
int probe_read_line(int fd, char *buf, size_t size, int timeout_ms);
/* The name of the local interface holding IPv4 address ipv4 ("" when none does); 0 or -errno. */
int probe_netdev_of(const char *ipv4, char *ifname, size_t size);
/* "A.B.C.D" of the socket's own or peer address. */
void probe_sockname(int fd, bool peer, char *buf, size_t size);
