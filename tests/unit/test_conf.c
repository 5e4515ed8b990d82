#include <errno.h>
#include <grp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/macro.h"
#include "common/strutil.h"
#include "daemon/base/log.h"
#include "daemon/config/conf.h"
#include "test.h"

static char dir[] = "/tmp/sparkd-test-conf.XXXXXX";

static void write_file(const char *name, const char *content)
{
        char path[512];
        FILE *f;

        snprintf(path, sizeof(path), "%s/%s", dir, name);
        f = fopen(path, "w");
        fputs(content, f);
        fclose(f);
}

static char *path_of(const char *name)
{
        static char path[512];

        snprintf(path, sizeof(path), "%s/%s", dir, name);
        return path;
}

/* Loads name and returns the errors as one string, "FILE:LINE: message" per line, file names
 * relative to the test directory. */
static int load(const char *name, bool must_exist, struct sparkd_config **config, char *out, size_t size)
{
        struct conf_errors errors;
        int r = conf_load(path_of(name), must_exist, config, &errors);
        size_t used = 0;

        out[0] = '\0';
        for (size_t i = 0; i < errors.n; i++) {
                char *line = conf_error_format(&errors.v[i]);
                const char *shown = strncmp(line, dir, strlen(dir)) == 0 ? line + strlen(dir) + 1 : line;

                used += (size_t)snprintf(out + used, size - used, "%s\n", shown);
                free(line);
        }
        conf_errors_clear(&errors);
        return r;
}

static void test_defaults_without_file(void)
{
        struct sparkd_config *c = NULL;
        char errors[1024];

        CHECK(load("missing.conf", false, &c, errors, sizeof(errors)) == 0);
        CHECK(c && !c->path_found);
        CHECK(c && c->mode == ENFORCE_MODE_ENFORCE);
        CHECK(c && c->socket_mode == 0660);
        CHECK(c && c->max_clients == 256);
        CHECK(c && c->reserved_admin_clients == 16 && c->max_clients_per_uid == 64);
        CHECK(c && c->node_name && *c->node_name);
        CHECK(c && c->files_read == NULL);
        conf_free(c);
}

static void test_missing_named_file(void)
{
        struct sparkd_config *c = NULL;
        char errors[1024];

        CHECK(load("missing.conf", true, &c, errors, sizeof(errors)) < 0);
        CHECK_STREQ(errors, "missing.conf: cannot read: No such file or directory\n");
}

static void test_valid_file(void)
{
        struct sparkd_config *c = NULL;
        char errors[1024];

        write_file("good.conf", "# comment\n[daemon]\nnode_name = spark1\nmode=audit ; inline\n"
                                "state_dir=/tmp/x\nlog_level=debug\n[api]\nsocket=/tmp/s.sock\n"
                                "socket_mode=0600\nsocket_group=root\nadmin_group=\nmax_clients=9\n");
        CHECK(load("good.conf", true, &c, errors, sizeof(errors)) == 0);
        CHECK_STREQ(errors, "");
        if (!c)
                return;
        CHECK(c->path_found);
        CHECK_STREQ(c->node_name, "spark1");
        CHECK(c->mode == ENFORCE_MODE_AUDIT);
        CHECK_STREQ(c->state_dir, "/tmp/x");
        CHECK_STREQ(c->socket_path, "/tmp/s.sock");
        CHECK(c->socket_mode == 0600);
        CHECK_STREQ(c->socket_group, "root");
        CHECK(c->socket_gid == 0);
        CHECK(c->admin_group == NULL);
        CHECK(c->max_clients == 9);
        CHECK(c->log_level == LOG_DEBUG);
        conf_free(c);
}

