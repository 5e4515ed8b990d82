/*
 * sparkc's global options (--socket, --json, --timeout) wherever they stand on the command line,
 * as git and systemctl take them: before the command, or among the command's own options and
 * arguments, up to a "--".
 */
#pragma once

#include <getopt.h>
#include <stdbool.h>

#include "client.h"

/* A command's own options: what it hands getopt_long, and what tells them from global ones. */
struct command_options {
        const char *short_options;
        const struct option *long_options;
};

/*
 * Reads the global options before the command and sets o, help and version from them. Returns
 * the index of the command's name (argc when there is none), or -EINVAL after saying what is wrong.
 */
int global_options_before(struct client_options *o, int argc, char **argv, bool *help, bool *version);

/*
 * Takes the global options out of a command's words (argv[0] its name) and sets o from them. The
 * command's own options win where a letter is both (probe's -s is its --size), and their values
 * stay with them. Returns the words left, or -EINVAL after saying what is wrong.
 */
int global_options_after(struct client_options *o, int argc, char **argv, const struct command_options *own);
