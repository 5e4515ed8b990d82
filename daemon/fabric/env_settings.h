/*
 * The variables a job runs with, each with where its value came from (the environment, or a line
 * of an NCCL config file), the bounds of what a caller may send, and NCCL's reading of its config
 * files.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>

/* Bounds of what a caller may send: variables, and the size of a name, a value and a file. */
#define ENV_CHECK_MAX_VARIABLES  256
#define ENV_CHECK_MAX_NAME       128
#define ENV_CHECK_MAX_VALUE      4096
#define ENV_CHECK_MAX_FILE_BYTES (16 * 1024)
#define ENV_CHECK_MAX_FILE_LINES 256

struct env_setting {
        char *name;
        char *value;
        char *source; /* "environment", or "/etc/nccl.conf:3" */
};

struct env_settings {
        struct env_setting *v;
        size_t n;
};

/* Whether a variable is one env-check judges or reports (NCCL_*, UCX_*, GLOO_*, OMPI_MCA_*, the
 * vLLM and SGLang address variables, MASTER_ADDR). */
bool env_check_is_relevant(const char *name);

int env_settings_add(struct env_settings *s, const char *name, const char *value, const char *source);
void env_settings_free(struct env_settings *s);
const struct env_setting *env_settings_find(const struct env_settings *s, const char *name);

/* The NAME=VALUE lines of an NCCL config file as NCCL reads them (a line starting with '#' and a
 * line without '=' are skipped), each with "PATH:LINE" as its source; only relevant names are
 * kept. -E2BIG past ENV_CHECK_MAX_FILE_LINES lines. */
int env_check_parse_conf(const char *text, const char *path, struct env_settings *out);