static void test_every_error_has_file_and_line(void)
{
        struct sparkd_config *c = NULL;
        char errors[4096];

        write_file("bad.conf", "[daemon]\n"
                               "node_name = spark one\n"
                               "mode = sometimes\n"
                               "colour = blue\n"
                               "[nosuch]\n"
                               "key = 1\n"
                               "[api]\n"
                               "socket = relative.sock\n"
                               "socket_mode = 0999\n"
                               "max_clients = 0\n"
                               "admin_group = no-such-group-here\n");
        CHECK(load("bad.conf", true, &c, errors, sizeof(errors)) == -EINVAL);
        CHECK(c == NULL);
        CHECK_STREQ(
                errors,
                "bad.conf:2: node_name=\"spark one\": expected a node name of 1 to 63 letters, digits, '-', "
                "'_' or '.'\n"
                "bad.conf:3: mode=\"sometimes\": expected \"enforce\" or \"audit\"\n"
                "bad.conf:4: unknown key \"colour\" in [daemon]\n"
                "bad.conf:6: unknown section [nosuch]\n"
                "bad.conf:8: socket=\"relative.sock\": expected an absolute path\n"
                "bad.conf:9: socket_mode=\"0999\": expected an octal file mode such as 0660\n"
                "bad.conf:10: max_clients=\"0\": expected a number from 1 to 65536\n"
                "bad.conf:11: admin_group=\"no-such-group-here\": expected the name of an existing group\n");
}

static void test_syntax_errors(void)
{
        struct sparkd_config *c = NULL;
        char errors[1024];

        write_file("syntax.conf", "[daemon]\nmode = audit\nthis line has no equals sign\n");
        CHECK(load("syntax.conf", true, &c, errors, sizeof(errors)) == -EINVAL);
        CHECK_STREQ(errors, "syntax.conf:3: expected \"[section]\" or \"key = value\"\n");

        /* Every bad line, in order, not only the first one inih stops at. */
        write_file("many.conf",
                   "[daemon\njunk one\n[fabric]\nbogus = 1\njunk two\n= no name\n  ; comment\n");
        CHECK(load("many.conf", true, &c, errors, sizeof(errors)) == -EINVAL);
        CHECK_STREQ(errors, "many.conf:1: expected \"[section]\" or \"key = value\"\n"
                            "many.conf:2: expected \"[section]\" or \"key = value\"\n"
                            "many.conf:4: unknown key \"bogus\" in [fabric]\n"
                            "many.conf:5: expected \"[section]\" or \"key = value\"\n"
                            "many.conf:6: expected \"[section]\" or \"key = value\"\n");

        write_file("outside.conf", "mode = audit\n");
        CHECK(load("outside.conf", true, &c, errors, sizeof(errors)) == -EINVAL);
        CHECK_STREQ(errors, "outside.conf:1: \"mode\" is outside any [section]\n");

        /* Past the limit: said with the line's size and the limit, and the next lines still read. */
        {
                size_t size = 70 * 1024;
                _cleanup_free_ char *content = malloc(size);

                CHECK(content);
                if (!content)
                        return;
                memcpy(content, "[daemon]\n# ", 11);
                memset(content + 11, 'x', size - 11);
                snprintf(content + 70000, size - 70000, "\nmode = bogus\n");
                write_file("long.conf", content);
        }
        CHECK(load("long.conf", true, &c, errors, sizeof(errors)) == -EINVAL);
        CHECK_STREQ(errors, "long.conf:2: a line of 69991 bytes; the limit is 65534 bytes, not counting "
                            "the newline\n"
                            "long.conf:3: mode=\"bogus\": expected \"enforce\" or \"audit\"\n");
}

/* A cluster's worth of peers: 64 addresses or 64 longest host names on one line, or one a line;
 * a later file replaces the list, and an empty value empties it. */
