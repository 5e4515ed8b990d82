/* The LLDP reader's door: what lldpd says of each neighbour (the bytes a frame carried: chassis
 * and port ids, SysName, port description, up to 255 bytes of anything) made into this node's
 * neighbour table, the "neighbours" section every node reads. The input is the strings,
 * NUL-separated, for up to four neighbours and this node's chassis. The section must be JSON
 * another node reads strictly (valid UTF-8, no NUL), every text field clean and within 63 bytes,
 * and another node's topology engine must take it whole: an odd or long value changes a field,
 * never makes the table refused. A failure aborts. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/json_strict.h"
#include "common/text_check.h"
#include "daemon/fabric/neighbours.h"
#include "daemon/fabric/topology.h"
#include "fuzz.h"

#define MAX_NEIGHBOURS 4
#define FIELDS         (2 + MAX_NEIGHBOURS * 8)

static void check(bool ok)
{
        if (!ok)
                abort();
}

static void check_text_fields(json_object *o)
{
        static const char *const keys[] = { "chassis_id", "chassis_id_subtype", "sysname",
                                            "port_id",    "port_id_subtype",    "port_descr" };

        if (!o)
                return;
        for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
                json_object *v = json_object_object_get(o, keys[i]);

                check(!v || text_is_clean(json_object_get_string(v), TEXT_LLDP_SIZE));
        }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        static const char *const ifnames[] = { "p0", "p1", "p2", "p3" };
        struct lldp_table table = { .status = LLDP_RUNNING };
        json_object *links = json_object_new_array(), *section, *back = NULL;
        const char *field[FIELDS];
        struct topology_node *node = NULL;
        enum json_strict_error error;
        char why[512], *text;
        const char *json;
        size_t n = 0;

        if (size > 16384) {
                json_object_put(links);
                return 0;
        }
        text = malloc(size + 1);
        check(text != NULL);
        memcpy(text, data, size);
        text[size] = '\0';
        for (char *p = text; n < FIELDS && p <= text + size; p += strlen(p) + 1)
                field[n++] = p;
        for (size_t i = n; i < FIELDS; i++)
                field[i] = "";
        lldp_table_set_chassis(&table, field[0], field[1]);
        table.v = calloc(MAX_NEIGHBOURS, sizeof(*table.v));
        check(table.v != NULL);
        for (size_t i = 0; i < MAX_NEIGHBOURS; i++) {
                const char *const *f = field + 2 + i * 8;
                struct lldp_raw_neighbour raw = {
                        /* the local interface: one of ours, or whatever lldpd said */
                        .ifname = f[0][0] && f[0][0] < '4' ? ifnames[(unsigned char)f[0][0] % 4] : f[0],
                        .chassis_id = f[1],
                        .chassis_id_subtype = f[2],
                        .sysname = f[3],
                        .port_id = f[4],
                        .port_id_subtype = f[5],
                        .port_descr = f[6],
                        .mau_type = f[7][0] ? (unsigned char)f[7][0] : 0,
                        .is_bridge = f[7][0] && f[7][1],
                };
                json_object *l = json_object_new_object();

                lldp_neighbour_from_raw(&raw, &table.v[table.n++]);
                json_object_object_add(l, "name", json_object_new_string(ifnames[i]));
                json_object_object_add(l, "operstate", json_object_new_string("up"));
                json_object_array_add(links, l);
        }
        section = neighbours_build(links, &table, NULL);
        json = json_object_to_json_string_ext(section, JSON_C_TO_STRING_PLAIN);
        /* What a peer does with the summary carrying it: strict parsing, then the engine. */
        check(json_strict_parse(json, strlen(json), 16, &back, &error, why, sizeof(why)) == 0);
        check(text_is_clean(json_object_get_string(json_object_object_get(
                                    json_object_object_get(section, "chassis"), "name")),
                            TEXT_LLDP_SIZE));
        for (size_t i = 0; i < json_object_array_length(json_object_object_get(section, "ports")); i++)
                check_text_fields(json_object_object_get(
                        json_object_array_get_idx(json_object_object_get(section, "ports"), i),
                        "neighbour"));
        check(topology_node_parse("0123456789abcdef0123456789abcdef", "spark-a", back, &node, why,
                                  sizeof(why)) == 0);
        topology_node_free(node);
        json_object_put(back);
        json_object_put(section);
        json_object_put(links);
        lldp_table_clear(&table);
        free(text);
        return 0;
}
