#include "firewall_connect.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

void fw_attempt_stop(struct fw_attempt *a)
{
        if (a->ev)
                event_free(a->ev);
        if (a->fd >= 0)
                close(a->fd);
        a->ev = NULL;
        a->fd = -1;
}

static void finish(struct fw_attempt *a, const char *outcome, int err)
{
        fw_attempt_stop(a);
        a->outcome = outcome;
        if (err)
                snprintf(a->detail, sizeof(a->detail), "%s", strerror(err));
        a->done(a, a->userdata);
}

static void on_ready(evutil_socket_t fd, short what, void *userdata)
{
        struct fw_attempt *a = userdata;
        socklen_t len = sizeof(int);
        int err = 0;

        if (what & EV_TIMEOUT) {
                finish(a, "dropped", 0);
                return;
        }
        if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) < 0)
                err = errno;
        finish(a, err ? "refused" : "open", err);
}

/* A connect that could not start is reported from the loop, as every other outcome is. */
static void on_failed_start(evutil_socket_t fd, short what, void *userdata)
{
        struct fw_attempt *a = userdata;

        if (a->ev)
                event_free(a->ev);
        a->ev = NULL;
        a->outcome = "refused";
        a->done(a, a->userdata);
}

int fw_attempt_start(struct event_base *base, struct fw_attempt *a, fw_attempt_fn done, void *userdata)
{
        struct sockaddr_in local = { .sin_family = AF_INET }, remote = { .sin_family = AF_INET };
        struct timeval tv = { .tv_sec = FIREWALL_CONNECT_SEC };
        int err = 0;

        a->done = done;
        a->userdata = userdata;
        a->outcome = NULL;
        a->detail[0] = '\0';
        a->fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        remote.sin_port = htons(a->port);
        if (a->fd < 0)
                err = errno;
        else if (inet_pton(AF_INET, a->local, &local.sin_addr) != 1 ||
                 inet_pton(AF_INET, a->remote, &remote.sin_addr) != 1)
                err = EINVAL;
        else {
                /* The source address picks the netdev on a subnet per cable; SO_BINDTODEVICE makes
                 * sure of it where sparkd may use it (CAP_NET_RAW), and is not needed otherwise. */
                (void)setsockopt(a->fd, SOL_SOCKET, SO_BINDTODEVICE, a->iface, (socklen_t)strlen(a->iface));
                if (bind(a->fd, (struct sockaddr *)&local, sizeof(local)) < 0 ||
                    (connect(a->fd, (struct sockaddr *)&remote, sizeof(remote)) < 0 && errno != EINPROGRESS))
                        err = errno;
        }
        if (err) {
                snprintf(a->detail, sizeof(a->detail), "%s", strerror(err));
                if (a->fd >= 0)
                        close(a->fd);
                a->fd = -1;
                a->ev = evtimer_new(base, on_failed_start, a);
                if (!a->ev)
                        return -ENOMEM;
                event_active(a->ev, EV_TIMEOUT, 0);
                return 0;
        }
        a->ev = event_new(base, a->fd, EV_WRITE, on_ready, a);
        if (!a->ev || event_add(a->ev, &tv) < 0) {
                fw_attempt_stop(a);
                return -ENOMEM;
        }
        return 0;
}