static void test_static_peers_of_a_cluster(void)
{
        _cleanup_free_ char *content = malloc(64 * 1024);
        struct sparkd_config *c = NULL;
        char errors[1024], name[254];
        size_t used;

        CHECK(content);
        if (!content)
                return;
        used = (size_t)sprintf(content, "[peers]\nstatic =");
        for (int i = 0; i < 64; i++)
                used += (size_t)sprintf(content + used, " 255.255.255.%d", 192 + i);
        sprintf(content + used, "\n");
        CHECK(used > 1000);
        write_file("peers.conf", content);
        CHECK(load("peers.conf", true, &c, errors, sizeof(errors)) == 0);
        CHECK_STREQ(errors, "");
        CHECK(c && strv_length(c->static_peers) == 64);
        CHECK(c && strcmp(c->static_peers[63], "255.255.255.255") == 0);
        conf_free(c);

        memset(name, 'a', sizeof(name) - 1);
        name[sizeof(name) - 1] = '\0';
        used = (size_t)sprintf(content, "[peers]\nstatic =");
        for (int i = 0; i < 64; i++)
                used += (size_t)sprintf(content + used, " %.249s.%03d", name, i);
        sprintf(content + used, "\n");
        CHECK(used > 16000);
        write_file("names.conf", content);
        CHECK(load("names.conf", true, &c, errors, sizeof(errors)) == 0);
        CHECK_STREQ(errors, "");
        CHECK(c && strv_length(c->static_peers) == 64 && strlen(c->static_peers[0]) == 254 - 1);
        conf_free(c);

        used = (size_t)sprintf(content, "[peers]\n");
        for (int i = 0; i < 64; i++)
                used += (size_t)sprintf(content + used, "static = 10.0.%d.1\n", i);
        write_file("lines.conf", content);
        CHECK(load("lines.conf", true, &c, errors, sizeof(errors)) == 0);
        CHECK(c && strv_length(c->static_peers) == 64);
        CHECK(c && strcmp(c->static_peers[0], "10.0.0.1") == 0 &&
              strcmp(c->static_peers[63], "10.0.63.1") == 0);
        conf_free(c);

        mkdir(path_of("lines.conf.d"), 0755);
        write_file("lines.conf.d/10-other.conf", "[peers]\nstatic = 10.1.0.1\nstatic = 10.1.0.2 10.1.0.3\n");
        CHECK(load("lines.conf", true, &c, errors, sizeof(errors)) == 0);
        CHECK(c && strv_length(c->static_peers) == 3 && strcmp(c->static_peers[2], "10.1.0.3") == 0);
        conf_free(c);

        write_file("lines.conf.d/20-none.conf", "[peers]\nstatic = 10.2.0.1\nstatic =\n");
        CHECK(load("lines.conf", true, &c, errors, sizeof(errors)) == 0);
        CHECK(c && strv_length(c->static_peers) == 0);
        conf_free(c);
}

static void test_dropins_in_name_order(void)
{
        struct sparkd_config *c = NULL;
        char errors[1024];

        mkdir(path_of("main.conf.d"), 0755);
        write_file("main.conf", "[daemon]\nnode_name = base\nmode = audit\n");
        write_file("main.conf.d/20-late.conf", "[daemon]\nnode_name = late\n");
        write_file("main.conf.d/10-early.conf", "[daemon]\nnode_name = early\n[api]\nmax_clients = 3\n");
        write_file("main.conf.d/ignored.txt", "[bogus]\n");
        CHECK(load("main.conf", true, &c, errors, sizeof(errors)) == 0);
        CHECK_STREQ(errors, "");
        if (!c)
                return;
        CHECK_STREQ(c->node_name, "late");
        CHECK(c->mode == ENFORCE_MODE_AUDIT);
        CHECK(c->max_clients == 3);
        CHECK(c->files_read && c->files_read[0] && c->files_read[1] && c->files_read[2] &&
              !c->files_read[3]);
        if (c->files_read && c->files_read[2]) {
                CHECK(strstr(c->files_read[1], "10-early.conf") != NULL);
                CHECK(strstr(c->files_read[2], "20-late.conf") != NULL);
        }
        conf_free(c);

        /* An error in a drop-in names the drop-in. */
        write_file("main.conf.d/30-bad.conf", "[api]\n\nsocket_mode = wide open\n");
        CHECK(load("main.conf", true, &c, errors, sizeof(errors)) == -EINVAL);
        CHECK_STREQ(errors, "main.conf.d/30-bad.conf:3: socket_mode=\"wide open\": expected an octal file "
                            "mode such as 0660\n");
}

