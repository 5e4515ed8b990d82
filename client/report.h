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

/* Text another node wrote (a name, a reason) to a terminal: control bytes as '?'. */
void report_put_text(FILE *out, const char *s);

/* Writes the variables of an env result; returns 0, or -ENODATA (after writing the reason to
 * err) when the result says no fabric was found. */
int report_env(FILE *out, FILE *err, json_object *env, enum env_format format);

/* When the env result refuses its mode (it would hang NCCL): without force, writes the reason
 * and the safe command to err and returns -EPERM; with force, writes a warning line to err and
 * returns 0. Returns 0 when nothing was refused. */
int report_env_refusal(FILE *err, json_object *env, bool force);

/* When env was asked for a framework's variables (--for) and they cannot be given (no
 * rendezvous, this node left out): writes why to err and returns -ENODATA; else 0. */
int report_env_for_refusal(FILE *err, json_object *env);

/* Writes one line per check with its evidence and fix; returns the exit code to use:
 * 0 all ok, 1 a warning, 2 a failure. */
int report_doctor(FILE *out, json_object *doctor);

/*
 * The doctor's verdict in one line of at most size - 1 bytes, for programs that read one line
 * (a scheduler's drain reason, node-problem-detector's message): "fail: ID: SUMMARY (EVIDENCE)"
 * for the first failing check, else "warn: ..." for the first warning one, else "ok: all N checks
 * pass". With only, that check alone counts ("ok: ID: SUMMARY" when it passes). A longer line is
 * cut at a character boundary and ends with "...". Returns 0 ok, 1 warn, 2 fail, or -ENOENT
 * (line saying which checks there are) when only names no check of the result.
 */
int report_doctor_line(char *line, size_t size, json_object *doctor, const char *only);
/* A buffer that holds report_doctor_line's longest line: a summary and an evidence line, each
 * as long as the daemon writes them (512 bytes). */
#define REPORT_DOCTOR_LINE_SIZE 1024

enum hostfile_format {
        HOSTFILE_OPENMPI, /* "ADDRESS slots=N", Open MPI's --hostfile */
        HOSTFILE_MPICH,   /* "ADDRESS:N", MPICH's and Hydra's -f */
        HOSTFILE_PLAIN,   /* "ADDRESS" */
};

int hostfile_format_from_string(const char *s, enum hostfile_format *out);

/*
 * The hostfile of a job-nodes result: this node first (mpirun puts rank 0 on the first host, so
 * it lands on the launcher), then the others by name, each by its address on the plan's plane
 * (fabric or management), with slots each. The nodes left out, and those included whose doctor is not
 * known here, go to err with the reason, and a last line with the plan's digest. Returns how
 * many hosts were written.
 */
int report_hostfile(FILE *out, FILE *err, json_object *plan, enum hostfile_format format, unsigned slots);

/* The findings of an env-check result, each with its fix, and a last line with the counts;
 * returns 0 nothing found, 1 warnings, 2 errors. */
int report_env_check(FILE *out, json_object *result);
