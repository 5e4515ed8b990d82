#include "firewall_listen.h"

#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "common/macro.h"
#include "common/proto.h"
#include "inventory/sysfs.h"

/* Peers that asked recently, for the rate limit; more are forgotten oldest first. */
#define MAX_ASKERS 64

struct fw_listener {
        struct fw_listeners *owner;
        int fd;
        struct event *accept_ev;
        struct event *deadline;
        char peer_id[64];
        char request_id[40];
};

struct fw_asker {
        char peer_id[64];
        time_t at; /* CLOCK_MONOTONIC seconds */
};

struct fw_listeners {
        struct event_base *base;
        struct fw_listener v[FIREWALL_MAX_LISTENERS];
        struct fw_asker askers[MAX_ASKERS];
};

static time_t now_sec(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return ts.tv_sec;
}

int fw_listeners_new(struct event_base *base, struct fw_listeners **ret)
{
        struct fw_listeners *l = calloc(1, sizeof(*l));

        if (!l)
                return -ENOMEM;
        l->base = base;
        for (size_t i = 0; i < ARRAY_SIZE(l->v); i++)
                l->v[i].fd = -1;
        *ret = l;
        return 0;
}

static void listener_close(struct fw_listener *e)
{
        if (e->fd < 0)
                return;
        if (e->accept_ev)
                event_free(e->accept_ev);
        if (e->deadline)
                event_free(e->deadline);
        close(e->fd);
        *e = (struct fw_listener){ .fd = -1 };
}

void fw_listeners_free(struct fw_listeners *l)
{
        if (!l)
                return;
        for (size_t i = 0; i < ARRAY_SIZE(l->v); i++)
                listener_close(&l->v[i]);
        free(l);
}

int fw_parse_port_range(const char *text, uint16_t *low, uint16_t *high)
{
        unsigned long a, b;
        char tail;

        if (sscanf(text, "%lu %lu %c", &a, &b, &tail) != 2 || a < 1 || a > b || b > 65535)
                return -EINVAL;
        *low = (uint16_t)a;
        *high = (uint16_t)b;
        return 0;
}

/* The connection the peer made is what was measured: it is closed at once. */
static void on_accept(evutil_socket_t fd, short what, void *userdata)
{
        int c = accept4(fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);

        if (c >= 0)
                close(c);
}

static void on_deadline(evutil_socket_t fd, short what, void *userdata)
{
        listener_close(userdata);
}

/* Was peer_id's last request too recent? Records this one when it was not. */
static bool is_too_soon(struct fw_listeners *l, const char *peer_id)
{
        struct fw_asker *slot = &l->askers[0];
        time_t now = now_sec();

        for (size_t i = 0; i < ARRAY_SIZE(l->askers); i++) {
                struct fw_asker *a = &l->askers[i];

                if (strcmp(a->peer_id, peer_id) == 0) {
                        if (now - a->at < FIREWALL_PEER_MIN_GAP_SEC)
                                return true;
                        slot = a;
                        break;
                }
                if (a->at < slot->at)
                        slot = a;
        }
        snprintf(slot->peer_id, sizeof(slot->peer_id), "%s", peer_id);
        slot->at = now;
        return false;
}

static int bind_in_range(uint16_t low, uint16_t high, uint16_t *port)
{
        for (int attempt = 0; attempt < 16; attempt++) {
                _cleanup_close_ int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
                struct sockaddr_in sa = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_ANY) };
                uint32_t pick = 0;

                if (fd < 0)
                        return -errno;
                if (getrandom(&pick, sizeof(pick), 0) != (ssize_t)sizeof(pick))
                        pick = (uint32_t)attempt;
                *port = (uint16_t)(low + pick % ((uint32_t)high - low + 1));
                sa.sin_port = htons(*port);
                if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
                        if (errno == EADDRINUSE)
                                continue;
                        return -errno;
                }
                if (listen(fd, 8) < 0)
                        return -errno;
                return TAKE_FD(fd);
        }
        return -EADDRINUSE;
}

int fw_listener_open(struct fw_listeners *l, const char *host_root, const char *peer_id,
                     const char *request_id, uint16_t *port, char *range, size_t range_size, char *why,
                     size_t why_size)
{
        struct fw_listener *e = NULL;
        struct timeval tv = { .tv_sec = FIREWALL_LISTEN_SEC };
        uint16_t low, high;
        char text[64];
        int fd;

        for (size_t i = 0; i < ARRAY_SIZE(l->v); i++)
                if (l->v[i].fd < 0 && !e)
                        e = &l->v[i];
        if (!e) {
                snprintf(why, why_size, "busy: %d firewall checks are open, the most at once",
                         FIREWALL_MAX_LISTENERS);
                return -EBUSY;
        }
        if (is_too_soon(l, peer_id)) {
                snprintf(why, why_size, "too soon: one firewall check per peer every %d s",
                         FIREWALL_PEER_MIN_GAP_SEC);
                return -EBUSY;
        }
        if (sysfs_read(host_root, text, sizeof(text), "proc/sys/net/ipv4/ip_local_port_range") < 0 ||
            fw_parse_port_range(text, &low, &high) < 0) {
                snprintf(why, why_size,
                         "cannot read two ports 1-65535 from %s/proc/sys/net/ipv4/ip_local_port_range",
                         strcmp(host_root, "/") == 0 ? "" : host_root);
                return -EINVAL;
        }
        fd = bind_in_range(low, high, port);
        if (fd < 0) {
                snprintf(why, why_size, "cannot listen on a port of %u-%u: %s", low, high, strerror(-fd));
                return fd;
        }
        e->fd = fd;
        e->owner = l;
        e->accept_ev = event_new(l->base, fd, EV_READ | EV_PERSIST, on_accept, e);
        e->deadline = evtimer_new(l->base, on_deadline, e);
        snprintf(e->peer_id, sizeof(e->peer_id), "%s", peer_id);
        snprintf(e->request_id, sizeof(e->request_id), "%s", request_id);
        if (!e->accept_ev || !e->deadline || event_add(e->accept_ev, NULL) < 0 ||
            evtimer_add(e->deadline, &tv) < 0) {
                listener_close(e);
                snprintf(why, why_size, "out of memory");
                return -ENOMEM;
        }
        snprintf(range, range_size, "%u-%u", low, high);
        return 0;
}

void fw_listener_close(struct fw_listeners *l, const char *peer_id, const char *request_id)
{
        for (size_t i = 0; i < ARRAY_SIZE(l->v); i++)
                if (l->v[i].fd >= 0 && strcmp(l->v[i].peer_id, peer_id) == 0 &&
                    strcmp(l->v[i].request_id, request_id) == 0)
                        listener_close(&l->v[i]);
}

void fw_listener_forget(struct fw_listeners *l, const char *peer_id)
{
        for (size_t i = 0; i < ARRAY_SIZE(l->v); i++)
                if (l->v[i].fd >= 0 && strcmp(l->v[i].peer_id, peer_id) == 0)
                        listener_close(&l->v[i]);
        for (size_t i = 0; i < ARRAY_SIZE(l->askers); i++)
                if (strcmp(l->askers[i].peer_id, peer_id) == 0)
                        l->askers[i] = (struct fw_asker){ .at = 0 };
}