static void test_dropins_without_main_file(void)
{
        struct sparkd_config *c = NULL;
        char errors[1024];

        mkdir(path_of("absent.conf.d"), 0755);
        write_file("absent.conf.d/50-node.conf", "[daemon]\nnode_name = fromdropin\n");
        CHECK(load("absent.conf", false, &c, errors, sizeof(errors)) == 0);
        CHECK(c && !c->path_found);
        CHECK(c && strcmp(c->node_name, "fromdropin") == 0);
        conf_free(c);
}

static void test_fabric_and_sysctl(void)
{
        struct sparkd_config *c = NULL;
        char errors[2048];

        CHECK(load("missing.conf", false, &c, errors, sizeof(errors)) == 0);
        if (c) {
                CHECK(c->fabric_mtu == 9000);
                CHECK(c->flap_threshold == 3 && c->flap_window_usec == 60000000ULL);
                CHECK(c->recheck_usec == 60000000ULL);
                CHECK(c->n_sysctls == 2);
                CHECK_STREQ(c->sysctls[0].name, "net.core.rmem_max");
                CHECK_STREQ(c->sysctls[0].value, "268435456");
                CHECK(c->fabric_patterns == NULL && c->fabric_down == NULL);
                CHECK_STREQ(c->lldpd_socket, "/run/lldpd.socket");
        }
        conf_free(c);

        write_file("fabric.conf",
                   "[daemon]\nhost_root = " FIXTURES_DIR "/spark-twins\nrecheck_interval = 5s\n"
                   "[fabric]\ninterfaces = enp1s0f1np1, enP2p*\ndown = enp1s0f0np0 nosuch0\n"
                   "mtu = 4200\nflap_threshold = 5\nflap_window = 2m\nlldpd_socket = /tmp/l.sock\n"
                   "[sysctl]\nnet.core.wmem_max =\nnet.ipv4.tcp_rmem = 4096 87380 6291456\n");
        CHECK(load("fabric.conf", true, &c, errors, sizeof(errors)) == 0);
        CHECK_STREQ(errors,
                    "fabric.conf:6: warning: down: interface \"nosuch0\" does not exist (now); it is "
                    "managed once it appears\n");
        if (c) {
                CHECK(strv_length(c->fabric_patterns) == 2);
                CHECK_STREQ(c->fabric_patterns[1], "enP2p*");
                CHECK(strv_length(c->fabric_down) == 2);
                CHECK(c->fabric_mtu == 4200 && c->flap_threshold == 5 &&
                      c->flap_window_usec == 120000000ULL);
                CHECK(c->recheck_usec == 5000000ULL);
                CHECK_STREQ(c->lldpd_socket, "/tmp/l.sock");
                CHECK(c->n_sysctls == 3);
                CHECK(c->sysctls[1].value == NULL); /* wmem_max no longer managed */
                CHECK_STREQ(c->sysctls[2].value, "4096 87380 6291456");
        }
        conf_free(c);

        write_file("badfabric.conf",
                   "[fabric]\nmtu = 100000\nflap_threshold = 1\ninterfaces = bad/name\n"
                   "flap_window = soon\nlldpd_socket = lldpd.socket\n[sysctl]\nnet.core.no_such_thing = 1\n"
                   "../etc = 1\n");
        CHECK(load("badfabric.conf", true, &c, errors, sizeof(errors)) == -EINVAL);
        CHECK_STREQ(
                errors,
                "badfabric.conf:2: mtu=\"100000\": expected an MTU from 1280 to 9978\n"
                "badfabric.conf:3: flap_threshold=\"1\": expected a number of link changes from 2 to 1000\n"
                "badfabric.conf:4: interfaces=\"bad/name\": expected interface names or shell globs (such "
                "as "
                "enp1s0f1np1 or enP2p*), separated by spaces\n"
                "badfabric.conf:5: flap_window=\"soon\": expected a duration from 1s to 1h, such as 60s\n"
                "badfabric.conf:6: lldpd_socket=\"lldpd.socket\": expected an absolute path\n"
                "badfabric.conf:8: unknown sysctl \"net.core.no_such_thing\" (no "
                "/proc/sys/net/core/no_such_thing)\n"
                "badfabric.conf:9: \"../etc\" is not a sysctl name (such as net.core.rmem_max)\n");
}

