/*
 * The API's answer rate and latency under load: CLIENTS connections to SOCKET, each on its own
 * persistent connection sending METHOD, waiting for the answer's line and sending again, for
 * SECONDS. One thread and epoll, so the load costs little of the CPU the daemon shares.
 * Prints one JSON object: answers, errors, per_sec, p50_ms, p99_ms, max_ms.
 * Usage: api_rate SOCKET METHOD CLIENTS SECONDS
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

struct client {
        int fd;
        uint64_t sent_usec;
        char buf[1 << 16];
        size_t len;
        size_t has_result; /* whether the answer so far holds "result" */
};

static uint64_t now_usec(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t)ts.tv_sec * 1000000 + (uint64_t)ts.tv_nsec / 1000;
}

static int cmp_u32(const void *a, const void *b)
{
        uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

        return x < y ? -1 : x > y;
}

static int send_request(struct client *c, const char *request, size_t n)
{
        c->sent_usec = now_usec();
        c->len = 0;
        c->has_result = 0;
        return write(c->fd, request, n) == (ssize_t)n ? 0 : -1;
}

int main(int argc, char **argv)
{
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        struct epoll_event ev[64];
        uint32_t *lat = NULL;
        size_t n_lat = 0, cap = 0, errors = 0;
        char request[256];
        struct client *clients;
        int clients_n, seconds, ep;
        uint64_t start, end;

        if (argc != 5 || (clients_n = atoi(argv[3])) <= 0 || (seconds = atoi(argv[4])) <= 0) {
                fprintf(stderr, "usage: api_rate SOCKET METHOD CLIENTS SECONDS\n");
                return 2;
        }
        snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", argv[1]);
        snprintf(request, sizeof(request), "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"%s\"}\n", argv[2]);
        clients = calloc((size_t)clients_n, sizeof(*clients));
        ep = epoll_create1(0);
        if (!clients || ep < 0)
                return 1;
        for (int i = 0; i < clients_n; i++) {
                struct epoll_event e = { .events = EPOLLIN, .data.ptr = &clients[i] };

                clients[i].fd = socket(AF_UNIX, SOCK_STREAM, 0);
                if (clients[i].fd < 0 || connect(clients[i].fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
                        fprintf(stderr, "api_rate: cannot connect to %s: %s\n", sa.sun_path,
                                strerror(errno));
                        return 1;
                }
                epoll_ctl(ep, EPOLL_CTL_ADD, clients[i].fd, &e);
        }
        start = now_usec();
        end = start + (uint64_t)seconds * 1000000;
        for (int i = 0; i < clients_n; i++)
                if (send_request(&clients[i], request, strlen(request)) < 0)
                        return 1;
        while (now_usec() < end) {
                int n = epoll_wait(ep, ev, 64, 100);

                for (int i = 0; i < n; i++) {
                        struct client *c = ev[i].data.ptr;
                        ssize_t r = read(c->fd, c->buf + c->len, sizeof(c->buf) - c->len - 1);
                        char *nl;

                        if (r <= 0) {
                                fprintf(stderr, "api_rate: the daemon closed a connection\n");
                                return 1;
                        }
                        c->len += (size_t)r;
                        c->buf[c->len] = '\0';
                        nl = memchr(c->buf, '\n', c->len);
                        if (!nl) {
                                if (c->len > 4096) { /* keep the tail only: answers may be long */
                                        c->has_result |= strstr(c->buf, "\"result\"") != NULL;
                                        memmove(c->buf, c->buf + c->len - 16, 16);
                                        c->len = 16;
                                }
                                continue;
                        }
                        if (!c->has_result && !strstr(c->buf, "\"result\""))
                                errors++;
                        if (n_lat == cap) {
                                cap = cap ? cap * 2 : 65536;
                                lat = realloc(lat, cap * sizeof(*lat));
                                if (!lat)
                                        return 1;
                        }
                        lat[n_lat++] = (uint32_t)(now_usec() - c->sent_usec);
                        if (send_request(c, request, strlen(request)) < 0)
                                return 1;
                }
        }
        end = now_usec();
        if (!n_lat) {
                fprintf(stderr, "api_rate: no answer in %d s\n", seconds);
                return 1;
        }
        qsort(lat, n_lat, sizeof(*lat), cmp_u32);
        printf("{\"method\":\"%s\",\"clients\":%d,\"answers\":%zu,\"errors\":%zu,\"per_sec\":%.0f,"
               "\"p50_ms\":%.3f,\"p99_ms\":%.3f,\"max_ms\":%.3f}\n",
               argv[2], clients_n, n_lat, errors, (double)n_lat * 1e6 / (double)(end - start),
               lat[n_lat / 2] / 1000.0, lat[n_lat * 99 / 100] / 1000.0, lat[n_lat - 1] / 1000.0);
        return 0;
}
