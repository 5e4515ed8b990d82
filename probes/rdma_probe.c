/*
 * sparkd-probe-rdma: RDMA WRITE bandwidth and latency between two nodes over RoCE, speaking
 * sparkd's probe contract (probe_common.h), on both twins of the fabric port at once.
 *
 * The server listens through RDMA CM on each rail's address and serves one client session; the
 * client connects --qps RC queue pairs per rail, writes for the duration (rdma_bw.c), asks the
 * server to write back for as long and report what it moved, then runs the ping-pong
 * (rdma_lat.c). Devices and GIDs come from the fabric inventory (rdma_rails.c over daemon/rdma.c),
 * connections from rdma_cm_setup.c, verbs resources from rdma_verbs_res.c, figures and JSON from
 * rdma_report.c.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "probe_common.h"
#include "rdma_session.h"

#define ERR_MAX 512

static const char *current_phase = "setup";

static void phase(const char *p)
{
        current_phase = p;
        probe_phase(p);
}

static int fail(bool unavailable, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail(bool unavailable, const char *fmt, ...)
{
        char msg[ERR_MAX];
        json_object *r;
        va_list ap;

        va_start(ap, fmt);
        vsnprintf(msg, sizeof(msg), fmt, ap);
        va_end(ap);
        r = probe_result_error("rdma", current_phase, msg);
        if (unavailable)
                json_object_object_add(r, "unavailable", json_object_new_boolean(true));
        probe_emit(probe_result_line(r));
        return 1;
}

/* ---- human output: a table like perftest's ---- */

static void human_result(json_object *r)
{
        json_object *dirs = NULL, *lat = NULL, *rails = NULL;

        json_object_object_get_ex(r, "directions", &dirs);
        json_object_object_get_ex(r, "rails", &rails);
        if (dirs && json_object_array_length(dirs) > 0) {
                printf("%-16s %-16s %4s %9s", "rail", "netdev", "qps", "GID");
                for (size_t d = 0; d < json_object_array_length(dirs); d++)
                        printf(" %13s", probe_json_text(json_object_array_get_idx(dirs, d), "direction"));
                printf("\n");
                for (size_t i = 0; rails && i < json_object_array_length(rails); i++) {
                        json_object *rail = json_object_array_get_idx(rails, i);

                        printf("%-16s %-16s %4.0f %9.0f", probe_json_text(rail, "name"),
                               probe_json_text(rail, "netdev"), probe_json_number(r, "qps"),
                               probe_json_number(rail, "gid_index"));
                        for (size_t d = 0; d < json_object_array_length(dirs); d++) {
                                json_object *per = NULL, *x;

                                json_object_object_get_ex(json_object_array_get_idx(dirs, d), "rails", &per);
                                x = per && i < json_object_array_length(per)
                                            ? json_object_array_get_idx(per, i)
                                            : NULL;
                                printf(" %8.2f Gb/s", x ? probe_json_number(x, "gbps") : 0);
                        }
                        printf("\n");
                }
                printf("%-16s %-16s %4s %9s", "port", "", "", "");
                for (size_t d = 0; d < json_object_array_length(dirs); d++)
                        printf(" %8.2f Gb/s", probe_json_number(json_object_array_get_idx(dirs, d), "gbps"));
                printf("\n%.0f-byte RDMA WRITEs", probe_json_number(r, "size"));
                if (probe_json_number(r, "expected_gbps") > 0)
                        printf("; the port's payload rate at its speed and MTU is %.1f Gb/s",
                               probe_json_number(r, "expected_gbps"));
                printf("\n");
        }
        if (json_object_object_get_ex(r, "latency", &lat) && lat)
                printf("latency, %.0f bytes x %.0f: typical %.2f us, min %.2f, avg %.2f, p99 %.2f, p99.9 "
                       "%.2f, "
                       "max %.2f\n",
                       probe_json_number(lat, "size"), probe_json_number(lat, "iterations"),
                       probe_json_number(lat, "typical_us"), probe_json_number(lat, "min_us"),
                       probe_json_number(lat, "avg_us"), probe_json_number(lat, "p99_us"),
                       probe_json_number(lat, "p99_9_us"), probe_json_number(lat, "max_us"));
        if (json_object_object_get_ex(r, "note", &lat) && lat)
                printf("note: %s\n", json_object_get_string(lat));
}

