/* Outside text at the door (text_check.h) and at each way out (text_escape.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/text_check.h"
#include "common/text_escape.h"
#include "test.h"

static void test_names(void)
{
        CHECK(text_is_node_name("spark-a.lab_1"));
        CHECK(text_is_node_name("012345678901234567890123456789012345678901234567890123456789012"));
        CHECK(!text_is_node_name("0123456789012345678901234567890123456789012345678901234567890123"));
        CHECK(!text_is_node_name(""));
        CHECK(!text_is_node_name("a b"));
        CHECK(!text_is_node_name("\ntouch PWNED #"));
        CHECK(!text_is_node_name("caf\xc3\xa9"));
        CHECK(text_is_netdev_name("enp1s0f0np0"));
        CHECK(text_is_netdev_name("bond0.100"));
        CHECK(text_is_netdev_name("123456789012345"));
        CHECK(!text_is_netdev_name("1234567890123456"));
        CHECK(!text_is_netdev_name("."));
        CHECK(!text_is_netdev_name(".."));
        CHECK(!text_is_netdev_name("eth0:1"));
        CHECK(!text_is_netdev_name("a/b"));
        CHECK(!text_is_netdev_name("lo:\n  mtu: 1280"));
        CHECK(!text_is_netdev_name("^eth0"));
        CHECK(!text_is_netdev_name("eth0,eth1"));
        CHECK(!text_is_netdev_name("%i"));
        CHECK(text_is_ip_prefix("10.0.0.1/24"));
        CHECK(text_is_ip_prefix("fe80::1/64"));
        CHECK(!text_is_ip_prefix("10.0.0.1/33"));
        CHECK(!text_is_ip_prefix("10.0.0.1"));
        CHECK(!text_is_ip_prefix("10.0.0.1/24 slots=64"));
        CHECK(!text_is_ip_prefix("/24"));
}

static void clean(const char *in, size_t len, size_t size, const char *want)
{
        char out[256];

        CHECK(text_clean(out, size, in, len) == strlen(want));
        CHECK_STREQ(out, want);
        CHECK(text_is_clean(out, size));
}

static void test_clean(void)
{
        char long_name[201], cut[64];

        clean("evil\xe9\xff\x1b[31m\nerr: fake", 22, 64, "evil??[31m err: fake");
        clean("caf\xc3\xa9", 5, 64, "caf\xc3\xa9");
        clean("a\0b", 3, 64, "ab");
        clean("\xed\xa0\x80", 3, 64, "???");  /* a surrogate */
        clean("\xc0\x80", 2, 64, "??");       /* an overlong NUL */
        clean("x\xe2\x80\xaey", 5, 64, "xy"); /* a bidirectional override */
        clean("\xc2\x9b"
              "2J",
              4, 64, "2J");              /* C1 CSI */
        clean("ab\xc3\xa9", 4, 4, "ab"); /* never cut inside a character */
        memset(long_name, 'L', 200);
        long_name[200] = '\0';
        memset(cut, 'L', 63);
        cut[63] = '\0';
        clean(long_name, 200, 64, cut);
        CHECK(!text_is_clean("a\x1b", 64));
        CHECK(!text_is_clean("\xff", 64));
        CHECK(!text_is_clean("abc", 3));
}

static char *escaped(void (*f)(FILE *, const char *), const char *s)
{
        char *text = NULL;
        size_t size = 0;
        FILE *m = open_memstream(&text, &size);

        f(m, s);
        fclose(m);
        return text;
}

static void check_escape(void (*f)(FILE *, const char *), const char *s, const char *want)
{
        char *got = escaped(f, s);

        CHECK_STREQ(got, want);
        free(got);
}

static void test_escapes(void)
{
        char *text = NULL, buf[16];
        size_t size = 0;
        FILE *m;
        json_object *o =
                json_tokener_parse("{\"a\\u001b\": [\"x\\ny\", 1, {\"k\": \"\\u009b\"}], \"b\": \"ok\"}");

        check_escape(escape_sh_value, "it's $(id)\n", "'it'\\''s $(id)\n'");
        check_escape(escape_comment, "\ntouch PWNED # \\", "\\x0atouch PWNED # \\\\");
        check_escape(escape_systemd_value, "50% \"q\" \\ \n", "50%% \\\"q\\\" \\\\ \\x0a");
        check_escape(escape_yaml, "lo:\n  mtu: \"1\"", "\"lo:\\x0a  mtu: \\\"1\\\"\"");
        check_escape(escape_term, "\x1b[2J\xe9 caf\xc3\xa9", "\\x1b[2J\\xe9 caf\xc3\xa9");
        m = open_memstream(&text, &size);
        CHECK(escape_docker_value(m, "a\nB=1") == -EINVAL);
        CHECK(escape_docker_value(m, "10.0.0.1 # x") == 0);
        fclose(m);
        CHECK_STREQ(text, "10.0.0.1 # x");
        free(text);
        CHECK(escape_log(buf, sizeof(buf), "a\nb\x1b") == 10);
        CHECK_STREQ(buf, "a\\x0ab\\x1b");
        CHECK(escape_log(buf, 8, "abcdef\xc3\xa9") == 6); /* cut before the character */
        CHECK(escape_term_json(o) == 0);
        CHECK_STREQ(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN),
                    "{\"b\":\"ok\",\"a\\\\x1b\":[\"x\\\\x0ay\",1,{\"k\":\"\\\\xc2\\\\x9b\"}]}");
        json_object_put(o);
}

int main(void)
{
        RUN(test_names);
        RUN(test_clean);
        RUN(test_escapes);
        return test_result();
}
