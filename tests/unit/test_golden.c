/*
 * Golden outputs: for each fixture host, what `sparkc env` and `sparkc doctor` print, built by
 * the same code the daemon and client run (facts -> envgen/doctor JSON -> report text). The
 * expected text lives in tests/fixtures/hosts/NAME/expected/; UPDATE_GOLDEN=1 rewrites it
 * (then read the diff before committing it).
 */
#include <errno.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "client/report.h"
#include "common/macro.h"
#include "daemon/fabric/doctor.h"
#include "daemon/fabric/envgen.h"
#include "daemon/host/aer_watch.h"
#include "daemon/host/counter_watch.h"
#include "golden.h"
#include "inventory/fabric.h"
#include "test.h"

/* Compares doctor's text for facts f with host's golden file name; returns the exit code. */
static int golden_doctor(const char *host, const struct fabric_facts *f, const char *name)
{
        json_object *doctor = doctor_run(f);
        int code = compare_golden_report(host, name, report_doctor, doctor);

        json_object_put(doctor);
        return code;
}

/* Runs env (in `mode`) and doctor for the facts of host; returns the env result's mode and the
 * doctor code. */
static void golden_facts(const char *host, struct fabric_facts *f, enum env_mode mode, const char *env_name,
                         const char **mode_out, int *doctor_code)
{
        json_object *env, *m;
        char *text = NULL;
        size_t size = 0;
        FILE *out;

        env = envgen_build(f, mode);
        out = open_memstream(&text, &size);
        if (report_env(out, out, env, ENV_FORMAT_SH) < 0)
                fprintf(out, "(exit 1)\n");
        fclose(out);
        compare_golden(host, env_name, text);
        free(text);
        *mode_out = json_object_object_get_ex(env, "mode", &m) ? strdup(json_object_get_string(m))
                                                               : strdup("none");

        if (doctor_code)
                *doctor_code = golden_doctor(host, f, "doctor.txt");
        json_object_put(env);
}

static void golden_host(const char *host, enum env_mode mode, const char *env_name, const char **mode_out,
                        int *doctor_code)
{
        struct fabric_facts f;

        CHECK(load_host(host, &f) == 0);
        golden_facts(host, &f, mode, env_name, mode_out, doctor_code);
        fabric_facts_free(&f);
}

static void test_spark_twins(void)
{
        const char *mode;
        int code;

        golden_host("spark-twins", ENV_MODE_AUTO, "env.sh", &mode, &code);
        CHECK_STREQ(mode, "safe"); /* GB10, proprietary driver */
        free((char *)mode);
}

static void test_direct_fabric(void)
{
        const char *mode;
        int code;

        golden_host("direct-fabric", ENV_MODE_AUTO, "env.sh", &mode, &code);
        CHECK_STREQ(mode, "safe"); /* GB10 with nvidia_peermem: must never be GDR */
        CHECK(code == 2);          /* peermem on unified memory, twins on one subnet */
        free((char *)mode);
}

static void test_gb10_open_driver(void)
{
        const char *mode;
        int code;

        golden_host("gb10-open-driver", ENV_MODE_AUTO, "env.sh", &mode, &code);
        CHECK_STREQ(mode, "dmabuf");
        free((char *)mode);
        golden_host("gb10-open-driver", ENV_MODE_SAFE, "env-safe.sh", &mode, NULL);
        CHECK_STREQ(mode, "safe");
        free((char *)mode);
}

/* The open driver allows DMA-BUF, but nvidia_peermem loaded on the same unified-memory GPU is what
 * the doctor fails: auto must stay safe there, so env and doctor never disagree. */
static void test_gb10_open_driver_with_peermem(void)
{
        struct fabric_facts f;
        json_object *env, *m;

        CHECK(load_host("gb10-open-driver", &f) == 0);
        CHECK(f.host.is_dmabuf_possible);
        f.host.has_peermem = true;
        env = envgen_build(&f, ENV_MODE_AUTO);
        CHECK(json_object_object_get_ex(env, "mode", &m));
        CHECK_STREQ(json_object_get_string(m), "safe");
        CHECK(json_object_object_get_ex(env, "mode_reason", &m));
        CHECK(strstr(json_object_get_string(m), "nvidia_peermem") != NULL);
        json_object_put(env);
        fabric_facts_free(&f);
}

/* dmabuf asked for where NCCL would hang (peermem loaded) or cannot register GPU memory: the env
 * result refuses it and names the safe command; sparkc prints nothing unless forced. Where DMA-BUF
 * works it is not refused. */
