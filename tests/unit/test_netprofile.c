/* NetworkManager keyfiles and netplan YAML: what each says about a netdev's MTU, the errors with
 * their file and line, netplan's merge of later files, and the doctor's mtu-profile check. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/strutil.h"
#include "daemon/fabric/doctor.h"
#include "inventory/fabric.h"
#include "inventory/netprofile.h"
#include "test.h"

#define NM_FILE "/etc/NetworkManager/system-connections/fabric0.nmconnection"

static const char keyfile_1500[] = "# made by nmcli\n"
                                   "[connection]\n"
                                   "id=fabric0\n"
                                   "type=ethernet\n"
                                   "interface-name=enp1s0f1np1\n"
                                   "\n"
                                   "[ethernet]\n"
                                   "mtu=1500\n"
                                   "\n"
                                   "[ipv4]\n"
                                   "method=manual\n";

static void test_keyfile(void)
{
        struct netprofiles ps = { 0 };

        CHECK(netprofiles_parse_keyfile(&ps, NM_FILE, keyfile_1500) == 0);
        CHECK(ps.n == 1 && !ps.warnings);
        CHECK(ps.v[0].manager == NETPROFILE_NETWORKMANAGER);
        CHECK_STREQ(ps.v[0].name, "fabric0");
        CHECK_STREQ(ps.v[0].ifname, "enp1s0f1np1");
        CHECK(ps.v[0].mtu == 1500 && ps.v[0].line == 8);
        CHECK(netprofile_matches(&ps.v[0], "enp1s0f1np1", ""));
        CHECK(!netprofile_matches(&ps.v[0], "enp1s0f1np", ""));
        /* The long setting name, no id (the file name is the id), mtu 0 = automatic. */
        CHECK(netprofiles_parse_keyfile(&ps, "/etc/NetworkManager/system-connections/rail 2.nmconnection",
                                        "[connection]\ntype=802-3-ethernet\ninterface-name = enP2p1s0f1np1\n"
                                        "[802-3-ethernet]\nmtu = 0\n") == 0);
        CHECK(ps.n == 2);
        CHECK_STREQ(ps.v[1].name, "rail 2");
        CHECK_STREQ(ps.v[1].ifname, "enP2p1s0f1np1");
        CHECK(ps.v[1].mtu == 0);
        /* Only by MAC address (in any case); not Ethernet at all. */
        CHECK(netprofiles_parse_keyfile(
                      &ps, NM_FILE,
                      "[connection]\nid=m\ntype=ethernet\n[ethernet]\nmac-address=AA:BB:CC:DD:EE:FF\n"
                      "mtu=1500\n") == 0);
        CHECK(ps.n == 3 && !netprofile_matches(&ps.v[2], "enp1s0f1np1", "aa:bb:cc:dd:ee:00"));
        CHECK(ps.n == 3 && netprofile_matches(&ps.v[2], "enp1s0f1np1", "aa:bb:cc:dd:ee:ff"));
        CHECK(netprofiles_parse_keyfile(&ps, NM_FILE,
                                        "[connection]\nid=w\ntype=wifi\ninterface-name=wlan0\n") == 0);
        CHECK(ps.n == 3);
        CHECK(!ps.warnings);
        netprofiles_free(&ps);
}