static void test_probe_kinds(void)
{
        struct sparkd_config *c = NULL;
        char errors[2048];

        CHECK(load("missing.conf", false, &c, errors, sizeof(errors)) == 0);
        if (c) {
                CHECK(strv_length(c->probe_kinds) == 1);
                CHECK_STREQ(c->probe_kinds[0], "tcp");
        }
        conf_free(c);

        write_file("kinds.conf", "[probe]\nkinds = tcp\n");
        CHECK(load("kinds.conf", true, &c, errors, sizeof(errors)) == 0);
        conf_free(c);
        c = NULL;

        /* rtt has its own interval; a kind twice, or one this build lacks, is a mistake. */
        write_file("badkinds.conf", "[probe]\nkinds = rtt\nkinds = tcp tcp\nkinds = tcp warp\n");
        CHECK(load("badkinds.conf", true, &c, errors, sizeof(errors)) == -EINVAL);
        CHECK(strstr(errors, "badkinds.conf:2: kinds=\"rtt\": expected bandwidth probe kinds") != NULL);
        CHECK(strstr(errors, "badkinds.conf:3: kinds=\"tcp tcp\"") != NULL);
        CHECK(strstr(errors, "badkinds.conf:4: kinds=\"tcp warp\"") != NULL);
        CHECK(strstr(errors, "(rtt, tcp") != NULL);
}

static void test_rdma_twins(void)
{
        struct sparkd_config *c = NULL;
        char errors[1024];

        write_file("twins.conf", "[probe]\nrdma_twins = rxe_a0 rxe_a1\n");
        CHECK(load("twins.conf", true, &c, errors, sizeof(errors)) == 0);
        if (c)
                CHECK_STREQ(c->probe_rdma_twins, "rxe_a0,rxe_a1");
        conf_free(c);
        c = NULL;

        write_file("badtwins.conf", "[probe]\nrdma_twins = rxe_a0\nrdma_twins = rxe_a0 rxe_a0\n"
                                    "rdma_twins = a b c\n");
        CHECK(load("badtwins.conf", true, &c, errors, sizeof(errors)) == -EINVAL);
        CHECK(strstr(errors,
                     "badtwins.conf:2: rdma_twins=\"rxe_a0\": expected two different RDMA devices of "
                     "one port separated by a space") != NULL);
        CHECK(strstr(errors, "badtwins.conf:3: rdma_twins=\"rxe_a0 rxe_a0\"") != NULL);
        CHECK(strstr(errors, "badtwins.conf:4: rdma_twins=\"a b c\"") != NULL);
}

/* [probe] bandwidth_nice: 10 by default, 0 to 19, an error naming the range past it. */
static void test_bandwidth_nice(void)
{
        struct sparkd_config *c = NULL;
        char errors[1024];

        CHECK(load("none.conf", false, &c, errors, sizeof(errors)) == 0);
        CHECK(c && c->probe_bandwidth_nice == 10);
        conf_free(c);
        c = NULL;
        write_file("nice.conf", "[probe]\nbandwidth_nice = 0\n");
        CHECK(load("nice.conf", true, &c, errors, sizeof(errors)) == 0);
        CHECK(c && c->probe_bandwidth_nice == 0);
        conf_free(c);
        c = NULL;
        write_file("badnice.conf", "[probe]\nbandwidth_nice = 20\n");
        CHECK(load("badnice.conf", true, &c, errors, sizeof(errors)) == -EINVAL);
        CHECK(strstr(errors, "badnice.conf:2: bandwidth_nice=\"20\": expected a niceness from 0 to 19") !=
              NULL);
        conf_free(c);
}

