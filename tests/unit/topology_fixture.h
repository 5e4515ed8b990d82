/* A topology map from a fixture of tests/fixtures/topology (NAME.json: every node's id, name and
 * "neighbours" section), as the engine derives it. The fixtures' ports carry what the hardware
 * says (netdev, twin, pci), never a port number: each table's "rail"s are computed here by the
 * numbering the daemon sends them with (neighbours_number_ports). */
#pragma once

#include <json-c/json.h>
#include <stdbool.h>

#include "daemon/fabric/neighbours.h"
#include "daemon/fabric/topology.h"
#include "test.h"

#ifndef TOPOLOGY_FIXTURES_DIR
#error "TOPOLOGY_FIXTURES_DIR must name tests/fixtures/topology (meson passes it)"
#endif

#define MAX_TABLES 8

static inline json_object *topology_fixture_load(const char *name)
{
        char path[512];

        snprintf(path, sizeof(path), "%s/%s.json", TOPOLOGY_FIXTURES_DIR, name);
        return json_object_from_file(path);
}

/* Reverses a json array in place (a new order of the same elements). */
static inline void reverse_array(json_object *a)
{
        size_t n = json_object_array_length(a);
        json_object *copy[64];

        for (size_t i = 0; i < n && i < 64; i++)
                copy[i] = json_object_get(json_object_array_get_idx(a, i));
        for (size_t i = 0; i < n && i < 64; i++)
                json_object_array_put_idx(a, i, copy[n - 1 - i]);
}

/* Sets each port's "rail" as the daemon numbers it; a fixture that carries one is refused. */
static inline void number_ports(const char *name, json_object *ports)
{
        size_t n = json_object_array_length(ports);
        int rails[64];

        CHECK(n <= 64);
        if (n > 64)
                return;
        neighbours_number_ports(ports, "netdev", rails);
        for (size_t i = 0; i < n; i++) {
                json_object *p = json_object_array_get_idx(ports, i);

                if (json_object_object_get(p, "rail"))
                        fprintf(stderr, "%s: a port carries a precomputed rail\n", name);
                CHECK(json_object_object_get(p, "rail") == NULL);
                json_object_object_add(p, "rail", json_object_new_int(rails[i]));
        }
}

/* The map of fixture name, its tables taken in the order `order` gives (NULL: as written), each
 * table's ports reversed when is_ports_reversed. */
static inline json_object *topology_fixture_map(const char *name, const size_t *order,
                                                bool is_ports_reversed, const struct topology_expect *expect)
{
        struct topology_node *nodes[MAX_TABLES] = { NULL };
        json_object *fixture = topology_fixture_load(name), *tables, *map = NULL;
        size_t n;
        int r;

        CHECK(fixture != NULL);
        if (!fixture)
                return NULL;
        tables = json_object_object_get(fixture, "tables");
        n = json_object_array_length(tables);
        for (size_t i = 0; i < n && i < MAX_TABLES; i++) {
                json_object *t = json_object_array_get_idx(tables, order ? order[i] : i);
                json_object *neighbours = json_object_object_get(t, "neighbours");
                char why[256] = "";

                if (is_ports_reversed)
                        reverse_array(json_object_object_get(neighbours, "ports"));
                number_ports(name, json_object_object_get(neighbours, "ports"));
                r = topology_node_parse(json_object_get_string(json_object_object_get(t, "node_id")),
                                        json_object_get_string(json_object_object_get(t, "name")),
                                        neighbours, &nodes[i], why, sizeof(why));
                if (r < 0)
                        fprintf(stderr, "%s: table %zu: %s\n", name, i, why);
                CHECK(r == 0);
        }
        r = topology_derive(nodes, n, expect, &map);
        CHECK(r == 0);
        for (size_t i = 0; i < n; i++)
                topology_node_free(nodes[i]);
        json_object_put(fixture);
        return map;
}
