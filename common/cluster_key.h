/*
 * The cluster key: 32 random bytes shared by every node of a cluster (like the SSH keys the
 * guides share), stored as 64 hex digits in /etc/sparkd/cluster.key, mode 0600. It is the TLS 1.3
 * pre-shared key of the peer channel. Written by `sparkc keygen`, read by sparkd.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define CLUSTER_KEY_BYTES 32
/* A key file holds 64 hex digits and a newline; anything much larger is not a key. */
#define CLUSTER_KEY_FILE_MAX 4096
#define CLUSTER_KEY_PATH     "/etc/sparkd/cluster.key"

struct cluster_key {
        uint8_t bytes[CLUSTER_KEY_BYTES];
        char id[17]; /* first 8 bytes of SHA-256(key), hex: safe to show and to compare */
};

/* Reads and checks the key file. -EPERM when others may read it (the key would be public),
 * -EBADMSG when it is not 64 hex digits. why (may be NULL) gets a sentence for people. */
int cluster_key_load(const char *path, struct cluster_key *key, char *why, size_t why_size);
/* Writes a fresh key to path with mode 0600; -EEXIST unless overwrite. */
int cluster_key_generate(const char *path, bool overwrite, struct cluster_key *key);