static void human(json_object *line)
{
        json_object *r;

        if (json_object_object_get_ex(line, "result", &r)) {
                if (probe_human_failed(r))
                        return;
                if (strcmp(probe_json_text(r, "role"), "server") == 0)
                        printf("served %s (%.0f connections refused)\n", probe_json_text(r, "remote"),
                               probe_json_number(r, "refused"));
                else
                        human_result(r);
                return;
        }
        if (strcmp(probe_json_text(line, "phase"), "listening") == 0)
                printf("listening on port %.0f: %s\n", probe_json_number(line, "port"),
                       probe_json_text(line, "rails"));
        else if (strcmp(probe_json_text(line, "phase"), "running") == 0)
                printf("  %5.1f s  %8.2f Gb/s (%s)\n", probe_json_number(line, "elapsed_s"),
                       probe_json_number(line, "gbps"), probe_json_text(line, "role"));
        fflush(stdout);
}

/* ---- set-up ---- */

/* The local address the route to remote leaves from (a UDP socket's connect sends nothing). */
static int route_source(const struct in_addr *remote, struct in_addr *out)
{
        struct sockaddr_in dst = { .sin_family = AF_INET, .sin_addr = *remote, .sin_port = htons(9) }, src;
        socklen_t len = sizeof(src);
        int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0), r = 0;

        if (fd < 0)
                return -errno;
        if (connect(fd, (struct sockaddr *)&dst, sizeof(dst)) < 0 ||
            getsockname(fd, (struct sockaddr *)&src, &len) < 0)
                r = -errno;
        else
                *out = src.sin_addr;
        close(fd);
        return r;
}

static size_t page_round(size_t n)
{
        size_t page = (size_t)sysconf(_SC_PAGESIZE);

        return (n + page - 1) / page * page;
}

/* ---- the two roles ---- */

static int serve(struct rdma_session *s, json_object *result, char *err)
{
        struct rdma_rail_figures figures[RDMA_RAILS_MAX];
        char rails[512] = "";
        json_object *line = json_object_new_object();
        int r;

        phase("listening");
        if ((r = rdma_server_listen(s, err, ERR_MAX)) < 0)
                return r;
        for (size_t i = 0, used = 0; i < s->n_rails && used < sizeof(rails); i++)
                used += (size_t)snprintf(rails + used, sizeof(rails) - used, "%s%s %s/%u", i ? ", " : "",
                                         s->rails[i].rail.device, s->rails[i].rail.address,
                                         s->rails[i].listen_port);
        json_object_object_add(line, "phase", json_object_new_string("listening"));
        json_object_object_add(line, "port", json_object_new_int(s->rails[0].listen_port));
        json_object_object_add(line, "rails", json_object_new_string(rails));
        probe_emit(line);
        phase("setup");
        while (!s->rails[0].conns[0].is_established)
                if ((r = rdma_server_events(s, 100, err, ERR_MAX)) < 0)
                        return r;
        {
                struct sockaddr *peer = rdma_get_peer_addr(s->rails[0].conns[0].id);
                char text[INET6_ADDRSTRLEN] = "?";

                if (peer->sa_family == AF_INET)
                        inet_ntop(AF_INET, &((struct sockaddr_in *)peer)->sin_addr, text, sizeof(text));
                json_object_object_add(result, "remote", json_object_new_string(text));
        }
        phase("running");
        for (;;) {
                struct rdma_ctl_msg m = { .type = RDMA_CTL_REPORT };

                r = rdma_ctl_wait(s, 0, probe_deadline_left(), err, ERR_MAX);
                if (r == -ECONNRESET || (r == 0 && s->ctl_in.type == RDMA_CTL_BYE))
                        break;
                if (r < 0)
                        return r;
                switch (s->ctl_in.type) {
                case RDMA_CTL_REVERSE:
                        if (s->ctl_in.size == 0 || s->ctl_in.size > s->half) {
                                snprintf(err, ERR_MAX, "reverse writes of %llu bytes do not fit the buffers",
                                         (unsigned long long)s->ctl_in.size);
                                return -EPROTO;
                        }
                        r = rdma_bw_send(s, s->ctl_in.size, (double)s->ctl_in.a / 1000, s->ctl_in.b, figures,
                                         err, ERR_MAX);
                        if (r < 0)
                                return r;
                        for (size_t i = 0; i < s->n_rails; i++) {
                                m.bytes[i] = figures[i].bytes;
                                m.writes[i] = figures[i].writes;
                                m.ns[i] = (uint64_t)(figures[i].seconds * 1e9);
                        }
                        json_object_object_add(result, "reverse",
                                               rdma_direction_json("reverse", s->rails[0].rail.address,
                                                                   "client", figures, s->n_rails));
                        if ((r = rdma_ctl_send(s, &m, err, ERR_MAX)) < 0)
                                return r;
                        break;
                case RDMA_CTL_LATENCY:
                        if ((r = rdma_lat_pong(s, (unsigned)s->ctl_in.a, (unsigned)s->ctl_in.b, err,
                                               ERR_MAX)) < 0)
                                return r;
                        break;
                default:
                        snprintf(err, ERR_MAX, "unknown control message %u", s->ctl_in.type);
                        return -EPROTO;
                }
        }
        json_object_object_add(result, "refused", json_object_new_int((int)s->refused));
        return 0;
}

