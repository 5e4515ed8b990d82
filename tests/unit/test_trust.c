/*
 * What a compromised peer or a host on the wire may send, at the door and at the ways out: a
 * node name that would end a shell comment, a relayed neighbour table poisoning the netplan file,
 * an LLDP SysName past what a neighbour table takes, a name that fakes a log line. Each case
 * drives the code a real message or table reaches, through the interfaces the daemon and sparkc
 * use.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "client/report.h"
#include "common/node_key.h"
#include "daemon/base/log.h"
#include "daemon/fabric/netplan_write.h"
#include "daemon/fabric/topology_model.h"
#include "daemon/peers/peer_message.h"
#include "golden.h"
#include "test.h"

#define EVIL_NAME "\ntouch PWNED #"

static char *read_all(const char *path)
{
        return golden_read_file(path);
}

/* The env result a daemon gives when the head is a node named EVIL_NAME. */
static json_object *env_with_evil_head(void)
{
        json_object *env = json_object_new_object(), *vars = json_object_new_array(), *v;

        json_object_object_add(env, "fabric_found", json_object_new_boolean(true));
        json_object_object_add(env, "mode", json_object_new_string("auto"));
        json_object_object_add(env, "mode_reason", json_object_new_string("a reason\nexport EVIL=1"));
        v = json_object_new_object();
        json_object_object_add(v, "name", json_object_new_string("MASTER_ADDR"));
        json_object_object_add(v, "value", json_object_new_string("10.88.0.66'; touch PWNED2; '"));
        json_object_object_add(v, "why", json_object_new_string("the head " EVIL_NAME "'s address"));
        json_object_array_add(vars, v);
        v = json_object_new_object();
        json_object_object_add(v, "name", json_object_new_string("MASTER_PORT"));
        json_object_object_add(v, "value", json_object_new_string("29500"));
        json_object_object_add(v, "why", json_object_new_string("% the port\\"));
        json_object_array_add(vars, v);
        json_object_object_add(env, "variables", vars);
        return env;
}

/* eval "$(sparkc env --for torchrun)" under env -i and set -u in an empty directory: no command
 * runs, only MASTER_ADDR and MASTER_PORT are defined, with their values. */
static void test_env_sh_runs_nothing(void)
{
        char dir[] = "/tmp/sparkd-trust-XXXXXX", path[128], cmd[512], *vars;
        json_object *env = env_with_evil_head();
        FILE *f;

        CHECK(mkdtemp(dir) != NULL);
        snprintf(path, sizeof(path), "%s/env.sh", dir);
        f = fopen(path, "w");
        CHECK(f && report_env(f, stderr, env, ENV_FORMAT_SH) == 0);
        fclose(f);
        snprintf(cmd, sizeof(cmd),
                 "cd %s && env -i /bin/sh -uc 'eval \"$(cat env.sh)\"; env' | grep -v "
                 "'^PWD=\\|^SHLVL=\\|^_=' "
                 "| sort >vars",
                 dir);
        CHECK(system(cmd) == 0);
        snprintf(path, sizeof(path), "%s/PWNED", dir);
        CHECK(access(path, F_OK) < 0);
        snprintf(path, sizeof(path), "%s/PWNED2", dir);
        CHECK(access(path, F_OK) < 0);
        snprintf(path, sizeof(path), "%s/vars", dir);
        vars = read_all(path);
        CHECK_STREQ(vars, "MASTER_ADDR=10.88.0.66'; touch PWNED2; '\nMASTER_PORT=29500\n");
        free(vars);
        snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
        CHECK(system(cmd) == 0);
        json_object_put(env);
}

/* The docker env-file and the systemd drop-in: every line a comment or one assignment, none
 * begun by the evil name's second line. */
static void test_env_files_keep_lines(void)
{
        static const enum env_format formats[] = { ENV_FORMAT_DOCKER, ENV_FORMAT_SYSTEMD };
        json_object *env = env_with_evil_head();

        for (size_t i = 0; i < 2; i++) {
                char *text = NULL, *line, *save = NULL;
                size_t size = 0;
                FILE *f = open_memstream(&text, &size);
                int assignments = 0;

                CHECK(report_env(f, stderr, env, formats[i]) == 0);
                fclose(f);
                for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
                        if (line[0] == '#' || strcmp(line, "[Service]") == 0)
                                continue;
                        assignments++;
                        CHECK(strncmp(line,
                                      formats[i] == ENV_FORMAT_DOCKER ? "MASTER_" : "Environment=\"MASTER_",
                                      formats[i] == ENV_FORMAT_DOCKER ? 7 : 20) == 0);
                }
                CHECK(assignments == 2);
                free(text);
        }
        json_object_put(env);
}

