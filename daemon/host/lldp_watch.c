#include "lldp_watch.h"

#include <errno.h>
#include <fcntl.h>
#include <lldp-const.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "common/macro.h"
#include "daemon/base/log.h"
#include "lldpctl_lib.h"
#include "path_watch.h"

#define BACKOFF_FIRST_SEC 1
#define BACKOFF_MAX_SEC   10
/* After the socket appears: lldpd binds before it listens, so a refusal then is retried. */
#define RETRIES_AFTER_APPEARING 4
/* Where the socket's folder cannot be watched: a look this often while lldpd is absent. */
#define ABSENT_POLL_SEC 60
/* lldpd notifies neighbour changes but not a new hostname or a new interface: a backstop. */
#define REFRESH_SEC 30
/* Changes come in bursts (a cable moved: one deleted, one added); one read after them. */
#define COALESCE_USEC 100000

struct lldp_link {
        struct lldp_watch *w;
        int fd;
        lldpctl_conn_t *conn;
        struct event *readable;
        struct event *writable;
        bool is_watching;
};

struct lldp_watch {
        struct event_base *base;
        char *path;
        struct lldp_link query;
        struct lldp_link notify;
        struct lldp_table table;
        struct lldp_table pending;
        lldpctl_atom_t *chassis;
        lldpctl_atom_t *interfaces;
        size_t interfaces_done;
        bool is_querying;
        bool want_query;
        struct event *retry_timer;
        struct event *query_timer;
        unsigned backoff_sec;
        unsigned retries_left;      /* of an absent lldpd, since its socket appeared */
        struct path_watch *appears; /* the socket being made; NULL: the folder cannot be watched */
        void (*on_change)(void *userdata);
        void *change_userdata;
};

/* liblldpctl, once loaded (lldpctl_lib.h): set before any connection is made. */
static const struct lldpctl_lib *ctl;

static void watch_fail(struct lldp_watch *w, enum lldp_status status, const char *fmt, ...) _printf_(3, 4);

static ssize_t link_send(lldpctl_conn_t *conn, const uint8_t *data, size_t length, void *userdata)
{
        struct lldp_link *l = userdata;
        ssize_t n = send(l->fd, data, length, MSG_NOSIGNAL);

        if (n >= 0)
                return n;
        if (errno == EAGAIN || errno == EINTR) {
                event_add(l->writable, NULL);
                return LLDPCTL_ERR_WOULDBLOCK;
        }
        return LLDPCTL_ERR_CALLBACK_FAILURE;
}

static ssize_t link_recv(lldpctl_conn_t *conn, const uint8_t *data, size_t length, void *userdata)
{
        struct lldp_link *l = userdata;
        ssize_t n = read(l->fd, (void *)data, length);

        if (n > 0)
                return n;
        if (n == 0)
                return LLDPCTL_ERR_EOF;
        if (errno == EAGAIN || errno == EINTR)
                return LLDPCTL_ERR_WOULDBLOCK;
        return LLDPCTL_ERR_CALLBACK_FAILURE;
}

static void link_close(struct lldp_link *l)
{
        if (l->readable)
                event_free(l->readable);
        if (l->writable)
                event_free(l->writable);
        if (l->conn)
                ctl->release(l->conn);
        if (l->fd >= 0)
                close(l->fd);
        *l = (struct lldp_link){ .w = l->w, .fd = -1 };
}

static void query_reset(struct lldp_watch *w)
{
        /* Atoms exist only once the library is loaded. */
        if (w->chassis)
                ctl->atom_dec_ref(w->chassis);
        if (w->interfaces)
                ctl->atom_dec_ref(w->interfaces);
        w->chassis = w->interfaces = NULL;
        w->interfaces_done = 0;
        w->is_querying = false;
        lldp_table_clear(&w->pending);
}

