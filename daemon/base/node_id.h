/* The node's identity: a random 128-bit id made once and kept in the state directory, so that
 * peers recognise a node across restarts and renames. */
#pragma once

#include "store.h"

#define NODE_ID_LEN  32        /* hex digits */
#define NODE_ID_FILE "node-id" /* in the state directory */

/* A fresh random id of 32 lower-case hex digits (node ids, and a process's instance id). */
int node_id_random(char id[NODE_ID_LEN + 1]);
/* Reads the id, or makes and saves a new one. A damaged file is moved aside and replaced. With
 * no store (state directory unusable) the id lives only as long as the process. */
int node_id_load(struct store *store, char id[NODE_ID_LEN + 1]);
/* Exposed for tests: is s exactly 32 lower-case hex digits, optionally followed by a newline. */
int node_id_check(const char *s, size_t len);