static int run_client(struct rdma_session *s, json_object *result, const char *local, char *err)
{
        const struct rdma_options *o = s->o;
        struct rdma_rail_figures fwd[RDMA_RAILS_MAX], rev[RDMA_RAILS_MAX];
        json_object *dirs = json_object_new_array(), *line;
        double weakest = -1;
        int r;

        json_object_object_add(result, "directions", dirs);
        phase("connecting");
        if ((r = rdma_client_connect(s, err, ERR_MAX)) < 0)
                return r;
        line = json_object_new_object();
        json_object_object_add(line, "phase", json_object_new_string("connected"));
        json_object_object_add(line, "rails", json_object_new_int((int)s->n_rails));
        json_object_object_add(line, "qps", json_object_new_int((int)s->qps));
        probe_emit(line);
        phase("running");
        if (o->want_bandwidth) {
                if ((r = rdma_bw_send(s, o->size, o->duration, o->iters, fwd, err, ERR_MAX)) < 0)
                        return r;
                json_object_array_add(
                        dirs, rdma_direction_json("forward", local, o->args.remote_arg, fwd, s->n_rails));
                weakest = rdma_gbps(fwd[0].bytes + (s->n_rails > 1 ? fwd[1].bytes : 0),
                                    s->n_rails > 1 && fwd[1].seconds > fwd[0].seconds ? fwd[1].seconds
                                                                                      : fwd[0].seconds);
        }
        if (o->want_bandwidth && !o->is_one_way) {
                struct rdma_ctl_msg m = { .type = RDMA_CTL_REVERSE,
                                          .a = (uint64_t)(o->duration * 1000),
                                          .b = o->iters,
                                          .size = o->size };
                uint64_t bytes = 0;
                double seconds = 0;

                phase("reverse");
                if ((r = rdma_ctl_send(s, &m, err, ERR_MAX)) < 0 ||
                    (r = rdma_ctl_wait(s, RDMA_CTL_REPORT, probe_deadline_left(), err, ERR_MAX)) < 0)
                        return r;
                for (size_t i = 0; i < s->n_rails; i++) {
                        rev[i] = (struct rdma_rail_figures){ .rail = &s->rails[i].rail,
                                                             .qps = s->rails[i].n_conns,
                                                             .bytes = s->ctl_in.bytes[i],
                                                             .writes = s->ctl_in.writes[i],
                                                             .seconds = (double)s->ctl_in.ns[i] / 1e9 };
                        bytes += rev[i].bytes;
                        if (rev[i].seconds > seconds)
                                seconds = rev[i].seconds;
                }
                json_object_array_add(
                        dirs, rdma_direction_json("reverse", o->args.remote_arg, local, rev, s->n_rails));
                if (rdma_gbps(bytes, seconds) < weakest)
                        weakest = rdma_gbps(bytes, seconds);
        }
        if (weakest >= 0)
                json_object_object_add(result, "gbps", probe_json_double(weakest, 3));
        if (o->want_latency) {
                struct rdma_ctl_msg m = { .type = RDMA_CTL_LATENCY, .a = o->lat_iters, .b = o->lat_size };
                struct rdma_latency lat;
                double *rtt = calloc(o->lat_iters, sizeof(*rtt));

                phase("latency");
                if (!rtt)
                        return -ENOMEM;
                r = rdma_ctl_send(s, &m, err, ERR_MAX);
                if (r == 0)
                        r = rdma_lat_ping(s, o->lat_iters, o->lat_size, rtt, err, ERR_MAX);
                if (r == 0 && rdma_latency_compute(rtt, o->lat_iters, &lat) == 0) {
                        json_object_object_add(result, "latency",
                                               rdma_latency_json(&lat, o->lat_size, o->lat_iters));
                        json_object_object_add(result, "typical_us", probe_json_double(lat.typical_us, 3));
                }
                free(rtt);
                if (r < 0)
                        return r;
        }
        {
                struct rdma_ctl_msg bye = { .type = RDMA_CTL_BYE };

                (void)rdma_ctl_send(s, &bye, err, ERR_MAX);
                /* The send must leave before the disconnect tears the queue pair down. */
                for (int i = 0; i < 1000 && rdma_cq_poll(s, &s->rails[0], err, ERR_MAX) == 0; i++)
                        usleep(100);
        }
        return 0;
}

