/*
 * The control socket as a client drives it: the input is written to a fresh connection to a real
 * api_server on a UNIX socket (in a directory of the target's own, nothing leaves this machine),
 * the client half-closes, and the loop runs until the server has answered and closed. That covers
 * api.c's framing (partial, oversize and last lines without newline), the JSON-RPC checks, the
 * checks of params against what each method declares, method dispatch and access (a needs_admin
 * method; the fuzzer runs as whoever it is), answers given now and from a timer, notifications,
 * subscribers and events published to them.
 */
#include <errno.h>
#include <event2/event.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "common/proto.h"
#include "daemon/base/api.h"
#include "daemon/base/log.h"
#include "fuzz.h"

static struct event_base *base;
static struct api_server *server;
static struct sockaddr_un addr;
static char dir[256];

static int method_echo(struct api_request *req, json_object *params, void *userdata)
{
        api_request_notify(req, "echo-progress", json_object_new_object());
        api_request_reply(req, params ? json_object_get(params) : json_object_new_object());
        return 0;
}

static void on_later(evutil_socket_t fd, short what, void *userdata)
{
        struct api_request *req = userdata;

        api_request_reply(req, json_object_new_boolean(api_request_is_orphan(req)));
}

/* Answers from the loop, after the client may have gone. */
static int method_later(struct api_request *req, json_object *params, void *userdata)
{
        struct timeval now = { 0 };

        return event_base_once(base, -1, EV_TIMEOUT, on_later, req, &now) < 0 ? -ENOMEM : 0;
}

static int method_fail(struct api_request *req, json_object *params, void *userdata)
{
        return -EIO;
}

static int method_error(struct api_request *req, json_object *params, void *userdata)
{
        api_request_reply_error(req, RPC_INVALID_PARAMS, "no", params ? json_object_get(params) : NULL);
        return 0;
}

static int method_subscribe(struct api_request *req, json_object *params, void *userdata)
{
        api_request_subscribe(req, NULL);
        api_request_reply(req, json_object_new_object());
        return 0;
}

static int check_even(json_object *value, char *expected, size_t size)
{
        if (json_object_get_int64(value) % 2 == 0)
                return 0;
        snprintf(expected, size, "an even integer");
        return -EINVAL;
}

static const char *const colours[] = { "red", "green", NULL };

/* Every kind of declaration, so the checks before dispatch are fuzzed too. */
static const struct api_param echo_params[] = {
        { .name = "s", .type = API_PARAM_STRING, .choices = colours },
        { .name = "n", .type = API_PARAM_INTEGER, .check = check_even },
        { .name = "b", .type = API_PARAM_BOOLEAN },
        { .name = "a", .type = API_PARAM_ARRAY },
        {},
};

static const struct api_param strict_params[] = {
        { .name = "id", .type = API_PARAM_STRING, .is_required = true },
        {},
};

static const struct api_method methods[] = {
        { "echo", method_echo, false, echo_params, "anything else" },
        { "strict", method_echo, false, strict_params },
        { "later", method_later, false },
        { "fail", method_fail, false },
        { "error", method_error, false, NULL, "anything" },
        { "subscribe", method_subscribe, false },
        { "reload", method_echo, true },
};

static void remove_dir(void)
{
        api_server_free(server);
        unlink(addr.sun_path);
        rmdir(dir);
}

static void setup(void)
{
        struct api_access access = { .socket_mode = 0600, .max_clients = 4, .max_clients_per_uid = 4 };

        log_set_max_level(LOG_EMERG);
        base = event_base_new();
        if (!base)
                abort();
        fuzz_tmpdir("api", dir, sizeof(dir));
        addr.sun_family = AF_UNIX;
        if ((size_t)snprintf(addr.sun_path, sizeof(addr.sun_path), "%s/s", dir) >= sizeof(addr.sun_path) ||
            api_server_new(base, addr.sun_path, -1, &access, &server) < 0 ||
            api_server_add_methods(server, methods, sizeof(methods) / sizeof(methods[0]), NULL) < 0)
                abort();
        atexit(remove_dir);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        struct timespec start, now;
        size_t sent = 0;
        bool eof = false;
        char buf[65536];
        int fd;

        if (!base)
                setup();
        fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        if (fd < 0 || connect(fd, (struct sockaddr *)&addr, sizeof(addr)) < 0)
                abort();
        /* Bounded by the clock: a server that neither answers nor closes within 5 s is a finding. */
        clock_gettime(CLOCK_MONOTONIC, &start);
        for (int round = 0; !eof; round++) {
                struct pollfd pfd = { .fd = fd, .events = POLLIN };
                ssize_t n;

                if (sent < size) {
                        n = write(fd, data + sent, size - sent);
                        if (n > 0)
                                sent += (size_t)n;
                        else if (n < 0 && errno != EAGAIN)
                                sent = size; /* the server closed on us (oversize line) */
                        if (sent == size)
                                shutdown(fd, SHUT_WR);
                } else if (round == 0) {
                        shutdown(fd, SHUT_WR);
                }
                event_base_loop(base, EVLOOP_NONBLOCK);
                if (round % 8 == 7) {
                        json_object *ev = json_object_new_object();

                        json_object_object_add(ev, "event", json_object_new_string("link-down"));
                        api_server_publish(server, ev);
                        json_object_put(ev);
                }
                while ((n = read(fd, buf, sizeof(buf))) > 0)
                        ;
                if (n == 0 || (n < 0 && errno != EAGAIN))
                        eof = true;
                clock_gettime(CLOCK_MONOTONIC, &now);
                if (now.tv_sec - start.tv_sec > 5)
                        break;
                if (!eof && sent == size)
                        (void)poll(&pfd, 1, 1);
        }
        close(fd);
        /* Let the server see the close of a subscriber and free the connection. */
        for (int i = 0; i < 4; i++)
                event_base_loop(base, EVLOOP_NONBLOCK);
        if (!eof)
                abort();
        return 0;
}
