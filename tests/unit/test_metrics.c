#include <stdlib.h>

#include "common/macro.h"
#include "daemon/export/metrics.h"
#include "test.h"

static json_object *peer(const char *name, const char *id, const char *state)
{
        json_object *p = json_object_new_object();

        json_object_object_add(p, "name", json_object_new_string(name));
        json_object_object_add(p, "node_id", json_object_new_string(id));
        json_object_object_add(p, "state", json_object_new_string(state));
        return p;
}

static json_object *result(const char *name, const char *id, const char *status, double gbps)
{
        json_object *r = json_object_new_object(), *m = json_object_new_object();

        json_object_object_add(r, "peer", json_object_new_string(name));
        json_object_object_add(r, "peer_id", json_object_new_string(id));
        json_object_object_add(r, "kind", json_object_new_string("tcp"));
        json_object_object_add(r, "status", json_object_new_string(status));
        json_object_object_add(m, "gbps", json_object_new_double(gbps));
        json_object_object_add(r, "measured", m);
        return r;
}

static size_t count(const char *text, const char *needle)
{
        size_t n = 0;

        for (const char *at = text; (at = strstr(at, needle)); at += strlen(needle))
                n++;
        return n;
}

/* A node reinstalled under the same name has a new node id: its old results and peer entry
 * must not give a second series with the same labels, which Prometheus rejects. */
static void test_one_series_per_label_set(void)
{
        json_object *peers = json_object_new_object(), *list = json_object_new_array();
        json_object *latest = json_object_new_array();
        char *text;

        json_object_array_add(list, peer("b", "old-id", "down"));
        json_object_array_add(list, peer("b", "new-id", "up"));
        json_object_array_add(list, peer("c", "c-id", "down"));
        json_object_object_add(peers, "peers", list);
        /* Newest first, as history_latest gives them. */
        json_object_array_add(latest, result("b", "new-id", "ok", 80));
        json_object_array_add(latest, result("b", "old-id", "failed", 8));
        text = metrics_render("a", "1.0", 1, NULL, NULL, peers, latest, NULL);
        CHECK(text != NULL);
        if (text) {
                CHECK(count(text, "sparkd_peer_up{peer=\"b\"}") == 1);
                CHECK(count(text, "sparkd_peer_up{peer=\"b\"} 1") == 1);
                CHECK(count(text, "sparkd_peer_up{peer=\"c\"} 0") == 1);
                CHECK(count(text, "sparkd_probe_ok{peer=\"b\",kind=\"tcp\"}") == 1);
                CHECK(count(text, "sparkd_probe_ok{peer=\"b\",kind=\"tcp\"} 1") == 1);
                CHECK(count(text, "sparkd_probe_tcp_bytes_per_second{peer=\"b\"} 10000000000") == 1);
        }
        free(text);
        json_object_put(peers);
        json_object_put(latest);
}

static void test_rdma(void)
{
        json_object *latest = json_object_new_array(), *r = result("b", "b-id", "ok", 190), *m;
        char *text;

        json_object_object_add(r, "kind", json_object_new_string("rdma"));
        json_object_object_get_ex(r, "measured", &m);
        json_object_object_add(m, "typical_us", json_object_new_double(1.5));
        json_object_array_add(latest, r);
        text = metrics_render("a", "1.0", 1, NULL, NULL, NULL, latest, NULL);
        CHECK(text != NULL);
        if (text) {
                CHECK(count(text, "sparkd_probe_rdma_bytes_per_second{peer=\"b\"} 23750000000") == 1);
                CHECK(count(text, "sparkd_probe_rdma_write_latency_seconds{peer=\"b\"} 1.5e-06") == 1);
                CHECK(count(text, "sparkd_probe_tcp_bytes_per_second{") == 0);
        }
        free(text);
        json_object_put(latest);
}

static void test_labels_are_escaped(void)
{
        json_object *latest = json_object_new_array();
        char *text;

        json_object_array_add(latest, result("x\"y\\z\nw", "id", "ok", 8));
        text = metrics_render("n", "v", 0, NULL, NULL, NULL, latest, NULL);
        CHECK(text && strstr(text, "sparkd_probe_ok{peer=\"x\\\"y\\\\z\\nw\",kind=\"tcp\"} 1"));
        free(text);
        json_object_put(latest);
}

static json_object *check(const char *id, const char *status)
{
        json_object *c = json_object_new_object();

        json_object_object_add(c, "id", json_object_new_string(id));
        json_object_object_add(c, "status", json_object_new_string(status));
        return c;
}

