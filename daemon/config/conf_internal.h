/* Internals of the config loader shared by conf.c (reading files) and conf_keys.c (the keys
 * and their parsers); not for other modules. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "common/macro.h"
#include "conf.h"

struct conf_parse {
        struct sparkd_config *config;
        struct conf_errors *errors;
        const char *file;
        FILE *stream;
        unsigned line; /* line the reader handed to inih last */
        char *buf;
        size_t buf_size;
        bool socket_group_set; /* the user named a group: a missing one is then an error */
        bool admin_group_set;
};

struct conf_key {
        const char *section;
        const char *name;
        /* Returns 0, or a negative errno with *why set to what was expected. */
        int (*parse)(struct conf_parse *p, const char *value, const char **why);
};

/* Every key sparkd knows, in file order of the documentation ([sysctl] is handled apart). */
extern const struct conf_key conf_keys[];
extern const size_t conf_n_keys;

int conf_replace_string(char **dst, const char *value);
/* Sets the sys, proc and etc roots under root. */
int conf_set_host_root(struct sparkd_config *c, const char *root);