static void watch_publish(struct lldp_watch *w, struct lldp_table *next)
{
        char was[200], now[200], detail[300];

        if (lldp_table_equal(&w->table, next)) {
                lldp_table_clear(next);
                return;
        }
        lldp_table_status(&w->table, was, sizeof(was));
        lldp_table_status(next, now, sizeof(now));
        lldp_table_detail(next, detail, sizeof(detail));
        if (strcmp(was, now) != 0 || !w->table.has_chassis)
                log_info("lldpd at %s: %s", w->path, detail);
        lldp_table_clear(&w->table);
        w->table = *next;
        *next = (struct lldp_table){ 0 };
        if (w->on_change)
                w->on_change(w->change_userdata);
}

static void watch_disconnect(struct lldp_watch *w)
{
        query_reset(w);
        link_close(&w->query);
        link_close(&w->notify);
        if (w->query_timer)
                evtimer_del(w->query_timer);
}

static void watch_schedule_retry(struct lldp_watch *w)
{
        struct timeval tv = { .tv_sec = w->backoff_sec };

        evtimer_add(w->retry_timer, &tv);
        w->backoff_sec = w->backoff_sec * 2 > BACKOFF_MAX_SEC ? BACKOFF_MAX_SEC : w->backoff_sec * 2;
}

static void watch_fail(struct lldp_watch *w, enum lldp_status status, const char *fmt, ...)
{
        struct lldp_table next = { .status = status };
        va_list ap;

        va_start(ap, fmt);
        vsnprintf(next.error, sizeof(next.error), fmt, ap);
        va_end(ap);
        /* One sentence whatever ended it, so a change of words is no change of the table. */
        if (status == LLDP_ABSENT)
                snprintf(next.error, sizeof(next.error), "nothing answers on %s", w->path);
        watch_disconnect(w);
        watch_publish(w, &next);
        /* Not installed: looked for again when lldpd's socket appears, and every minute (a
         * socket there already is no sign of the library). */
        if (status == LLDP_NOT_INSTALLED) {
                evtimer_add(w->retry_timer, &(struct timeval){ .tv_sec = ABSENT_POLL_SEC });
                return;
        }
        /* An absent lldpd is waited for without waking: its socket appearing is the news. */
        if (status == LLDP_ABSENT && w->appears) {
                if (w->retries_left) {
                        w->retries_left--;
                        watch_schedule_retry(w);
                }
                return;
        }
        if (status == LLDP_ABSENT)
                evtimer_add(w->retry_timer, &(struct timeval){ .tv_sec = ABSENT_POLL_SEC });
        else
                watch_schedule_retry(w);
}

/* A failed call of liblldpctl: wait for the socket, or give the connection up. */
static bool link_would_block(struct lldp_link *l, const char *what)
{
        lldpctl_error_t e = ctl->last_error(l->conn);

        if (e == LLDPCTL_ERR_WOULDBLOCK)
                return true;
        if (e == LLDPCTL_ERR_EOF)
                watch_fail(l->w, LLDP_ABSENT, "lldpd closed the connection");
        else
                watch_fail(l->w, LLDP_ERROR, "%s: %s", what, ctl->strerror(e));
        return false;
}

static void copy_str(char *dst, size_t size, lldpctl_atom_t *atom, lldpctl_key_t key)
{
        const char *s = ctl->atom_get_str(atom, key);

        snprintf(dst, size, "%s", s ? s : "");
}

