/*
 * The config keys: every [section] key sparkd knows, in one table, and setting a key's value in
 * a config through it. Most keys are a number, duration, size or yes/no within a range, read by
 * one parser from what the table says; the rest have a parser of their own. [sysctl] is not in
 * the table: its keys are the kernel's.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "conf.h"

/* One load of a config: what the key parsers fill in, where they are, and the reader's state. */
struct conf_parse {
        struct sparkd_config *config;
        struct conf_errors *errors;
        const char *file;
        const char *text; /* the file's bytes, read whole */
        size_t text_len;
        size_t text_pos;            /* where the reader's next line starts */
        unsigned line;              /* line the reader handed to inih last */
        unsigned file_index;        /* counts the files read, from 1 */
        unsigned static_peers_file; /* file_index of the file that set [peers] static last */
        bool socket_group_set;      /* the user named a group: a missing one is then an error */
        bool admin_group_set;
};

struct conf_key;

bool conf_section_exists(const char *section);
const struct conf_key *conf_key_find(const char *section, const char *name);
/* Sets the key to value in p->config. Returns 0, -ENOMEM, or another negative errno with *why
 * set to what was expected. */
int conf_key_set(struct conf_parse *p, const struct conf_key *key, const char *value, const char **why);
/* Sets every key that has its default in the table (the numbers, durations, sizes and yes/no). */
void conf_keys_set_defaults(struct sparkd_config *c);

int conf_replace_string(char **dst, const char *value);
/* Sets the sys, proc and etc roots under root. */
int conf_set_host_root(struct sparkd_config *c, const char *root);