static void test_dmabuf_refused(void)
{
        const char *hosts[] = { "spark-rail-faults", "spark-twins" };
        struct fabric_facts f;
        json_object *env, *refused;
        char *text = NULL;
        size_t size = 0;
        FILE *err;

        for (size_t i = 0; i < 2; i++) {
                CHECK(load_host(hosts[i], &f) == 0);
                env = envgen_build(&f, ENV_MODE_DMABUF);
                CHECK(json_object_object_get_ex(env, "refused", &refused) && refused);
                CHECK_STREQ(json_object_get_string(json_object_object_get(refused, "safe_command")),
                            "sparkc env --mode safe");
                if (i == 0)
                        CHECK(strstr(json_object_get_string(json_object_object_get(refused, "reason")),
                                     "NCCL init hangs forever") != NULL);
                err = open_memstream(&text, &size);
                CHECK(report_env_refusal(err, env, false) == -EPERM);
                fclose(err);
                CHECK(strstr(text, "use `sparkc env --mode safe`") != NULL);
                free(text);
                err = open_memstream(&text, &size);
                CHECK(report_env_refusal(err, env, true) == 0);
                fclose(err);
                CHECK(strncmp(text, "sparkc: warning: forced mode dmabuf", 35) == 0);
                free(text);
                json_object_put(env);
                fabric_facts_free(&f);
        }
        CHECK(load_host("gb10-open-driver", &f) == 0);
        env = envgen_build(&f, ENV_MODE_DMABUF);
        CHECK(!json_object_object_get_ex(env, "refused", &refused));
        json_object_put(env);
        fabric_facts_free(&f);
}

/* Seed 002: one active twin, its partner forced down by the guide's boot service. */
static void test_spark_one_port(void)
{
        const char *mode;
        int code;

        golden_host("spark-one-port", ENV_MODE_AUTO, "env.sh", &mode, &code);
        CHECK_STREQ(mode, "safe"); /* GB10, proprietary driver */
        free((char *)mode);
}

static void test_single_port(void)
{
        const char *mode;
        int code;

        golden_host("single-port", ENV_MODE_AUTO, "env.sh", &mode, &code);
        free((char *)mode);
}

static void test_mesh_two_nics(void)
{
        const char *mode;
        int code;

        golden_host("mesh-two-nics", ENV_MODE_AUTO, "env.sh", &mode, &code);
        CHECK_STREQ(mode, "safe"); /* no NVIDIA driver */
        free((char *)mode);
}

static void test_gid_index(void)
{
        const char *mode;
        int code;

        golden_host("gid-index-5", ENV_MODE_AUTO, "env.sh", &mode, &code);
        free((char *)mode);
        golden_host("gid-missing", ENV_MODE_AUTO, "env.sh", &mode, &code);
        CHECK(code == 2);
        free((char *)mode);
        /* A VLAN's IPv4 GID first in the table: the netdev's own address decides, index 5. */
        golden_host("gid-vlan", ENV_MODE_AUTO, "env.sh", &mode, &code);
        free((char *)mode);
}

/* The fabric netdev has no IPv4 address: socket traffic goes to the management NIC eno1 (the
 * default route), never wlan0 (wireless, a default route too), docker0 (a bridge) or the veth. */
static void test_management_fallback(void)
{
        struct fabric_facts f;
        json_object *env, *vars;
        const char *mode;
        int code;

        golden_host("mgmt-fallback", ENV_MODE_AUTO, "env.sh", &mode, &code);
        free((char *)mode);

        CHECK(load_host("mgmt-fallback", &f) == 0);
        env = envgen_build(&f, ENV_MODE_AUTO);
        CHECK(json_object_object_get_ex(env, "variables", &vars));
        for (size_t i = 0; vars && i < json_object_array_length(vars); i++) {
                json_object *v = json_object_array_get_idx(vars, i), *name, *value;

                CHECK(json_object_object_get_ex(v, "name", &name));
                CHECK(json_object_object_get_ex(v, "value", &value));
                if (strstr(json_object_get_string(name), "SOCKET_IFNAME") ||
                    strcmp(json_object_get_string(name), "OMPI_MCA_btl_tcp_if_include") == 0)
                        CHECK(strstr(json_object_get_string(value), "eno1") != NULL);
                CHECK(strstr(json_object_get_string(value), "wlan0") == NULL);
                CHECK(strstr(json_object_get_string(value), "docker0") == NULL);
        }
        json_object_put(env);

        /* Without the management NIC's address nothing physical qualifies: nothing is pinned. */
        for (size_t i = 0; i < f.n_addresses; i++)
                if (strcmp(f.addresses[i].ifname, "eno1") == 0)
                        snprintf(f.addresses[i].ifname, sizeof(f.addresses[i].ifname), "gone0");
        env = envgen_build(&f, ENV_MODE_AUTO);
        CHECK(json_object_object_get_ex(env, "variables", &vars));
        for (size_t i = 0; vars && i < json_object_array_length(vars); i++) {
                json_object *v = json_object_array_get_idx(vars, i), *name;

                CHECK(json_object_object_get_ex(v, "name", &name));
                CHECK(strstr(json_object_get_string(name), "SOCKET_IFNAME") == NULL);
                CHECK(strcmp(json_object_get_string(name), "UCX_NET_DEVICES") != 0);
        }
        json_object_put(env);
        fabric_facts_free(&f);
}

