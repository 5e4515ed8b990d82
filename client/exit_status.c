/* What each of sparkc's exit statuses means, as --help says it. */
#include "exit_status.h"

#include <stddef.h>
#include <string.h>

#include "common/macro.h"

struct exit_status_meaning {
        const char *command; /* NULL: every command, unless it has its own below */
        int status;
        const char *meaning;
};

#define NO_ANSWER "the daemon could not be reached or answered with an error, or bad usage"

static const struct exit_status_meaning meanings[] = {
        { NULL, EXIT_OK, "success" },
        { NULL, EXIT_DAEMON_ERROR, "the daemon answered with an error, or bad usage" },
        { NULL, EXIT_UNREACHABLE, "the daemon could not be reached" },
        { "doctor", DOCTOR_EXIT_OK, "ok" },
        { "doctor", DOCTOR_EXIT_WARN, "warn" },
        { "doctor", DOCTOR_EXIT_FAIL, "fail" },
        { "doctor", DOCTOR_EXIT_UNKNOWN, "unknown (" NO_ANSWER ")" },
        { "env --check", ENV_CHECK_EXIT_OK, "nothing wrong" },
        { "env --check", ENV_CHECK_EXIT_WARN, "warnings" },
        { "env --check", ENV_CHECK_EXIT_ERROR, "errors" },
        { "env --check", ENV_CHECK_EXIT_UNKNOWN, "unknown (" NO_ANSWER ")" },
        { "probe", PROBE_EXIT_OK, "ok" },
        { "probe", PROBE_EXIT_DEGRADED, "degraded" },
        { "probe", PROBE_EXIT_FAILED, "failed (also: " NO_ANSWER ")" },
};

void exit_status_print_help(FILE *f)
{
        const char *command = NULL;

        fputs("Exit status:\n", f);
        for (size_t i = 0; i < ARRAY_SIZE(meanings); i++) {
                const struct exit_status_meaning *m = &meanings[i];

                if (!m->command) {
                        fprintf(f, "  %d  %s\n", m->status, m->meaning);
                        continue;
                }
                /* A command's own statuses on one line: "  doctor: 0 ok, 1 warn, ...". */
                if (!command || strcmp(command, m->command) != 0)
                        fprintf(f, "%s  %s: ", command ? "\n" : "", m->command);
                else
                        fputs(", ", f);
                fprintf(f, "%d %s", m->status, m->meaning);
                command = m->command;
        }
        if (command)
                fputc('\n', f);
}