static int table_add_neighbour(struct lldp_table *t, const char *ifname, lldpctl_atom_t *port)
{
        struct lldp_raw_neighbour raw = { .ifname = ifname };
        struct lldp_neighbour *v;
        lldpctl_atom_t *chassis;

        if (t->n >= LLDP_MAX_NEIGHBOURS)
                return 0;
        v = realloc(t->v, (t->n + 1) * sizeof(*v));
        if (!v)
                return -ENOMEM;
        t->v = v;
        raw.port_id = ctl->atom_get_str(port, lldpctl_k_port_id);
        raw.port_id_subtype = ctl->atom_get_str(port, lldpctl_k_port_id_subtype);
        raw.port_descr = ctl->atom_get_str(port, lldpctl_k_port_descr);
        raw.mau_type = (int)ctl->atom_get_int(port, lldpctl_k_port_dot3_mautype);
        chassis = ctl->atom_get(port, lldpctl_k_port_chassis);
        if (chassis) {
                raw.chassis_id = ctl->atom_get_str(chassis, lldpctl_k_chassis_id);
                raw.chassis_id_subtype = ctl->atom_get_str(chassis, lldpctl_k_chassis_id_subtype);
                raw.sysname = ctl->atom_get_str(chassis, lldpctl_k_chassis_name);
                raw.is_bridge = ctl->atom_get_int(chassis, lldpctl_k_chassis_cap_enabled) & LLDP_CAP_BRIDGE;
        }
        /* The strings live in the atoms: cleaned and copied before the chassis goes. */
        lldp_neighbour_from_raw(&raw, &v[t->n++]);
        if (chassis)
                ctl->atom_dec_ref(chassis);
        return 0;
}

static int table_add_port(struct lldp_table *t, const char *ifname, lldpctl_atom_t *port)
{
        lldpctl_atom_t *neighbours = ctl->atom_get(port, lldpctl_k_port_neighbors), *nb;
        int r = 0;

        if (!neighbours)
                return 0;
        for (lldpctl_atom_iter_t *it = ctl->atom_iter(neighbours); it && r == 0;
             it = ctl->atom_iter_next(neighbours, it)) {
                nb = ctl->atom_iter_value(neighbours, it);
                if (!nb)
                        break;
                r = table_add_neighbour(t, ifname, nb);
                ctl->atom_dec_ref(nb);
        }
        ctl->atom_dec_ref(neighbours);
        return r;
}

static int neighbour_compare(const void *a, const void *b)
{
        const struct lldp_neighbour *x = a, *y = b;
        int r = strcmp(x->ifname, y->ifname);

        if (r == 0)
                r = strcmp(x->chassis_id, y->chassis_id);
        return r ? r : strcmp(x->port_id, y->port_id);
}

/* Reads the next interface's port; false when it has to wait for lldpd. */
static bool query_next_interface(struct lldp_watch *w, bool *is_done)
{
        size_t k = 0;

        *is_done = true;
        for (lldpctl_atom_iter_t *it = ctl->atom_iter(w->interfaces); it;
             it = ctl->atom_iter_next(w->interfaces, it), k++) {
                lldpctl_atom_t *iface, *port;
                char ifname[IF_NAMESIZE];
                int r;

                if (k < w->interfaces_done)
                        continue;
                iface = ctl->atom_iter_value(w->interfaces, it);
                copy_str(ifname, sizeof(ifname), iface, lldpctl_k_interface_name);
                port = ctl->get_port(iface);
                ctl->atom_dec_ref(iface);
                if (!port) {
                        *is_done = false;
                        (void)link_would_block(&w->query, "reading a port");
                        return false;
                }
                r = table_add_port(&w->pending, ifname, port);
                ctl->atom_dec_ref(port);
                if (r < 0) {
                        watch_fail(w, LLDP_ERROR, "reading the neighbours of %s: %s", ifname, strerror(-r));
                        *is_done = false;
                        return false;
                }
                w->interfaces_done++;
        }
        return true;
}