/* NCCL_SOCKET_IFNAME's value in env, or "" when it is not set. */
static const char *socket_ifname(json_object *env)
{
        json_object *vars, *name, *value;

        if (!json_object_object_get_ex(env, "variables", &vars))
                return "";
        for (size_t i = 0; i < json_object_array_length(vars); i++) {
                json_object *v = json_object_array_get_idx(vars, i);

                if (json_object_object_get_ex(v, "name", &name) &&
                    strcmp(json_object_get_string(name), "NCCL_SOCKET_IFNAME") == 0 &&
                    json_object_object_get_ex(v, "value", &value))
                        return json_object_get_string(value);
        }
        return "";
}

/* single-port without its fabric address and without /proc/net/route: one physical netdev with
 * an address is the management interface; two, and neither holds the default route, is no
 * choice at all. */
static void test_management_without_route(void)
{
        struct fabric_facts f;
        json_object *env, *notes;

        CHECK(fabric_facts_read(FIXTURES_DIR "/single-port", NULL, false, &f) == 0);
        CHECK(fabric_facts_add_address(&f, "eno1", "10.1.0.5/16") == 0);
        env = envgen_build(&f, ENV_MODE_AUTO);
        CHECK_STREQ(socket_ifname(env), "=eno1");
        json_object_put(env);

        CHECK(fabric_facts_add_address(&f, "enp65s0f1np1", "10.2.0.1/16") == 0);
        env = envgen_build(&f, ENV_MODE_AUTO);
        CHECK_STREQ(socket_ifname(env), "");
        CHECK(json_object_object_get_ex(env, "notes", &notes));
        CHECK(notes && strstr(json_object_to_json_string(notes), "(eno1, enp65s0f1np1) none holds the IPv4 "
                                                                 "default route") != NULL);
        /* The fact, not the name of a document users have never seen. */
        CHECK(strstr(json_object_to_json_string(notes), "seed") == NULL);
        CHECK(strstr(json_object_to_json_string(notes), "one twin of each port is enough") != NULL);
        json_object_put(env);
        fabric_facts_free(&f);
}

static void test_no_fabric(void)
{
        const char *mode;
        int code;

        golden_host("malformed", ENV_MODE_AUTO, "env.sh", &mode, &code);
        CHECK_STREQ(mode, "none");
        CHECK(code == 2);
        free((char *)mode);
}

/* Spark rails trained low: PCIe x2 (mlx5_1), 16 GT/s (mlx5_2), Ethernet at 100G and fatal AER
 * errors since boot (mlx5_3); mlx5_0 is healthy. */
static void test_spark_rail_faults(void)
{
        const char *mode;
        int code;

        golden_host("spark-rail-faults", ENV_MODE_AUTO, "env.sh", &mode, &code);
        CHECK(code == 2);
        free((char *)mode);
}

static json_object *find_check(json_object *doctor, const char *id)
{
        json_object *checks, *v;

        CHECK(json_object_object_get_ex(doctor, "checks", &checks));
        for (size_t i = 0; checks && i < json_object_array_length(checks); i++) {
                json_object *c = json_object_array_get_idx(checks, i);

                if (json_object_object_get_ex(c, "id", &v) && strcmp(json_object_get_string(v), id) == 0)
                        return c;
        }
        return NULL;
}

static const char *check_status(json_object *doctor, const char *id)
{
        json_object *c = find_check(doctor, id), *v;

        return c && json_object_object_get_ex(c, "status", &v) ? json_object_get_string(v) : "missing";
}

/* A test bed node: no RDMA, the veth fab0 named in [fabric] interfaces and kept at MTU 9000.
 * The configured netdev is a fabric netdev to the doctor as it is to `sparkc links`. */