static void test_keyfile_errors(void)
{
        struct netprofiles ps = { 0 };

        CHECK(netprofiles_parse_keyfile(&ps, NM_FILE, "id=x\n") == -EINVAL);
        CHECK(netprofiles_parse_keyfile(&ps, NM_FILE, "[connection]\n\nid x\n") == -EINVAL);
        CHECK(netprofiles_parse_keyfile(&ps, NM_FILE,
                                        "[connection]\ntype=ethernet\n[ethernet]\nmtu=jumbo\n") == -EINVAL);
        CHECK(netprofiles_parse_keyfile(&ps, NM_FILE, "[connection\n") == -EINVAL);
        CHECK(ps.n == 0);
        CHECK(ps.warnings && ps.warnings[0] && ps.warnings[1] && ps.warnings[2] && ps.warnings[3]);
        if (ps.warnings && ps.warnings[3]) {
                CHECK_STREQ(ps.warnings[0], NM_FILE ":1: a key before the first [section]");
                CHECK_STREQ(ps.warnings[1], NM_FILE ":3: expected KEY=VALUE");
                CHECK_STREQ(ps.warnings[2],
                            NM_FILE ":4: mtu \"jumbo\" is not 0 or a number from 68 to 65535");
                CHECK_STREQ(ps.warnings[3], NM_FILE ":1: expected a [section] line");
        }
        netprofiles_free(&ps);
}

static int parse_netplan(struct netprofiles *ps, const char *file, const char *text)
{
        return netprofiles_parse_netplan(ps, file, text, strlen(text));
}

static void test_netplan(void)
{
        struct netprofiles ps = { 0 };

        CHECK(parse_netplan(&ps, "/etc/netplan/50-cloud-init.yaml",
                            "network:\n"
                            "  version: 2\n"
                            "  ethernets:\n"
                            "    eno1: {dhcp4: true}\n"
                            "    enp65s0f0np0:\n"
                            "      addresses: [192.168.100.1/24]\n"
                            "      mtu: 1500\n"
                            "    rails:\n"
                            "      match:\n"
                            "        name: \"enp1s0f*\"\n"
                            "      mtu: 9000\n"
                            "    byname:\n"
                            "      match: {macaddress: \"aa:bb:cc:dd:ee:ff\"}\n"
                            "      set-name: fab0\n"
                            "    bymac:\n"
                            "      match: {macaddress: \"aa:bb:cc:dd:ee:00\"}\n"
                            "      mtu: 1500\n"
                            "    bydriver:\n"
                            "      match: {driver: mlx5_core}\n"
                            "      mtu: 1500\n") == 0);
        CHECK(ps.n == 6 && !ps.warnings);
        if (ps.n == 6) {
                CHECK_STREQ(ps.v[0].name, "eno1");
                CHECK(ps.v[0].mtu == 0);
                CHECK_STREQ(ps.v[1].name, "enp65s0f0np0");
                CHECK(ps.v[1].mtu == 1500 && ps.v[1].line == 7);
                CHECK_STREQ(ps.v[1].renderer, "networkd");
                CHECK(netprofile_matches(&ps.v[1], "enp65s0f0np0", ""));
                CHECK(netprofile_matches(&ps.v[2], "enp1s0f1np1", "") && ps.v[2].mtu == 9000);
                CHECK(!netprofile_matches(&ps.v[2], "enP2p1s0f1np1", ""));
                /* set-name: the renamed netdev with that MAC address. */
                CHECK(netprofile_matches(&ps.v[3], "fab0", "AA:BB:CC:DD:EE:FF"));
                CHECK(!netprofile_matches(&ps.v[3], "fab0", "aa:bb:cc:dd:ee:00"));
                CHECK(netprofile_matches(&ps.v[4], "enp1s0f0np0", "aa:bb:cc:dd:ee:00"));
                CHECK(!netprofile_matches(&ps.v[4], "bymac", ""));
                /* By driver: not judged, matches nothing. */
                CHECK_STREQ(ps.v[5].other_match, "driver");
                CHECK(!netprofile_matches(&ps.v[5], "bydriver", ""));
        }
        /* A later file overrides the MTU of the same id, as netplan merges; the renderer too. */
        CHECK(parse_netplan(&ps, "/etc/netplan/90-mtu.yaml",
                            "network:\n  renderer: NetworkManager\n  ethernets:\n    enp65s0f0np0:\n"
                            "      mtu: 9000\n") == 0);
        CHECK(ps.n == 6);
        if (ps.n == 6) {
                CHECK(ps.v[1].mtu == 9000 && ps.v[1].line == 5);
                CHECK_STREQ(ps.v[1].file, "/etc/netplan/90-mtu.yaml");
                CHECK_STREQ(ps.v[1].renderer, "NetworkManager");
        }
        /* Empty files and files about other things are no profiles. */
        CHECK(parse_netplan(&ps, "/etc/netplan/empty.yaml", "") == 0);
        CHECK(parse_netplan(&ps, "/etc/netplan/wifi.yaml", "network:\n  wifis:\n    wlan0: {}\n") == 0);
        CHECK(ps.n == 6 && !ps.warnings);
        netprofiles_free(&ps);
}