/* Runs the table read as far as lldpd's answers allow; called again when the socket is ready. */
static void query_step(struct lldp_watch *w)
{
        bool is_done;

        if (!w->is_querying)
                return;
        if (!w->chassis) {
                w->chassis = ctl->get_local_chassis(w->query.conn);
                if (!w->chassis) {
                        (void)link_would_block(&w->query, "reading the local chassis");
                        return;
                }
                lldp_table_set_chassis(&w->pending, ctl->atom_get_str(w->chassis, lldpctl_k_chassis_id),
                                       ctl->atom_get_str(w->chassis, lldpctl_k_chassis_name));
        }
        if (!w->interfaces) {
                w->interfaces = ctl->get_interfaces(w->query.conn);
                if (!w->interfaces) {
                        (void)link_would_block(&w->query, "listing the interfaces");
                        return;
                }
        }
        if (!query_next_interface(w, &is_done) || !is_done)
                return;
        {
                struct lldp_table next = w->pending;

                w->pending = (struct lldp_table){ 0 };
                next.status = LLDP_RUNNING;
                if (next.n)
                        qsort(next.v, next.n, sizeof(*next.v), neighbour_compare);
                query_reset(w);
                w->backoff_sec = BACKOFF_FIRST_SEC;
                watch_publish(w, &next);
        }
        if (w->want_query) {
                struct timeval tv = { .tv_usec = COALESCE_USEC };

                evtimer_add(w->query_timer, &tv);
        }
}

static void query_start(struct lldp_watch *w)
{
        struct timeval tv = { .tv_sec = REFRESH_SEC };

        if (!w->query.conn)
                return;
        if (w->is_querying) {
                w->want_query = true;
                return;
        }
        w->want_query = false;
        w->is_querying = true;
        evtimer_add(w->query_timer, &tv);
        query_step(w);
}

static void on_query_timer(evutil_socket_t fd, short what, void *userdata)
{
        query_start(userdata);
}

static void on_neighbour_change(lldpctl_change_t type, lldpctl_atom_t *interface, lldpctl_atom_t *neighbour,
                                void *userdata)
{
        struct lldp_watch *w = userdata;
        struct timeval tv = { .tv_usec = COALESCE_USEC };

        evtimer_add(w->query_timer, &tv);
}

static void notify_step(struct lldp_watch *w)
{
        struct lldp_link *l = &w->notify;

        if (!l->is_watching) {
                if (ctl->watch_callback2(l->conn, on_neighbour_change, w) < 0) {
                        (void)link_would_block(l, "subscribing to neighbour changes");
                        return;
                }
                l->is_watching = true;
                return;
        }
        for (;;) {
                uint8_t buf[4096];
                ssize_t n = read(l->fd, buf, sizeof(buf));

                if (n == 0) {
                        watch_fail(w, LLDP_ABSENT, "lldpd closed the connection");
                        return;
                }
                if (n < 0) {
                        if (errno != EAGAIN && errno != EINTR)
                                watch_fail(w, LLDP_ERROR, "reading lldpd's notifications: %m");
                        return;
                }
                if (ctl->recv(l->conn, buf, (size_t)n) < 0) {
                        watch_fail(w, LLDP_ERROR, "lldpd's notification: %s",
                                   ctl->strerror(ctl->last_error(l->conn)));
                        return;
                }
        }
}

static void on_link_ready(evutil_socket_t fd, short what, void *userdata)
{
        struct lldp_link *l = userdata;

        if (l == &l->w->notify)
                notify_step(l->w);
        else
                query_step(l->w);
}

static int link_open(struct lldp_watch *w, struct lldp_link *l)
{
        struct sockaddr_un sa = { .sun_family = AF_UNIX };

        if (strlen(w->path) >= sizeof(sa.sun_path))
                return -ENAMETOOLONG;
        memcpy(sa.sun_path, w->path, strlen(w->path));
        l->w = w;
        l->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        if (l->fd < 0)
                return -errno;
        /* A local socket's connect does not wait: it is there and accepting, or refused. */
        if (connect(l->fd, (struct sockaddr *)&sa, sizeof(sa)) < 0)
                return -errno;
        l->conn = ctl->new_name(w->path, link_send, link_recv, l);
        l->readable = event_new(w->base, l->fd, EV_READ | EV_PERSIST, on_link_ready, l);
        l->writable = event_new(w->base, l->fd, EV_WRITE, on_link_ready, l);
        if (!l->conn || !l->readable || !l->writable)
                return -ENOMEM;
        return event_add(l->readable, NULL) < 0 ? -ENOMEM : 0;
}