static void test_diagnosis(void)
{
        struct sparkd_config *c = NULL;
        char errors[1024];

        CHECK(load("none.conf", false, &c, errors, sizeof(errors)) == 0);
        if (c)
                CHECK(c->diagnosis_healthy_gbps == 80 && c->diagnosis_stale_min_gbps == 8 &&
                      c->diagnosis_stale_max_gbps == 25);
        conf_free(c);
        c = NULL;

        write_file("diag.conf", "[diagnosis]\nhealthy_gbps = 5\nstale_min_gbps = 1\nstale_max_gbps = 3.5\n");
        CHECK(load("diag.conf", true, &c, errors, sizeof(errors)) == 0);
        if (c)
                CHECK(c->diagnosis_healthy_gbps == 5 && c->diagnosis_stale_max_gbps == 3.5);
        conf_free(c);
        c = NULL;

        write_file("baddiag.conf", "[diagnosis]\nhealthy_gbps = fast\nstale_min_gbps = -1\n");
        CHECK(load("baddiag.conf", true, &c, errors, sizeof(errors)) == -EINVAL);
        CHECK(strstr(errors, "baddiag.conf:2: healthy_gbps=\"fast\": expected Gb/s per rail") != NULL);
        CHECK(strstr(errors, "baddiag.conf:3: stale_min_gbps=\"-1\"") != NULL);

        /* Each value fine alone, the band above the healthy line: said once, with the numbers. */
        write_file("banddiag.conf", "[diagnosis]\nhealthy_gbps = 20\n");
        CHECK(load("banddiag.conf", true, &c, errors, sizeof(errors)) == -EINVAL);
        CHECK(strstr(errors, "banddiag.conf: [diagnosis] needs stale_min_gbps (8) < stale_max_gbps (25) < "
                             "healthy_gbps (20)") != NULL);
}

/* [cluster]: the shape and node count expected of the topology; auto and none by default. */
static void test_cluster(void)
{
        struct sparkd_config *c = NULL;
        char errors[1024];

        CHECK(load("none.conf", false, &c, errors, sizeof(errors)) == 0);
        if (c)
                CHECK(strcmp(c->cluster_topology, "auto") == 0 && c->cluster_nodes == 0);
        conf_free(c);
        c = NULL;

        write_file("cluster.conf", "[cluster]\ntopology = ring\nnodes = 4\n");
        CHECK(load("cluster.conf", true, &c, errors, sizeof(errors)) == 0);
        if (c)
                CHECK(strcmp(c->cluster_topology, "ring") == 0 && c->cluster_nodes == 4);
        conf_free(c);
        c = NULL;

        write_file("badcluster.conf", "[cluster]\ntopology = torus\nnodes = 300\n");
        CHECK(load("badcluster.conf", true, &c, errors, sizeof(errors)) == -EINVAL);
        CHECK(strstr(errors,
                     "badcluster.conf:2: topology=\"torus\": expected one of auto, pair, ring, mesh, "
                     "switch") != NULL);
        CHECK(strstr(errors, "badcluster.conf:3: nodes=\"300\": expected a number of nodes from 0 (no "
                             "expectation) to 254") != NULL);
}