/* A hello naming its node EVIL_NAME, or with an escape sequence, is refused where it enters. */
static void test_hello_name_checked(void)
{
        static const char *const names[] = { EVIL_NAME, "spark\x1b[2J", "a b", "" };
        struct peer_hello h;

        for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
                json_object *m = json_object_new_object();

                json_object_object_add(m, "type", json_object_new_string("hello"));
                json_object_object_add(m, "proto", json_object_new_int(1));
                json_object_object_add(m, "node_id",
                                       json_object_new_string("eeeeeeeeeeeeeeeeeeeeeeeeeeeeeeee"));
                json_object_object_add(m, "name", json_object_new_string(names[i]));
                CHECK(peer_message_read_hello(m, &h) == -EBADMSG);
                json_object_object_add(m, "name", json_object_new_string("spark-b.lab_1"));
                CHECK(peer_message_read_hello(m, &h) == 0);
                json_object_put(m);
        }
}

/* A hello of key for the session whose binding is all `fill` bytes, sent by the dialer. */
static json_object *signed_hello(EVP_PKEY *key, unsigned char fill, const char *role)
{
        char id[33], pub[NODE_KEY_HEX_LEN + 1], sig[NODE_SIG_HEX_LEN + 1], text[256], binding[65];
        json_object *m = json_object_new_object();

        for (int i = 0; i < 32; i++)
                snprintf(binding + 2 * i, 3, "%02x", fill);
        CHECK(node_key_id(key, id) == 0 && node_key_public_hex(key, pub) == 0);
        snprintf(text, sizeof(text), "sparkd-hello\n%s\n%s\n%s\n%s\n", role, binding, id,
                 "dddddddddddddddddddddddddddddddd");
        CHECK(node_key_sign(key, text, strlen(text), sig) == 0);
        json_object_object_add(m, "type", json_object_new_string("hello"));
        json_object_object_add(m, "proto", json_object_new_int(PEER_PROTO));
        json_object_object_add(m, "node_id", json_object_new_string(id));
        json_object_object_add(m, "instance", json_object_new_string("dddddddddddddddddddddddddddddddd"));
        json_object_object_add(m, "name", json_object_new_string("spark-b"));
        json_object_object_add(m, "key", json_object_new_string(pub));
        json_object_object_add(m, "sig", json_object_new_string(sig));
        return m;
}

/* A hello proves its node id for this session only: another session's, the other role's, another
 * key's for that id, or one without a key (protocol 1) is refused. */
static void test_hello_proves_its_key(void)
{
        EVP_PKEY *key = node_key_generate(), *other = node_key_generate();
        unsigned char session[32], elsewhere[32];
        char why[320], pub[NODE_KEY_HEX_LEN + 1];
        struct peer_hello h;
        json_object *m;

        memset(session, 0xab, sizeof(session));
        memset(elsewhere, 0xcd, sizeof(elsewhere));
        m = signed_hello(key, 0xab, "dialer");
        CHECK(peer_message_read_hello(m, &h) == 0);
        CHECK(peer_message_prove_hello(&h, session, sizeof(session), true, why, sizeof(why)) == 0);
        /* Replayed on another session, or reflected back as the listener's. */
        CHECK(peer_message_prove_hello(&h, elsewhere, sizeof(elsewhere), true, why, sizeof(why)) ==
              -EKEYREJECTED);
        CHECK(strstr(why, "does not verify for this TLS session") != NULL);
        CHECK(peer_message_prove_hello(&h, session, sizeof(session), false, why, sizeof(why)) ==
              -EKEYREJECTED);
        /* Another key claiming the id. */
        CHECK(node_key_public_hex(other, pub) == 0);
        json_object_object_add(m, "key", json_object_new_string(pub));
        CHECK(peer_message_read_hello(m, &h) == 0);
        CHECK(peer_message_prove_hello(&h, session, sizeof(session), true, why, sizeof(why)) ==
              -EKEYREJECTED);
        CHECK(strstr(why, "with a key that names node") != NULL);
        /* A key cut short is not a hello of this protocol. */
        pub[40] = '\0';
        json_object_object_add(m, "key", json_object_new_string(pub));
        CHECK(peer_message_read_hello(m, &h) == -EBADMSG);
        json_object_put(m);
        /* Protocol 1: read, then refused in words. */
        m = signed_hello(key, 0xab, "dialer");
        json_object_object_add(m, "proto", json_object_new_int(1));
        json_object_object_del(m, "key");
        json_object_object_del(m, "sig");
        CHECK(peer_message_read_hello(m, &h) == 0);
        CHECK(peer_message_prove_hello(&h, session, sizeof(session), true, why, sizeof(why)) ==
              -EPROTONOSUPPORT);
        CHECK(strstr(why, "run one sparkd version on every node") != NULL);
        json_object_put(m);
        EVP_PKEY_free(key);
        EVP_PKEY_free(other);
}

#define VICTIM_ID "0000000000000000000000005a00aaaa"
#define DECOY_ID  "0000000000000000000000005a00bbbb"
#define OTHER_ID  "0000000000000000000000005a00cccc"
#define POISON    "lo:\n      mtu: 1280\n    eth0:\n      dhcp4: false\n    zz"

static json_object *end(const char *name, const char *id)
{
        json_object *e = json_object_new_object();

        json_object_object_add(e, "name", json_object_new_string(name));
        json_object_object_add(e, "node_id", json_object_new_string(id));
        json_object_object_add(e, "mtu", json_object_new_int(9000));
        return e;
}

