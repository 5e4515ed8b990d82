/*
 * What a probe needs of this node before its helper runs, from one read of the fabric facts:
 * the memory guard (probe_memory.h) and, for kinds with an environment mode, the NCCL
 * environment its helper starts with (probe_env.h).
 */
#pragma once

#include "probe_internal.h"

/* Fills p->env where the kind has an environment; 0, or p->error says why p cannot run. */
int probe_prepare(struct probe *p);