static void test_netplan_errors(void)
{
        struct netprofiles ps = { 0 };

        CHECK(parse_netplan(&ps, "/etc/netplan/a.yaml", "network:\n  ethernets:\n    x: [1\n") == -EINVAL);
        CHECK(parse_netplan(&ps, "/etc/netplan/b.yaml",
                            "network:\n  ethernets:\n    x:\n      mtu: big\n") == -EINVAL);
        CHECK(parse_netplan(&ps, "/etc/netplan/c.yaml", "network:\n  ethernets: [x]\n") == -EINVAL);
        CHECK(parse_netplan(&ps, "/etc/netplan/d.yaml", "- network\n") == -EINVAL);
        CHECK(ps.warnings && ps.warnings[0] && ps.warnings[1] && ps.warnings[2] && ps.warnings[3]);
        if (ps.warnings && ps.warnings[3]) {
                CHECK(strncmp(ps.warnings[0], "/etc/netplan/a.yaml:4: not YAML: ", 33) == 0);
                CHECK_STREQ(
                        ps.warnings[1],
                        "/etc/netplan/b.yaml:4: network.ethernets.x.mtu is not a number from 68 to 65535");
                CHECK_STREQ(ps.warnings[2], "/etc/netplan/c.yaml:2: network.ethernets must be a mapping");
                CHECK_STREQ(ps.warnings[3], "/etc/netplan/d.yaml:1: the document must be a mapping");
        }
        netprofiles_free(&ps);
}

/* The doctor's mtu-profile check for one configured fabric netdev with the given profiles. */
static json_object *profile_check(struct netprofiles *ps, bool is_admin_up, const char **status,
                                  const char **fix)
{
        struct netif n = { .name = "enp1s0f1np1",
                           .mac = "4c:bb:47:01:02:03",
                           .is_configured = true,
                           .is_admin_up = is_admin_up };
        struct fabric_facts f = { .netifs = { .v = &n, .n = 1 }, .profiles = *ps, .mtu_wanted = 9000 };
        json_object *doctor = doctor_run(&f), *checks, *v;

        *status = *fix = NULL;
        json_object_object_get_ex(doctor, "checks", &checks);
        for (size_t i = 0; i < json_object_array_length(checks); i++) {
                json_object *c = json_object_array_get_idx(checks, i), *id;

                json_object_object_get_ex(c, "id", &id);
                if (strcmp(json_object_get_string(id), "mtu-profile") != 0)
                        continue;
                json_object_object_get_ex(c, "status", &v);
                *status = json_object_get_string(v);
                if (json_object_object_get_ex(c, "fix", &v))
                        *fix = json_object_get_string(v);
        }
        return doctor;
}

