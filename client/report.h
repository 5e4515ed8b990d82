/*
 * Turning the daemon's env and doctor results (JSON) into what people and shells read. Lives in
 * common/ so sparkc and the golden-output tests print exactly the same text.
 */
#pragma once

#include <json-c/json.h>
#include <stdbool.h>
#include <stdio.h>

enum env_format {
        ENV_FORMAT_SH,      /* export NAME='value', for eval "$(sparkc env)" */
        ENV_FORMAT_DOCKER,  /* NAME=value lines, for docker run --env-file */
        ENV_FORMAT_SYSTEMD, /* a [Service] drop-in with Environment= lines */
};

int env_format_from_string(const char *s, enum env_format *out);

/* Writes the variables of an env result; returns 0, or -ENODATA (after writing the reason to
 * err) when the result says no fabric was found. */
int report_env(FILE *out, FILE *err, json_object *env, enum env_format format);

/* When the env result refuses its mode (it would hang NCCL): without force, writes the reason
 * and the safe command to err and returns -EPERM; with force, writes a warning line to err and
 * returns 0. Returns 0 when nothing was refused. */
int report_env_refusal(FILE *err, json_object *env, bool force);

/* Writes one line per check with its evidence and fix; returns the exit code to use:
 * 0 all ok, 1 a warning, 2 a failure. */
int report_doctor(FILE *out, json_object *doctor);
