/*
 * The NVIDIA driver and its GPUs as /proc/driver/nvidia shows them: the driver's version, whether
 * it is the open kernel module, each GPU's model and bus, and which of them share the CPU's memory.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>

struct hostfacts;

/* Fills the driver and GPU facts; only -ENOMEM is an error, anything missing is a fact. */
int gpu_read(const char *host_root, struct hostfacts *f);

/* "NVRM version: NVIDIA UNIX Open Kernel Module for aarch64  580.95.05  Release Build ..." */
int hostfacts_parse_driver_version(const char *text, char *version, size_t size, bool *is_open);