static json_object *link_of(const char *a_name, const char *a_id, const char *a_netdev, const char *a_addr,
                            const char *b_name, const char *b_id, const char *b_addr)
{
        json_object *l = json_object_new_object(), *twins = json_object_new_array(),
                    *t = json_object_new_object(), *addresses = json_object_new_object();

        json_object_object_add(l, "a", end(a_name, a_id));
        json_object_object_add(l, "b", end(b_name, b_id));
        json_object_object_add(t, "a", json_object_new_string(a_netdev));
        json_object_object_add(t, "b", json_object_new_string("p9"));
        json_object_object_add(addresses, a_name, json_object_new_string(a_addr));
        json_object_object_add(addresses, b_name, json_object_new_string(b_addr));
        json_object_object_add(t, "addresses", addresses);
        json_object_array_add(twins, t);
        json_object_object_add(l, "twin_subnets", twins);
        return l;
}

/* A map with the victim, a node invented by a relay under the victim's name, and a third node:
 * the invented node's link carries a netdev that is YAML. The victim's file holds its own
 * netdev only. */
static void test_netplan_from_own_id(void)
{
        json_object *map = json_object_new_object(), *nodes = json_object_new_array(),
                    *links = json_object_new_array(), *result = NULL;
        char why[640];
        const char *text;
        struct fabric_facts f = { 0 };

        json_object_array_add(nodes, end("victim", VICTIM_ID));
        json_object_array_add(nodes, end("victim", DECOY_ID));
        json_object_array_add(nodes, end("other", OTHER_ID));
        json_object_array_add(
                links, link_of("victim", VICTIM_ID, "p0", "10.0.0.1/24", "other", OTHER_ID, "10.0.0.2/24"));
        json_object_array_add(
                links, link_of("victim", DECOY_ID, POISON, "10.0.1.1/24", "other", OTHER_ID, "10.0.1.2/24"));
        json_object_object_add(map, "nodes", nodes);
        json_object_object_add(map, "links", links);
        f.netifs.v = calloc(1, sizeof(*f.netifs.v));
        f.netifs.n = 1;
        snprintf(f.netifs.v[0].name, sizeof(f.netifs.v[0].name), "p0");
        CHECK(netplan_write_plan(map, VICTIM_ID, &f, "/etc/netplan/60-sparkd-fabric.yaml", &result, why,
                                 sizeof(why)) == 0);
        text = json_object_get_string(json_object_object_get(result, "yaml"));
        CHECK(text && strstr(text, "p0") && strstr(text, "10.0.0.1/24"));
        CHECK(text && !strstr(text, "dhcp4") && !strstr(text, "eth0") && !strstr(text, "10.0.1.1"));
        json_object_put(result);
        fabric_facts_free(&f);
        json_object_put(map);
}

/* A neighbour table whose LLDP neighbour has a legal 200-byte SysName is taken, the name cut. */
static void test_long_sysname_kept(void)
{
        char sysname[201], why[512];
        json_object *section = json_object_new_object(), *ports = json_object_new_array(),
                    *port = json_object_new_object(), *nb = json_object_new_object();
        struct topology_node *n = NULL;

        memset(sysname, 'x', 200);
        sysname[200] = '\0';
        json_object_object_add(nb, "source", json_object_new_string("lldp"));
        json_object_object_add(nb, "sysname", json_object_new_string(sysname));
        json_object_object_add(nb, "port_descr", json_object_new_string(sysname));
        json_object_object_add(port, "netdev", json_object_new_string("p0"));
        json_object_object_add(port, "neighbour", nb);
        json_object_array_add(ports, port);
        json_object_object_add(section, "ports", ports);
        CHECK(topology_node_parse(VICTIM_ID, "victim", section, &n, why, sizeof(why)) == 0);
        CHECK(n && n->n_ports == 1 && strlen(n->ports[0].neighbour.sysname) == TOPOLOGY_NAME_MAX - 1);
        topology_node_free(n);
        json_object_put(section);
}

/* A log message holding a peer's name with a newline and an escape sequence is one line, the
 * bytes shown escaped. */
static void test_log_one_line(void)
{
        char path[] = "/tmp/sparkd-trust-log-XXXXXX", *text;
        int fd = mkstemp(path), saved = dup(STDERR_FILENO);

        CHECK(fd >= 0 && saved >= 0);
        log_open(LOG_TARGET_STDERR, false);
        dup2(fd, STDERR_FILENO);
        log_info("peer %s refused", "x\x1b[31m\nerr: a fake line");
        dup2(saved, STDERR_FILENO);
        close(saved);
        close(fd);
        text = read_all(path);
        CHECK(text && strchr(text, '\n') == text + strlen(text) - 1 && !strchr(text, '\x1b'));
        free(text);
        unlink(path);
}

int main(void)
{
        RUN(test_env_sh_runs_nothing);
        RUN(test_env_files_keep_lines);
        RUN(test_hello_name_checked);
        RUN(test_hello_proves_its_key);
        RUN(test_netplan_from_own_id);
        RUN(test_long_sysname_kept);
        RUN(test_log_one_line);
        return test_result();
}
