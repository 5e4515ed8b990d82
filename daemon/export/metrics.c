#include "metrics.h"

#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/macro.h"

/* Label values escape backslash, double quote and newline, as the exposition format says. */
static void label(FILE *out, const char *value)
{
        for (const char *c = value ? value : ""; *c; c++) {
                if (*c == '\\' || *c == '"')
                        fputc('\\', out);
                if (*c == '\n') {
                        fputs("\\n", out);
                        continue;
                }
                fputc(*c, out);
        }
}

static void family(FILE *out, const char *name, const char *type, const char *help)
{
        fprintf(out, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* The peer channel's families of one sample: name, type, help, and the member of peers' JSON. */
static const struct {
        const char *name, *type, *help, *key;
} peer_scalars[] = {
        { "sparkd_peer_handshakes_total", "counter",
          "TLS handshakes of the peer channel begun, dialled or accepted, since start.", "handshakes" },
        { "sparkd_peer_sent_bytes_total", "counter",
          "Bytes of peer protocol messages (heartbeats, summaries, alives, offers, probes' messages) queued "
          "to the peers since start, before TLS.",
          "bytes_sent" },
        { "sparkd_peer_sent_bytes_last_minute", "gauge",
          "Bytes of peer protocol messages queued to the peers in the last minute.", "sent_last_minute" },
        { "sparkd_peer_budget_bytes_per_minute", "gauge",
          "What this node means to send to its peers in a minute (a base and an allowance per up peer); "
          "over it, changes that may wait do.",
          "budget_per_minute" },
        { "sparkd_peer_sends_deferred_total", "counter",
          "Times a change that may wait (probe results, the peers a node is up with) waited because the "
          "last minute's bytes were over the budget.",
          "sends_deferred" },
};

/* A family of one sample without labels. */
static void scalar(FILE *out, const char *name, const char *type, const char *help, int64_t value)
{
        family(out, name, type, help);
        fprintf(out, "%s %" PRId64 "\n", name, value);
}

static const char *str(json_object *o, const char *key)
{
        json_object *v;

        return o && json_object_object_get_ex(o, key, &v) && v ? json_object_get_string(v) : NULL;
}

static double num(json_object *o, const char *key)
{
        json_object *v;

        return o && json_object_object_get_ex(o, key, &v) && v ? json_object_get_double(v) : 0;
}

static int64_t int64_of(json_object *o, const char *key)
{
        json_object *v;

        return o && json_object_object_get_ex(o, key, &v) && v ? json_object_get_int64(v) : 0;
}

static bool flag(json_object *o, const char *key)
{
        json_object *v;

        return o && json_object_object_get_ex(o, key, &v) && v && json_object_get_boolean(v);
}

typedef double (*link_value_fn)(const struct link_state *link);

static double link_up(const struct link_state *l)
{
        return l->oper_up;
}

static double link_mtu(const struct link_state *l)
{
        return l->mtu;
}

static double link_flaps(const struct link_state *l)
{
        return (double)l->flaps;
}

static double link_corrections(const struct link_state *l)
{
        return (double)l->corrections;
}

static double link_flapping(const struct link_state *l)
{
        return l->flapping;
}

static void link_family(FILE *out, const struct link_states *links, const char *name, const char *type,
                        const char *help, link_value_fn fn)
{
        family(out, name, type, help);
        for (size_t i = 0; links && i < links->n; i++) {
                fprintf(out, "%s{iface=\"", name);
                label(out, links->v[i].name);
                fprintf(out, "\"} %.17g\n", fn(&links->v[i]));
        }
}

static const char *peer_label(json_object *p)
{
        json_object *addrs;

        if (str(p, "name"))
                return str(p, "name");
        if (str(p, "static"))
                return str(p, "static");
        if (json_object_object_get_ex(p, "addresses", &addrs) && json_object_array_length(addrs))
                return json_object_get_string(json_object_array_get_idx(addrs, 0));
        return "unknown";
}

static bool is_up(json_object *p)
{
        return str(p, "state") && strcmp(str(p, "state"), "up") == 0;
}

/* One entry per label value: a series must not appear twice in an exposition. A peer that came
 * back with a new node id (reinstalled) is listed twice under one name; the connected entry
 * wins, else the first. */
static json_object *unique_peers(json_object *list)
{
        json_object *out = json_object_new_array(), *index = json_object_new_object();

        for (size_t i = 0; list && i < json_object_array_length(list); i++) {
                json_object *p = json_object_array_get_idx(list, i), *at;

                if (!json_object_object_get_ex(index, peer_label(p), &at)) {
                        json_object_object_add(index, peer_label(p),
                                               json_object_new_int((int)json_object_array_length(out)));
                        json_object_array_add(out, json_object_get(p));
                } else if (is_up(p) && !is_up(json_object_array_get_idx(out, json_object_get_int(at)))) {
                        json_object_array_put_idx(out, json_object_get_int(at), json_object_get(p));
                }
        }
        json_object_put(index);
        return out;
}

/* latest is newest first and unique per (node id, kind); labels carry the peer's name, which
 * two node ids may share: the newest result of a (name, kind) wins. */
static json_object *unique_results(json_object *latest)
{
        json_object *out = json_object_new_array(), *seen = json_object_new_object();

        for (size_t i = 0; latest && i < json_object_array_length(latest); i++) {
                json_object *r = json_object_array_get_idx(latest, i);
                _cleanup_free_ char *key = NULL;

                if (asprintf(&key, "%s\x1f%s", str(r, "peer") ? str(r, "peer") : "",
                             str(r, "kind") ? str(r, "kind") : "") < 0) {
                        key = NULL;
                        continue;
                }
                if (json_object_object_get_ex(seen, key, NULL))
                        continue;
                json_object_object_add(seen, key, NULL);
                json_object_array_add(out, json_object_get(r));
        }
        json_object_put(seen);
        return out;
}

/* The monitoring-plugin numbers of sparkc doctor's exit code: 0 ok, 1 warn, 2 fail. */
static int doctor_level(const char *status)
{
        if (status && strcmp(status, "ok") == 0)
                return 0;
        if (status && strcmp(status, "warn") == 0)
                return 1;
        return 2;
}

static void node_state(FILE *out, const struct metrics_node_state *state)
{
        json_object *checks = NULL;

        family(out, "sparkd_doctor_check_status", "gauge",
               "Outcome of the doctor's check: 0 ok, 1 warn, 2 fail, as sparkc doctor exits.");
        if (state && state->doctor)
                json_object_object_get_ex(state->doctor, "checks", &checks);
        for (size_t i = 0; checks && i < json_object_array_length(checks); i++) {
                json_object *c = json_object_array_get_idx(checks, i);

                fprintf(out, "sparkd_doctor_check_status{check=\"");
                label(out, str(c, "id"));
                fprintf(out, "\"} %d\n", doctor_level(str(c, "status")));
        }
        if (!state)
                return;
        scalar(out, "sparkd_doctor_runs_total", "counter",
               "Times the doctor read this node's facts since sparkd started: on events, once a "
               "second while asked, and for each sparkc doctor.",
               (int64_t)state->doctor_runs);
        scalar(out, "sparkd_gid_changes_total", "counter",
               "RoCE v2 GID table changes seen on the fabric ports since sparkd started.",
               state->gid_changes);
        scalar(out, "sparkd_env_stale", "gauge",
               "1 when the GID table changed after sparkc env was last served: jobs started with "
               "that environment may fail.",
               state->env_stale);
}

static bool is_stale_initialization(json_object *r)
{
        json_object *d;

        return json_object_object_get_ex(r, "diagnosis", &d) && str(d, "verdict") &&
               strcmp(str(d, "verdict"), "stale-initialization") == 0;
}

/* One series of a result's family, labelled with its peer and kind. */
static void result_series(FILE *out, const char *name, json_object *r, int value)
{
        fprintf(out, "%s{peer=\"", name);
        label(out, str(r, "peer"));
        fprintf(out, "\",kind=\"");
        label(out, str(r, "kind"));
        fprintf(out, "\"} %d\n", value);
}

/* 1 for each latest result whose status is status, 0 for the others. */
static void status_family(FILE *out, json_object *latest, const char *name, const char *help,
                          const char *status)
{
        family(out, name, "gauge", help);
        for (size_t i = 0; latest && i < json_object_array_length(latest); i++) {
                json_object *r = json_object_array_get_idx(latest, i);

                result_series(out, name, r, str(r, "status") && strcmp(str(r, "status"), status) == 0);
        }
}

static void probe_verdicts(FILE *out, json_object *latest)
{
        status_family(out, latest, "sparkd_probe_degraded",
                      "1 when the latest probe of this kind to the peer fell short of its expectation.",
                      "degraded");
        family(out, "sparkd_probe_stale_initialization", "gauge",
               "1 when the latest bandwidth probe of this kind to the peer found a rail in the "
               "stale-initialization state.");
        for (size_t i = 0; latest && i < json_object_array_length(latest); i++) {
                json_object *r = json_object_array_get_idx(latest, i);

                if (json_object_object_get_ex(r, "diagnosis", NULL))
                        result_series(out, "sparkd_probe_stale_initialization", r,
                                      is_stale_initialization(r));
        }
}

static void port_labels(FILE *out, const char *name, const struct port_counter_sample *s)
{
        fprintf(out, "%s{device=\"", name);
        label(out, s->device);
        fprintf(out, "\",port=\"%u\",iface=\"", s->port);
        label(out, s->netdev);
        fputc('"', out);
}

typedef double (*port_value_fn)(const struct port_counter_sample *s, size_t counter);

static double port_count(const struct port_counter_sample *s, size_t counter)
{
        return (double)s->values[counter];
}

static double port_alarm(const struct port_counter_sample *s, size_t counter)
{
        return s->alarm[counter];
}

/* One series per port and error counter the kernel offers. */
static void port_error_family(FILE *out, const struct port_counter_list *counters, const char *name,
                              const char *type, const char *help, port_value_fn fn)
{
        family(out, name, type, help);
        for (size_t i = 0; counters && i < counters->n; i++)
                for (size_t c = 0; c < _PORT_COUNTER_MAX; c++) {
                        if (!counters->v[i].has[c] || port_counter_is_traffic(c))
                                continue;
                        port_labels(out, name, &counters->v[i]);
                        fprintf(out, ",counter=\"%s\"} %.17g\n", port_counter_name(c),
                                fn(&counters->v[i], c));
                }
}

static void port_counter_families(FILE *out, const struct port_counter_list *counters)
{
        static const char *const directions[] = { "rx", "tx" };
        static const enum port_counter bytes[] = { PORT_COUNTER_RX_BYTES, PORT_COUNTER_TX_BYTES };

        port_error_family(out, counters, "sparkd_port_errors_total", "counter",
                          "Error, drop and pause counters of the fabric port, as the kernel or the NIC's "
                          "driver counts "
                          "them since the driver loaded.",
                          port_count);
        family(out, "sparkd_port_bytes_total", "counter",
               "Bytes the fabric port's netdev received or sent.");
        for (size_t i = 0; counters && i < counters->n; i++)
                for (size_t k = 0; k < ARRAY_SIZE(bytes); k++) {
                        if (!counters->v[i].has[bytes[k]])
                                continue;
                        port_labels(out, "sparkd_port_bytes_total", &counters->v[i]);
                        fprintf(out, ",direction=\"%s\"} %" PRIu64 "\n", directions[k],
                                counters->v[i].values[bytes[k]]);
                }
        port_error_family(
                out, counters, "sparkd_port_errors_alarm", "gauge",
                "1 while the error counter is past its rate threshold, 2 while a fatal counter rose "
                "within the window, else 0.",
                port_alarm);
}

static char *render(const char *node, const char *version, double uptime_sec,
                    const struct link_states *links, const struct port_counter_list *counters,
                    json_object *peers, json_object *list, json_object *latest,
                    const struct metrics_node_state *state)
{
        char *text = NULL;
        size_t size = 0;
        FILE *out = open_memstream(&text, &size);

        if (!out)
                return NULL;
        family(out, "sparkd_info", "gauge", "sparkd version and node name.");
        fprintf(out, "sparkd_info{node=\"");
        label(out, node);
        fprintf(out, "\",version=\"");
        label(out, version);
        fprintf(out, "\"} 1\n");
        family(out, "sparkd_uptime_seconds", "gauge", "Seconds since sparkd started.");
        fprintf(out, "sparkd_uptime_seconds %.3f\n", uptime_sec);

        link_family(out, links, "sparkd_link_up", "gauge", "1 when the fabric link carries traffic.",
                    link_up);
        link_family(out, links, "sparkd_link_mtu_bytes", "gauge", "MTU of the fabric netdev.", link_mtu);
        link_family(out, links, "sparkd_link_flaps_total", "counter",
                    "Carrier losses of the link, kept across restarts.", link_flaps);
        link_family(out, links, "sparkd_link_corrections_total", "counter",
                    "MTU and admin-state corrections made on the link, kept across restarts.",
                    link_corrections);
        link_family(out, links, "sparkd_link_flapping", "gauge", "1 while the link is flapping.",
                    link_flapping);
        port_counter_families(out, counters);

        family(out, "sparkd_peer_up", "gauge", "1 when the peer is connected and authenticated.");
        for (size_t i = 0; list && i < json_object_array_length(list); i++) {
                json_object *p = json_object_array_get_idx(list, i);

                fprintf(out, "sparkd_peer_up{peer=\"");
                label(out, peer_label(p));
                fprintf(out, "\"} %d\n", is_up(p));
        }
        family(out, "sparkd_peer_slow", "gauge",
               "1 while the peer is up but has sent nothing for two heartbeats or more.");
        for (size_t i = 0; list && i < json_object_array_length(list); i++) {
                json_object *p = json_object_array_get_idx(list, i);

                fprintf(out, "sparkd_peer_slow{peer=\"");
                label(out, peer_label(p));
                fprintf(out, "\"} %d\n", flag(p, "slow"));
        }
        for (size_t i = 0; i < ARRAY_SIZE(peer_scalars); i++)
                scalar(out, peer_scalars[i].name, peer_scalars[i].type, peer_scalars[i].help,
                       int64_of(peers, peer_scalars[i].key));
        family(out, "sparkd_peer_mtu_mismatch", "gauge",
               "1 when the MTU differs at the two ends of the cable.");
        for (size_t i = 0; list && i < json_object_array_length(list); i++) {
                json_object *p = json_object_array_get_idx(list, i), *mtu = NULL;

                json_object_object_get_ex(p, "mtu", &mtu);
                fprintf(out, "sparkd_peer_mtu_mismatch{peer=\"");
                label(out, peer_label(p));
                fprintf(out, "\"} %d\n", flag(mtu, "mismatch"));
        }

        status_family(out, latest, "sparkd_probe_ok",
                      "1 when the latest probe of this kind to the peer was ok, 0 otherwise.", "ok");
        family(out, "sparkd_probe_tcp_bytes_per_second", "gauge",
               "Throughput of the latest tcp probe to the peer.");
        for (size_t i = 0; latest && i < json_object_array_length(latest); i++) {
                json_object *r = json_object_array_get_idx(latest, i), *m;

                if (!str(r, "kind") || strcmp(str(r, "kind"), "tcp") != 0 ||
                    !json_object_object_get_ex(r, "measured", &m))
                        continue;
                fprintf(out, "sparkd_probe_tcp_bytes_per_second{peer=\"");
                label(out, str(r, "peer"));
                fprintf(out, "\"} %.17g\n", num(m, "gbps") * 1e9 / 8);
        }
        family(out, "sparkd_probe_rtt_median_seconds", "gauge",
               "Median round trip of the latest rtt probe to the peer.");
        for (size_t i = 0; latest && i < json_object_array_length(latest); i++) {
                json_object *r = json_object_array_get_idx(latest, i), *m;

                if (!str(r, "kind") || strcmp(str(r, "kind"), "rtt") != 0 ||
                    !json_object_object_get_ex(r, "measured", &m))
                        continue;
                fprintf(out, "sparkd_probe_rtt_median_seconds{peer=\"");
                label(out, str(r, "peer"));
                fprintf(out, "\"} %.17g\n", num(m, "median_us") / 1e6);
        }
        family(out, "sparkd_probe_pathmtu_largest_payload_bytes", "gauge",
               "Largest UDP payload that crossed the path to the peer with don't-fragment, latest "
               "pathmtu probe (the interface MTU - 28 when the path carries it).");
        for (size_t i = 0; latest && i < json_object_array_length(latest); i++) {
                json_object *r = json_object_array_get_idx(latest, i), *m;

                /* A path-mtu failure measured too: its size is in the helper's result. */
                if (!str(r, "kind") || strcmp(str(r, "kind"), "pathmtu") != 0 ||
                    (!json_object_object_get_ex(r, "measured", &m) &&
                     !json_object_object_get_ex(r, "detail", &m)) ||
                    !json_object_object_get_ex(m, "largest_payload", NULL))
                        continue;
                fprintf(out, "sparkd_probe_pathmtu_largest_payload_bytes{peer=\"");
                label(out, str(r, "peer"));
                fprintf(out, "\"} %.17g\n", num(m, "largest_payload"));
        }
        family(out, "sparkd_probe_rdma_bytes_per_second", "gauge",
               "RDMA WRITE throughput of the port (both twins) in the weaker direction, latest rdma probe.");
        for (size_t i = 0; latest && i < json_object_array_length(latest); i++) {
                json_object *r = json_object_array_get_idx(latest, i), *m;

                if (!str(r, "kind") || strcmp(str(r, "kind"), "rdma") != 0 ||
                    !json_object_object_get_ex(r, "measured", &m))
                        continue;
                fprintf(out, "sparkd_probe_rdma_bytes_per_second{peer=\"");
                label(out, str(r, "peer"));
                fprintf(out, "\"} %.17g\n", num(m, "gbps") * 1e9 / 8);
        }
        family(out, "sparkd_probe_rdma_write_latency_seconds", "gauge",
               "Typical one-way RDMA WRITE latency (half the median round trip) of the latest rdma probe.");
        for (size_t i = 0; latest && i < json_object_array_length(latest); i++) {
                json_object *r = json_object_array_get_idx(latest, i), *m;

                if (!str(r, "kind") || strcmp(str(r, "kind"), "rdma") != 0 ||
                    !json_object_object_get_ex(r, "measured", &m) ||
                    !json_object_object_get_ex(m, "typical_us", NULL))
                        continue;
                fprintf(out, "sparkd_probe_rdma_write_latency_seconds{peer=\"");
                label(out, str(r, "peer"));
                fprintf(out, "\"} %.17g\n", num(m, "typical_us") / 1e6);
        }
        family(out, "sparkd_probe_nccl_busbw_bytes_per_second", "gauge",
               "NCCL all_reduce bus bandwidth at the largest size of the latest nccl probe to the peer.");
        for (size_t i = 0; latest && i < json_object_array_length(latest); i++) {
                json_object *r = json_object_array_get_idx(latest, i), *m;

                if (!str(r, "kind") || strcmp(str(r, "kind"), "nccl") != 0 ||
                    !json_object_object_get_ex(r, "measured", &m))
                        continue;
                fprintf(out, "sparkd_probe_nccl_busbw_bytes_per_second{peer=\"");
                label(out, str(r, "peer"));
                fprintf(out, "\"} %.17g\n", num(m, "busbw_gbytes") * 1e9);
        }
        family(out, "sparkd_probe_nccl_socket_fallback", "gauge",
               "1 when the latest nccl probe to the peer ran on TCP sockets although the node has RDMA.");
        for (size_t i = 0; latest && i < json_object_array_length(latest); i++) {
                json_object *r = json_object_array_get_idx(latest, i), *m, *t = NULL;

                if (!str(r, "kind") || strcmp(str(r, "kind"), "nccl") != 0 ||
                    !json_object_object_get_ex(r, "measured", &m))
                        continue;
                json_object_object_get_ex(m, "transport", &t);
                fprintf(out, "sparkd_probe_nccl_socket_fallback{peer=\"");
                label(out, str(r, "peer"));
                fprintf(out, "\"} %d\n", flag(t, "socket_fallback"));
        }
        probe_verdicts(out, latest);
        node_state(out, state);
        if (fclose(out) != 0) {
                free(text);
                return NULL;
        }
        return text;
}

char *metrics_render(const char *node, const char *version, double uptime_sec,
                     const struct link_states *links, const struct port_counter_list *counters,
                     json_object *peers, json_object *latest, const struct metrics_node_state *state)
{
        json_object *list = NULL, *unique_list, *unique_latest;
        char *text;

        if (peers)
                json_object_object_get_ex(peers, "peers", &list);
        unique_list = unique_peers(list);
        unique_latest = unique_results(latest);
        text = render(node, version, uptime_sec, links, counters, peers, unique_list, unique_latest, state);
        json_object_put(unique_list);
        json_object_put(unique_latest);
        return text;
}
