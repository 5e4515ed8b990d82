/*
 * liblldpctl, loaded at run time (dlopen of its soname) rather than linked: the library ships in
 * Debian's lldpd package itself, so linking it made installing sparkd install lldpd, a new LLDP
 * speaker on every interface of the host, LAN included. Without it sparkd runs on and takes its
 * neighbours from the peer channel; with lldpd installed it uses lldpd as before. The functions
 * are the header's own (liblldpctl-dev at build time), their types checked against it.
 */
#pragma once

#include <lldpctl.h>
#include <stddef.h>

/* The ABI the header describes: lldpd 1.0's. */
#define LLDPCTL_SONAME "liblldpctl.so.4"

struct lldpctl_lib {
        __typeof__(lldpctl_new_name) *new_name;
        __typeof__(lldpctl_release) *release;
        __typeof__(lldpctl_last_error) *last_error;
        __typeof__(lldpctl_strerror) *strerror;
        __typeof__(lldpctl_recv) *recv;
        __typeof__(lldpctl_watch_callback2) *watch_callback2;
        __typeof__(lldpctl_get_local_chassis) *get_local_chassis;
        __typeof__(lldpctl_get_interfaces) *get_interfaces;
        __typeof__(lldpctl_get_port) *get_port;
        __typeof__(lldpctl_atom_get) *atom_get;
        __typeof__(lldpctl_atom_get_str) *atom_get_str;
        __typeof__(lldpctl_atom_get_int) *atom_get_int;
        __typeof__(lldpctl_atom_dec_ref) *atom_dec_ref;
        __typeof__(lldpctl_atom_iter) *atom_iter;
        __typeof__(lldpctl_atom_iter_next) *atom_iter_next;
        __typeof__(lldpctl_atom_iter_value) *atom_iter_value;
};

/* The library's functions in *ret, loaded at the first call that finds it and kept for the
 * process; until then each call looks again (lldpd may be installed while sparkd runs).
 * -ENOENT with why (the loader's words) when it cannot be loaded, -ENOEXEC when a function is
 * missing from it. */
int lldpctl_lib_load(const struct lldpctl_lib **ret, char *why, size_t why_size);