/* [cluster] head: a node name, empty for none; a drop-in may take it back. */
static void test_cluster_head(void)
{
        struct sparkd_config *c = NULL;
        char errors[1024];

        CHECK(load("none.conf", false, &c, errors, sizeof(errors)) == 0);
        CHECK(c && c->cluster_head == NULL);
        conf_free(c);
        c = NULL;
        write_file("head.conf", "[cluster]\nhead = spark-a\n");
        CHECK(load("head.conf", true, &c, errors, sizeof(errors)) == 0);
        CHECK(c && c->cluster_head && strcmp(c->cluster_head, "spark-a") == 0);
        conf_free(c);
        c = NULL;
        mkdir(path_of("head.conf.d"), 0755);
        write_file("head.conf.d/50-none.conf", "[cluster]\nhead =\n");
        CHECK(load("head.conf", true, &c, errors, sizeof(errors)) == 0);
        CHECK(c && c->cluster_head == NULL);
        conf_free(c);
        c = NULL;
        write_file("badhead.conf", "[cluster]\nhead = spark a\n");
        CHECK(load("badhead.conf", true, &c, errors, sizeof(errors)) == -EINVAL);
        CHECK_STREQ(errors,
                    "badhead.conf:2: head=\"spark a\": expected a node name of 1 to 63 letters, digits, "
                    "'-', '_' or '.'\n");
}

static void test_cluster_forget_after(void)
{
        struct sparkd_config *c = NULL;
        char errors[1024];

        CHECK(load("none.conf", false, &c, errors, sizeof(errors)) == 0);
        if (c)
                CHECK(c->cluster_forget_after_usec == 24ULL * 3600 * 1000000);
        conf_free(c);
        c = NULL;

        write_file("cluster.conf", "[cluster]\nforget_after = 2h\n");
        CHECK(load("cluster.conf", true, &c, errors, sizeof(errors)) == 0);
        if (c)
                CHECK(c->cluster_forget_after_usec == 2ULL * 3600 * 1000000);
        conf_free(c);
        c = NULL;

        write_file("badcluster.conf", "[cluster]\nforget_after = 10s\n");
        CHECK(load("badcluster.conf", true, &c, errors, sizeof(errors)) == -EINVAL);
        CHECK(strstr(errors,
                     "badcluster.conf:2: forget_after=\"10s\": expected a duration from 1m to 30d") != NULL);
}

/* Only regular files of bounded size are read, without waiting: each other kind, as the main file
 * or a drop-in, is an error naming the path and why. */
static void test_files_that_are_not_config(void)
{
        struct sparkd_config *c = NULL;
        char errors[2048];
        FILE *f;

        CHECK(mkfifo(path_of("fifo.conf"), 0600) == 0);
        CHECK(load("fifo.conf", true, &c, errors, sizeof(errors)) == -EINVAL);
        CHECK_STREQ(errors, "fifo.conf is a FIFO, not a regular file\n");

        mkdir(path_of("dir.conf"), 0755);
        CHECK(load("dir.conf", true, &c, errors, sizeof(errors)) == -EINVAL);
        CHECK_STREQ(errors, "dir.conf is a directory, not a regular file\n");

        CHECK(symlink("/dev/zero", path_of("zero.conf")) == 0);
        CHECK(load("zero.conf", true, &c, errors, sizeof(errors)) == -EINVAL);
        CHECK_STREQ(errors, "zero.conf is a character device, not a regular file\n");

        /* The size is refused before anything is read: a file of zeros costs nothing. */
        f = fopen(path_of("huge.conf"), "w");
        CHECK(f && ftruncate(fileno(f), 300 * 1024 * 1024) == 0);
        if (f)
                fclose(f);
        CHECK(load("huge.conf", true, &c, errors, sizeof(errors)) == -EINVAL);
        CHECK_STREQ(errors, "huge.conf is 300.0 MiB; at most 1.0 MiB is read\n");
        unlink(path_of("huge.conf"));

        /* The default path: a dangling symlink is a mistake, not an absent file. */
        CHECK(symlink("nowhere.conf", path_of("dangling.conf")) == 0);
        CHECK(load("dangling.conf", false, &c, errors, sizeof(errors)) == -EINVAL);
        CHECK_STREQ(errors, "dangling.conf: a symlink to nowhere.conf, which does not exist; expected a "
                            "regular file\n");
}