static void watch_connect(struct lldp_watch *w)
{
        char why[160];
        int r = lldpctl_lib_load(&ctl, why, sizeof(why));

        if (r < 0) {
                watch_fail(w, LLDP_NOT_INSTALLED, "%s", why);
                return;
        }
        r = link_open(w, &w->query);

        if (r >= 0)
                r = link_open(w, &w->notify);
        if (r == -ENOENT || r == -ECONNREFUSED) {
                watch_fail(w, LLDP_ABSENT, "no lldpd");
                return;
        }
        if (r < 0) {
                watch_fail(w, LLDP_ERROR, "cannot connect to %s: %s", w->path, strerror(-r));
                return;
        }
        notify_step(w);
        query_start(w);
}

static void on_retry_timer(evutil_socket_t fd, short what, void *userdata)
{
        watch_connect(userdata);
}

static void on_socket_appeared(void *userdata)
{
        struct lldp_watch *w = userdata;

        if (w->query.conn)
                return;
        evtimer_del(w->retry_timer);
        w->backoff_sec = BACKOFF_FIRST_SEC;
        w->retries_left = RETRIES_AFTER_APPEARING;
        watch_connect(w);
}

int lldp_watch_new(struct event_base *base, struct lldp_watch **ret)
{
        struct lldp_watch *w = calloc(1, sizeof(*w));

        if (!w)
                return -ENOMEM;
        w->base = base;
        w->query = (struct lldp_link){ .w = w, .fd = -1 };
        w->notify = (struct lldp_link){ .w = w, .fd = -1 };
        w->backoff_sec = BACKOFF_FIRST_SEC;
        w->table.status = LLDP_ABSENT;
        w->retry_timer = evtimer_new(base, on_retry_timer, w);
        w->query_timer = evtimer_new(base, on_query_timer, w);
        if (!w->retry_timer || !w->query_timer) {
                lldp_watch_free(w);
                return -ENOMEM;
        }
        *ret = w;
        return 0;
}

void lldp_watch_free(struct lldp_watch *w)
{
        if (!w)
                return;
        watch_disconnect(w);
        path_watch_free(w->appears);
        if (w->retry_timer)
                event_free(w->retry_timer);
        if (w->query_timer)
                event_free(w->query_timer);
        lldp_table_clear(&w->table);
        free(w->path);
        free(w);
}

int lldp_watch_configure(struct lldp_watch *w, const char *socket_path)
{
        char *path;
        int r;

        if (w->path && strcmp(w->path, socket_path) == 0)
                return 0;
        path = strdup(socket_path);
        if (!path)
                return -ENOMEM;
        free(w->path);
        w->path = path;
        path_watch_free(w->appears);
        w->appears = NULL;
        r = path_watch_new(w->base, path, on_socket_appeared, w, &w->appears);
        if (r < 0)
                log_notice("lldpd's socket %s: cannot watch its folder (%s); while lldpd is absent, "
                           "looking every %d s",
                           path, strerror(-r), ABSENT_POLL_SEC);
        watch_disconnect(w);
        evtimer_del(w->retry_timer);
        w->backoff_sec = BACKOFF_FIRST_SEC;
        watch_connect(w);
        return 0;
}

void lldp_watch_refresh(struct lldp_watch *w)
{
        struct timeval tv = { .tv_usec = COALESCE_USEC };

        if (w->query.conn)
                evtimer_add(w->query_timer, &tv);
}

const struct lldp_table *lldp_watch_table(struct lldp_watch *w)
{
        return &w->table;
}

void lldp_watch_set_change_hook(struct lldp_watch *w, void (*fn)(void *userdata), void *userdata)
{
        w->on_change = fn;
        w->change_userdata = userdata;
}