static void test_doctor(void)
{
        struct netprofiles ps = { 0 };
        const char *status, *fix;
        json_object *d;

        /* Unmanaged. */
        d = profile_check(&ps, true, &status, &fix);
        CHECK_STREQ(status, "ok");
        json_object_put(d);
        /* NetworkManager will put 1500 back: the command that makes it agree. */
        CHECK(netprofiles_parse_keyfile(&ps, NM_FILE, keyfile_1500) == 0);
        d = profile_check(&ps, true, &status, &fix);
        CHECK_STREQ(status, "warn");
        CHECK_STREQ(fix, "nmcli connection modify fabric0 802-3-ethernet.mtu 9000");
        json_object_put(d);
        /* Nothing to warn about for a netdev that is down on purpose. */
        d = profile_check(&ps, false, &status, &fix);
        CHECK_STREQ(status, "ok");
        json_object_put(d);
        netprofiles_free(&ps);
        /* netplan: the key, its file and line, and netplan apply. */
        CHECK(parse_netplan(&ps, "/etc/netplan/01-fabric.yaml",
                            "network:\n  ethernets:\n    enp1s0f1np1:\n      mtu: 1500\n") == 0);
        d = profile_check(&ps, true, &status, &fix);
        CHECK_STREQ(status, "warn");
        CHECK_STREQ(fix,
                    "set network.ethernets.enp1s0f1np1.mtu: 9000 in /etc/netplan/01-fabric.yaml (line 4), "
                    "then run netplan apply");
        json_object_put(d);
        netprofiles_free(&ps);
        /* Profiles that agree, or set no MTU, give none. */
        CHECK(parse_netplan(&ps, "/etc/netplan/01-fabric.yaml",
                            "network:\n  ethernets:\n    enp1s0f1np1:\n      mtu: 9000\n") == 0);
        CHECK(netprofiles_parse_keyfile(
                      &ps, NM_FILE, "[connection]\nid=a b\ntype=ethernet\ninterface-name=enp1s0f1np1\n") ==
              0);
        d = profile_check(&ps, true, &status, &fix);
        CHECK_STREQ(status, "ok");
        CHECK(fix == NULL);
        json_object_put(d);
        netprofiles_free(&ps);
        /* A name with a blank is quoted for the shell. */
        CHECK(netprofiles_parse_keyfile(&ps, NM_FILE,
                                        "[connection]\nid=Wired connection 1\ntype=ethernet\n"
                                        "interface-name=enp1s0f1np1\n[ethernet]\nmtu=1500\n") == 0);
        d = profile_check(&ps, true, &status, &fix);
        CHECK_STREQ(fix, "nmcli connection modify 'Wired connection 1' 802-3-ethernet.mtu 9000");
        json_object_put(d);
        netprofiles_free(&ps);
        /* A cloud-init profile that finds the netdev by its MAC address. */
        CHECK(parse_netplan(
                      &ps, "/etc/netplan/50-cloud-init.yaml",
                      "network:\n  ethernets:\n    eth1:\n      match: {macaddress: \"4C:BB:47:01:02:03\"}\n"
                      "      mtu: 1500\n") == 0);
        d = profile_check(&ps, true, &status, &fix);
        CHECK_STREQ(status, "warn");
        CHECK_STREQ(fix, "set network.ethernets.eth1.mtu: 9000 in /etc/netplan/50-cloud-init.yaml (line 5), "
                         "then run netplan apply");
        json_object_put(d);
        netprofiles_free(&ps);
        /* Files only root may read (the daemon runs as its own user): said, not a warning. */
        CHECK(strv_push(&ps.unreadable, "/etc/NetworkManager/system-connections/a.nmconnection") == 0);
        d = profile_check(&ps, true, &status, &fix);
        CHECK_STREQ(status, "ok");
        CHECK(strstr(json_object_to_json_string(d), "1 network profile file is not checked") != NULL);
        json_object_put(d);
        /* ... but what it could read still counts. */
        CHECK(netprofiles_parse_keyfile(&ps, NM_FILE, keyfile_1500) == 0);
        d = profile_check(&ps, true, &status, &fix);
        CHECK_STREQ(status, "warn");
        CHECK(strstr(json_object_to_json_string(d), "a.nmconnection: sparkd may not read it") != NULL);
        json_object_put(d);
        netprofiles_free(&ps);
        /* A file that cannot be read warns: the doctor cannot tell what it will apply. */
        CHECK(parse_netplan(&ps, "/etc/netplan/01-fabric.yaml", "network: [\n") == -EINVAL);
        d = profile_check(&ps, true, &status, &fix);
        CHECK_STREQ(status, "warn");
        json_object_put(d);
        netprofiles_free(&ps);
}