static const struct probe_helper rdma = { .kind = "rdma", .human = human, .cmdline = &rdma_cmdline };

int main(int argc, char **argv)
{
        struct rdma_options o = rdma_options_defaults;
        struct rdma_session s = { .o = &o };
        struct rdma_inventory inv = { 0 };
        struct rdma_rail chosen[RDMA_RAILS_MAX];
        struct in_addr local_addr;
        char err[ERR_MAX], note[256], local[INET_ADDRSTRLEN];
        json_object *result;
        size_t n_rails = 0;
        bool all_rails;
        int r;

        r = probe_start(&rdma, argc, argv, &o.args, &o, NULL);
        if (r)
                return r;
        phase("setup");
        if (probe_token_from_env(&s.token) < 0 || (s.token && strlen(s.token) != RDMA_TOKEN_LEN))
                return fail(false, PROBE_TOKEN_ENV " must be %d printable characters", RDMA_TOKEN_LEN);
        local_addr = o.args.bind;
        if (!o.args.has_bind && (r = route_source(&o.args.remote, &local_addr)) < 0)
                return fail(false, "no route to %s: %s", o.args.remote_arg, strerror(-r));
        inet_ntop(AF_INET, &local_addr, local, sizeof(local));
        if (rdma_scan("/sys", true, &inv) < 0)
                return fail(false, "cannot read the RDMA inventory: out of memory");
        if (o.twins && (r = rdma_twins_apply(&inv, o.twins, err, sizeof(err))) < 0) {
                rdma_inventory_free(&inv);
                return fail(false, "%s", err);
        }
        r = rdma_rails_choose(&inv, local, o.gid_index, o.max_rails, chosen, &n_rails, note, sizeof(note),
                              err, sizeof(err));
        if (r < 0) {
                rdma_inventory_free(&inv);
                /* Only a node without a usable device falls back; a GID index that is not the
                 * address's is a mistake to fix. */
                return fail(r == -ENODEV, "%s", err);
        }
        for (size_t i = 0; i < n_rails; i++)
                s.rails[i].rail = chosen[i];
        all_rails = note[0] == '\0' && o.max_rails == RDMA_RAILS_MAX;
        rdma_inventory_free(&inv);
        s.n_rails = n_rails;
        s.qps = o.args.is_server ? RDMA_QPS_MAX : o.qps;
        s.half = page_round(o.size > o.lat_size ? o.size : o.lat_size);
        if (!o.args.is_server &&
            (r = rdma_memlock_check((uint64_t)n_rails * o.qps * 2 * s.half + 4096, err, sizeof(err))) < 0)
                return fail(false, "%s", err);

        result = json_object_new_object();
        json_object_object_add(result, "kind", json_object_new_string("rdma"));
        json_object_object_add(result, "ok", json_object_new_boolean(true));
        json_object_object_add(result, "role",
                               json_object_new_string(o.args.is_server ? "server" : "client"));
        json_object_object_add(result, "local", json_object_new_string(local));
        if (!o.args.is_server) {
                json_object_object_add(result, "remote", json_object_new_string(o.args.remote_arg));
                json_object_object_add(result, "qps", json_object_new_int((int)o.qps));
                json_object_object_add(result, "size", json_object_new_int64((int64_t)o.size));
                json_object_object_add(result, "tx_depth", json_object_new_int((int)o.tx_depth));
                json_object_object_add(result, "cq_mod", json_object_new_int((int)o.cq_mod));
        }
        if (note[0])
                json_object_object_add(result, "note", json_object_new_string(note));
        r = o.args.is_server ? serve(&s, result, err) : run_client(&s, result, local, err);
        /* The client pairs its rails with the server's: fewer when the server has no twin. */
        json_object_object_add(result, "rails", rdma_rails_json(chosen, s.n_rails));
        /* The port's payload rate is the expectation only when the probe ran on all of the port. */
        if (!o.args.is_server && all_rails && s.n_rails == n_rails)
                json_object_object_add(result, "expected_gbps",
                                       probe_json_double(rdma_port_expected_gbps(chosen, n_rails), 1));
        rdma_session_close(&s);
        if (r < 0) {
                json_object_put(result);
                /* RDMA CM without its kernel module is a node without usable RDMA, not a fault. */
                if (strstr(err, "rdma_create_event_channel"))
                        return fail(true, "RDMA CM cannot be opened (is rdma_ucm loaded?): %s", err);
                return fail(false, "%s", err);
        }
        probe_emit(probe_result_line(result));
        return 0;
}
