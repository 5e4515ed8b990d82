/*
 * A keyed peer's end of the peer channel for the test programs that speak the peer protocol:
 * connects to a sparkd with the cluster key as sparkd's peer channel does (peer_client.h), writes "binding
 * HEX" (the session's exporter value a hello signs, peer_conn_binding) as its first line, then passes stdin
 * to the daemon and what the daemon sends to stdout. At the end of stdin it reads 2 s more and ends. Usage:
 * peer-pipe ADDRESS PORT KEY_FILE
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "common/cluster_key.h"
#include "daemon/peers/peer_tls.h"
#include "peer_client.h"

static int64_t now_ms(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int write_all(int fd, const char *p, size_t n)
{
        while (n) {
                ssize_t k = write(fd, p, n);

                if (k <= 0)
                        return -1;
                p += k;
                n -= (size_t)k;
        }
        return 0;
}

int main(int argc, char **argv)
{
        struct sockaddr_in to = { .sin_family = AF_INET };
        struct peer_client pc;
        struct cluster_key key;
        char why[256] = "", buf[65536];
        bool is_stdin_open = true;
        int64_t end_ms = 0;
        SSL_CTX *ctx;

        if (argc != 4) {
                fprintf(stderr, "usage: %s ADDRESS PORT KEY_FILE\n", argv[0]);
                return 2;
        }
        to.sin_port = htons((uint16_t)atoi(argv[2]));
        if (inet_pton(AF_INET, argv[1], &to.sin_addr) != 1 || peer_tls_init() < 0 ||
            cluster_key_load(argv[3], &key, why, sizeof(why)) < 0 || !(ctx = peer_tls_context_new(&key))) {
                fprintf(stderr, "peer-pipe: cannot set up: %s\n", why);
                return 1;
        }
        if (peer_client_connect(&pc, ctx, &to, 10) < 0) {
                fprintf(stderr, "peer-pipe: no session: the connection or the TLS handshake failed\n");
                return 1;
        }
        printf("binding ");
        for (size_t i = 0; i < sizeof(pc.binding); i++)
                printf("%02x", pc.binding[i]);
        printf("\n");
        fflush(stdout);
        for (;;) {
                struct pollfd p[2] = { { .fd = pc.fd, .events = POLLIN }, { .fd = 0, .events = POLLIN } };
                int64_t left = is_stdin_open ? -1 : end_ms - now_ms();
                int n = left == 0 || left < -1
                                ? 0
                                : poll(p, is_stdin_open ? 2 : 1, peer_client_pending(&pc) ? 0 : (int)left);

                if (n == 0 && !peer_client_pending(&pc))
                        break; /* stdin ended 2 s ago: what the daemon sends since is not read */
                if (p[0].revents || peer_client_pending(&pc)) {
                        ssize_t k = peer_client_read(&pc, buf, sizeof(buf));

                        if (k <= 0)
                                break;
                        if (write_all(1, buf, (size_t)k) < 0)
                                break;
                }
                if (is_stdin_open && p[1].revents) {
                        ssize_t k = read(0, buf, sizeof(buf));

                        if (k <= 0) {
                                is_stdin_open = false;
                                end_ms = now_ms() + 2000;
                        } else if (peer_client_write(&pc, buf, (size_t)k) < 0)
                                break;
                }
        }
        peer_client_close(&pc);
        SSL_CTX_free(ctx);
        return 0;
}