static void test_read_host_root(void)
{
        struct netprofiles ps;
        char root[512];

        /* The fixture trees: spark-twins has NetworkManager keyfiles (one Wi-Fi), single-port netplan. */
        snprintf(root, sizeof(root), "%s/spark-twins", FIXTURES_DIR);
        CHECK(netprofiles_read(root, &ps) == 0);
        CHECK(ps.n == 2 && !ps.warnings);
        netprofiles_free(&ps);
        snprintf(root, sizeof(root), "%s/single-port/", FIXTURES_DIR);
        CHECK(netprofiles_read(root, &ps) == 0);
        CHECK(ps.n == 2 && !ps.warnings);
        if (ps.n == 2)
                CHECK_STREQ(ps.v[1].file, "/etc/netplan/50-cloud-init.yaml");
        netprofiles_free(&ps);
        /* No /etc at all: nothing manages anything. */
        snprintf(root, sizeof(root), "%s/malformed", FIXTURES_DIR);
        CHECK(netprofiles_read(root, &ps) == 0);
        CHECK(ps.n == 0 && !ps.warnings);
        netprofiles_free(&ps);
}

/* As another user than root, a keyfile only root may read is listed, not parsed or warned about. */
static void test_unreadable(void)
{
        char root[] = "/tmp/test-netprofile-XXXXXX", path[256];
        struct netprofiles ps;
        FILE *f;

        if (geteuid() != 0) {
                printf("skip test_unreadable: needs root to act as another user\n");
                return;
        }
        CHECK(mkdtemp(root) != NULL);
        CHECK(chmod(root, 0755) == 0);
        snprintf(path, sizeof(path), "%s/etc", root);
        CHECK(mkdir(path, 0755) == 0);
        snprintf(path, sizeof(path), "%s/etc/NetworkManager", root);
        CHECK(mkdir(path, 0755) == 0);
        snprintf(path, sizeof(path), "%s/etc/NetworkManager/system-connections", root);
        CHECK(mkdir(path, 0755) == 0);
        snprintf(path, sizeof(path), "%s/etc/NetworkManager/system-connections/fabric0.nmconnection", root);
        f = fopen(path, "w");
        CHECK(f != NULL);
        if (f) {
                fputs(keyfile_1500, f);
                fclose(f);
        }
        CHECK(chmod(path, 0600) == 0);
        CHECK(seteuid(65534) == 0);
        CHECK(netprofiles_read(root, &ps) == 0);
        CHECK(seteuid(0) == 0);
        CHECK(ps.n == 0 && !ps.warnings);
        CHECK(ps.unreadable && ps.unreadable[0] && !ps.unreadable[1]);
        if (ps.unreadable && ps.unreadable[0])
                CHECK_STREQ(ps.unreadable[0], NM_FILE);
        netprofiles_free(&ps);
        /* As root it is read. */
        CHECK(netprofiles_read(root, &ps) == 0);
        CHECK(ps.n == 1 && !ps.unreadable && ps.v[0].mtu == 1500);
        netprofiles_free(&ps);
        unlink(path);
        snprintf(path, sizeof(path), "%s/etc/NetworkManager/system-connections", root);
        rmdir(path);
        snprintf(path, sizeof(path), "%s/etc/NetworkManager", root);
        rmdir(path);
        snprintf(path, sizeof(path), "%s/etc", root);
        rmdir(path);
        rmdir(root);
}

int main(void)
{
        RUN(test_keyfile);
        RUN(test_keyfile_errors);
        RUN(test_netplan);
        RUN(test_netplan_errors);
        RUN(test_doctor);
        RUN(test_read_host_root);
        RUN(test_unreadable);
        return test_result();
}