/* The alert rules read the doctor's checks, the GID watch and each probe's verdict. */
static void test_doctor_gid_and_verdicts(void)
{
        static const char *const once[] = {
                "# TYPE sparkd_doctor_check_status gauge",
                "sparkd_doctor_check_status{check=\"mtu\"} 0",
                "sparkd_doctor_check_status{check=\"memlock\"} 1",
                "sparkd_doctor_check_status{check=\"pcie-aer\"} 2",
                "# TYPE sparkd_gid_changes_total counter",
                "sparkd_gid_changes_total 2\n",
                "sparkd_env_stale 1\n",
                "sparkd_probe_degraded{peer=\"b\",kind=\"tcp\"} 1",
                "sparkd_probe_degraded{peer=\"c\",kind=\"tcp\"} 0",
                "sparkd_probe_stale_initialization{peer=\"b\",kind=\"tcp\"} 1",
        };
        json_object *doctor = json_object_new_object(), *checks = json_object_new_array();
        json_object *latest = json_object_new_array(), *stale = result("b", "b-id", "degraded", 12);
        json_object *diagnosis = json_object_new_object();
        struct metrics_node_state state = { .doctor = doctor, .gid_changes = 2, .env_stale = true };
        char *text;

        json_object_array_add(checks, check("mtu", "ok"));
        json_object_array_add(checks, check("memlock", "warn"));
        json_object_array_add(checks, check("pcie-aer", "fail"));
        json_object_object_add(doctor, "checks", checks);
        json_object_object_add(diagnosis, "verdict", json_object_new_string("stale-initialization"));
        json_object_object_add(stale, "diagnosis", diagnosis);
        json_object_array_add(latest, stale);
        json_object_array_add(latest, result("c", "c-id", "ok", 90));
        text = metrics_render("a", "1.0", 1, NULL, NULL, NULL, latest, &state);
        CHECK(text != NULL);
        for (size_t i = 0; text && i < ARRAY_SIZE(once); i++)
                CHECK(count(text, once[i]) == 1);
        /* A result without a diagnosis says nothing about its rails. */
        CHECK(text && count(text, "sparkd_probe_stale_initialization{peer=\"c\"") == 0);
        free(text);
        json_object_put(doctor);
        json_object_put(latest);
}

/* Every error counter the kernel offers is a series of one counter family; the bytes are their
 * own family; a counter the port lacks gives no series. */
static void test_port_counters(void)
{
        struct port_counter_sample s = { .port = 1, .netdev = "eth0" };
        struct port_counter_list list = { .v = &s, .n = 1 };
        char *text;

        strcpy(s.device, "mlx5_0");
        s.has[PORT_COUNTER_SYMBOL_ERROR] = s.has[PORT_COUNTER_LINK_DOWNED] = s.has[PORT_COUNTER_RX_BYTES] =
                true;
        s.values[PORT_COUNTER_SYMBOL_ERROR] = 1200;
        s.values[PORT_COUNTER_RX_BYTES] = 912345678901;
        s.alarm[PORT_COUNTER_SYMBOL_ERROR] = PORT_COUNTER_DEGRADED;
        text = metrics_render("a", "1.0", 1, NULL, &list, NULL, NULL, NULL);
        CHECK(text != NULL);
        if (text) {
                CHECK(count(text, "# TYPE sparkd_port_errors_total counter\n") == 1);
                CHECK(count(text, "# HELP sparkd_port_errors_total ") == 1);
                CHECK(count(text, "sparkd_port_errors_total{device=\"mlx5_0\",port=\"1\",iface=\"eth0\","
                                  "counter=\"symbol_error\"} 1200\n") == 1);
                CHECK(count(text, "counter=\"link_downed\"} 0\n") == 2); /* the total and the alarm */
                CHECK(count(text, "counter=\"rnr_nak_retry_err\"") == 0);
                CHECK(count(text, "sparkd_port_bytes_total{device=\"mlx5_0\",port=\"1\",iface=\"eth0\","
                                  "direction=\"rx\"} 912345678901\n") == 1);
                CHECK(count(text, "direction=\"tx\"") == 0);
                CHECK(count(text, "sparkd_port_errors_alarm{device=\"mlx5_0\",port=\"1\",iface=\"eth0\","
                                  "counter=\"symbol_error\"} 1\n") == 1);
        }
        free(text);
}

int main(void)
{
        RUN(test_one_series_per_label_set);
        RUN(test_rdma);
        RUN(test_labels_are_escaped);
        RUN(test_doctor_gid_and_verdicts);
        RUN(test_port_counters);
        return test_result();
}