static void test_configured_fabric(void)
{
        char *patterns[] = { "fab0", NULL };
        struct fabric_facts f;
        json_object *doctor;
        const char *mode;
        int code;

        CHECK(load_host_with("configured-fabric", patterns, &f) == 0);
        golden_facts("configured-fabric", &f, ENV_MODE_AUTO, "env.sh", &mode, &code);
        free((char *)mode);
        doctor = doctor_run(&f);
        CHECK_STREQ(check_status(doctor, "mtu"), "ok");
        json_object_put(doctor);
        fabric_facts_free(&f);
}

/* A fix's text in the doctor's result, "" when the check has none. */
static const char *check_fix(json_object *doctor, const char *id)
{
        json_object *c = find_check(doctor, id), *v;

        return c && json_object_object_get_ex(c, "fix", &v) ? json_object_get_string(v) : "";
}

/* sparkd started from a shell with its 8 MiB limit while login sessions are unlimited through
 * limits.d: the low limit is sparkd's own, and so is the fix; limits.d is already right. */
static void test_memlock_daemon_low(void)
{
        struct fabric_facts f;
        json_object *doctor;

        CHECK(load_host("spark-twins", &f) == 0);
        f.memlock_daemon = 8192 * 1024;
        CHECK(golden_doctor("spark-twins", &f, "doctor-memlock-daemon.txt") == 1);
        doctor = doctor_run(&f);
        CHECK_STREQ(check_status(doctor, "memlock"), "warn");
        CHECK(strstr(check_fix(doctor, "memlock"), "ulimit -l unlimited") != NULL);
        CHECK(strstr(check_fix(doctor, "memlock"), "limits.d/90-rdma.conf and log in") == NULL);
        json_object_put(doctor);

        /* Under systemd the unit's LimitMEMLOCK is what is low. */
        f.is_daemon_under_systemd = true;
        doctor = doctor_run(&f);
        CHECK(strstr(check_fix(doctor, "memlock"), "LimitMEMLOCK=infinity") != NULL);
        CHECK(strstr(check_fix(doctor, "memlock"), "ulimit") == NULL);
        json_object_put(doctor);
        fabric_facts_free(&f);
}

/* Two looks at the same PCI functions: first no fatal AER errors (spark-twins), then three on
 * 0002:01:00.1 (spark-rail-faults): rising, so the check fails and says to escalate. A third
 * look with the same count still fails (rising since the first look), but none since the last. */
static void test_aer_rising(void)
{
        struct aer_watch *w;
        struct fabric_facts before, after;
        json_object *doctor;
        char *text = NULL;
        size_t size = 0;
        FILE *out;

        CHECK(aer_watch_new(&w) == 0);
        CHECK(load_host("spark-twins", &before) == 0);
        CHECK(aer_watch_observe(w, &before.rdma) == 0);
        doctor = doctor_run(&before);
        CHECK_STREQ(check_status(doctor, "pcie-aer"), "ok");
        CHECK_STREQ(check_status(doctor, "pcie-link"), "ok");
        CHECK_STREQ(check_status(doctor, "ethernet-speed"), "ok");
        json_object_put(doctor);

        CHECK(load_host("spark-rail-faults", &after) == 0);
        CHECK(aer_watch_observe(w, &after.rdma) == 0);
        doctor = doctor_run(&after);
        CHECK_STREQ(check_status(doctor, "pcie-aer"), "fail");
        out = open_memstream(&text, &size);
        report_doctor(out, doctor);
        fclose(out);
        compare_golden("spark-rail-faults", "doctor-aer-rising.txt", text);
        free(text);
        json_object_put(doctor);
        fabric_facts_free(&after);

        CHECK(load_host("spark-rail-faults", &after) == 0);
        CHECK(aer_watch_observe(w, &after.rdma) == 0);
        CHECK(after.rdma.v[3].pcie.aer_fatal_since_start == 3);
        CHECK(after.rdma.v[3].pcie.aer_fatal_since_last == 0);
        doctor = doctor_run(&after);
        CHECK_STREQ(check_status(doctor, "pcie-aer"), "fail");
        json_object_put(doctor);

        /* Back to a lower count (a reset device): it starts over, nothing rising. */
        CHECK(aer_watch_observe(w, &before.rdma) == 0);
        doctor = doctor_run(&before);
        CHECK_STREQ(check_status(doctor, "pcie-aer"), "ok");
        json_object_put(doctor);

        fabric_facts_free(&after);
        fabric_facts_free(&before);
        aer_watch_free(w);
}

/* The doctor's verdict in one line, in full and cut to node-problem-detector's 80 bytes, for a
 * host that passes (spark-twins), one that warns (spark-one-port), one that fails
 * (spark-rail-faults), and with one check alone. */
