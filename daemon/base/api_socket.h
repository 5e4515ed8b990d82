/*
 * The control socket's file and who may use it: binding it born with the configured mode and
 * group, replacing a stale file but never a live daemon's, re-applying new access settings, the
 * path of a socket systemd passed, and a client's groups as the kernel saw them at connect time.
 */
#pragma once

#include <stdbool.h>
#include <sys/types.h>

#include "api.h"

/* Binds and listens on path (its directory made when missing); returns the listening fd.
 * -EADDRINUSE when a live daemon answers there. */
int api_socket_bind(const char *path, const struct api_access *access);
int api_socket_apply_access(const char *path, const struct api_access *access);
/* The path of a socket systemd passed, which may differ from the configured one (fallback). */
char *api_socket_bound_path(int fd, const char *fallback);
/* Is the client on fd in group wanted, as its primary group or a supplementary one? */
bool api_socket_peer_in_group(int fd, gid_t primary, gid_t wanted);