static void test_dropins_that_are_not_config(void)
{
        struct sparkd_config *c = NULL;
        char errors[2048];

        mkdir(path_of("kinds.conf.d"), 0755);
        write_file("kinds.conf", "[daemon]\nnode_name = base\n");
        write_file("kinds.conf.d/real.txt", "[daemon]\nnode_name = linked\n");
        CHECK(symlink("real.txt", path_of("kinds.conf.d/10-link.conf")) == 0);
        CHECK(load("kinds.conf", true, &c, errors, sizeof(errors)) == 0);
        CHECK_STREQ(errors, "");
        if (c)
                CHECK_STREQ(c->node_name, "linked"); /* a symlink to a regular file is fine */
        conf_free(c);
        c = NULL;

        CHECK(symlink("gone.conf", path_of("kinds.conf.d/20-dangling.conf")) == 0);
        CHECK(symlink("30-loop.conf", path_of("kinds.conf.d/30-loop.conf")) == 0);
        mkdir(path_of("kinds.conf.d/40-dir.conf"), 0755);
        CHECK(mkfifo(path_of("kinds.conf.d/50-fifo.conf"), 0600) == 0);
        CHECK(symlink("/dev/zero", path_of("kinds.conf.d/60-zero.conf")) == 0);
        CHECK(load("kinds.conf", true, &c, errors, sizeof(errors)) == -EINVAL);
        CHECK(c == NULL);
        CHECK_STREQ(
                errors,
                "kinds.conf.d/20-dangling.conf: a symlink to gone.conf, which does not exist; expected a "
                "regular file\n"
                "kinds.conf.d/30-loop.conf: a symlink to 30-loop.conf, which is a symlink loop; expected a "
                "regular file\n"
                "kinds.conf.d/40-dir.conf is a directory, not a regular file\n"
                "kinds.conf.d/50-fifo.conf is a FIFO, not a regular file\n"
                "kinds.conf.d/60-zero.conf is a character device, not a regular file\n");
}

/* A NUL byte would cut the line short and the rest would be taken without a word. */
static void test_nul_byte(void)
{
        static const char text[] = "[daemon]\nnode_name = ab\0cd\nmode = audit\n";
        struct sparkd_config *c = NULL;
        char errors[1024];
        FILE *f = fopen(path_of("nul.conf"), "w");

        CHECK(f && fwrite(text, 1, sizeof(text) - 1, f) == sizeof(text) - 1);
        if (f)
                fclose(f);
        CHECK(load("nul.conf", true, &c, errors, sizeof(errors)) == -EINVAL);
        CHECK(c == NULL);
        CHECK_STREQ(errors, "nul.conf:2: a NUL byte; the config is text\n");
}

int main(void)
{
        if (!mkdtemp(dir)) {
                perror("mkdtemp");
                return 1;
        }
        RUN(test_defaults_without_file);
        RUN(test_missing_named_file);
        RUN(test_valid_file);
        RUN(test_every_error_has_file_and_line);
        RUN(test_syntax_errors);
        RUN(test_static_peers_of_a_cluster);
        RUN(test_dropins_in_name_order);
        RUN(test_dropins_without_main_file);
        RUN(test_fabric_and_sysctl);
        RUN(test_probe_kinds);
        RUN(test_bandwidth_nice);
        RUN(test_rdma_twins);
        RUN(test_diagnosis);
        RUN(test_cluster);
        RUN(test_files_that_are_not_config);
        RUN(test_dropins_that_are_not_config);
        RUN(test_nul_byte);
        RUN(test_cluster_head);
        RUN(test_cluster_forget_after);
        {
                char cmd[600];

                snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
                if (system(cmd) != 0)
                        fprintf(stderr, "could not remove %s\n", dir);
        }
        return test_result();
}