static void test_doctor_line(void)
{
        static const char *const hosts[] = { "spark-twins", "spark-one-port", "spark-rail-faults" };

        for (size_t i = 0; i < ARRAY_SIZE(hosts); i++) {
                struct fabric_facts f;
                json_object *doctor;
                char full[REPORT_DOCTOR_LINE_SIZE], npd[81], *text = NULL;
                size_t size = 0;
                FILE *out;
                int code;

                CHECK(load_host(hosts[i], &f) == 0);
                doctor = doctor_run(&f);
                out = open_memstream(&text, &size);
                code = report_doctor_line(full, sizeof(full), doctor, NULL);
                fprintf(out, "%s\n(exit %d)\n", full, code);
                CHECK(report_doctor_line(npd, sizeof(npd), doctor, NULL) == code);
                CHECK(strlen(npd) <= 80);
                fprintf(out, "%s\n", npd);
                code = report_doctor_line(full, sizeof(full), doctor, "mtu");
                fprintf(out, "%s\n(exit %d)\n", full, code);
                fclose(out);
                compare_golden(hosts[i], "doctor-line.txt", text);
                free(text);
                json_object_put(doctor);
                fabric_facts_free(&f);
        }
}

/* A line cut inside a multi-byte character keeps the character whole or leaves it out. */
static void test_doctor_line_utf8(void)
{
        json_object *doctor =
                json_tokener_parse("{\"checks\": [{\"id\": \"mtu\", \"status\": \"fail\", \"summary\": "
                                   "\"\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\"}]}");
        char line[16];

        /* "fail: mtu: " is 11 bytes; 12 bytes of room leave one before "...", half an é. */
        CHECK(report_doctor_line(line, sizeof(line), doctor, NULL) == 2);
        CHECK_STREQ(line, "fail: mtu: ...");
        CHECK(report_doctor_line(line, sizeof(line), doctor, "gpu") == -ENOENT);
        CHECK_STREQ(line, "unknown: no ...");
        json_object_put(doctor);
}

static void doctor_golden(const char *host, const char *name, const struct fabric_facts *f)
{
        json_object *doctor = doctor_run(f);
        char *text = NULL;
        size_t size = 0;
        FILE *out = open_memstream(&text, &size);

        fprintf(out, "(exit %d)\n", report_doctor(out, doctor));
        fclose(out);
        compare_golden(host, name, text);
        free(text);
        json_object_put(doctor);
}

/* Counters since the driver loaded are evidence only; the watch's second look, with link_downed
 * up by one and symbol_error at 20/s, fails the check with the fatal counter's fix. */
static void test_port_errors(void)
{
        struct counter_thresholds t = { .window_usec = 60 * 1000000ULL };
        struct counter_watch *w;
        struct fabric_facts f;

        /* gpu and roce-v2-gid fail as in gid-missing; the counters add no fault */
        CHECK(load_host("port-errors", &f) == 0);
        doctor_golden("port-errors", "doctor.txt", &f);
        fabric_facts_free(&f);

        t.fatal[PORT_COUNTER_LINK_DOWNED] = true;
        t.per_sec[PORT_COUNTER_SYMBOL_ERROR] = 10;
        CHECK(counter_watch_new(&t, &w) == 0);
        CHECK(load_host("port-errors", &f) == 0);
        CHECK(f.counters.n == 1);
        CHECK(counter_watch_observe(w, &f.counters, 0, NULL, NULL) == 0);
        f.counters.v[0].values[PORT_COUNTER_LINK_DOWNED] += 1;
        f.counters.v[0].values[PORT_COUNTER_SYMBOL_ERROR] += 200;
        CHECK(counter_watch_observe(w, &f.counters, 10 * 1000000ULL, NULL, NULL) == 0);
        counter_watch_annotate(w, &f.counters);
        doctor_golden("port-errors", "doctor-rising.txt", &f);
        fabric_facts_free(&f);
        counter_watch_free(w);
}

int main(void)
{
        RUN(test_spark_twins);
        RUN(test_direct_fabric);
        RUN(test_gb10_open_driver);
        RUN(test_gb10_open_driver_with_peermem);
        RUN(test_dmabuf_refused);
        RUN(test_single_port);
        RUN(test_spark_one_port);
        RUN(test_mesh_two_nics);
        RUN(test_gid_index);
        RUN(test_management_fallback);
        RUN(test_management_without_route);
        RUN(test_no_fabric);
        RUN(test_configured_fabric);
        RUN(test_spark_rail_faults);
        RUN(test_aer_rising);
        RUN(test_memlock_daemon_low);
        RUN(test_doctor_line);
        RUN(test_doctor_line_utf8);
        RUN(test_port_errors);
        return test_result();
}
