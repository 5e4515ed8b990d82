#include "log.h"

#include <ctype.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <systemd/sd-journal.h>
#include <unistd.h>

#include "common/text_escape.h"

#define JOURNAL_SOCKET "/run/systemd/journal/socket"
#define MAX_FIELDS     32

static bool use_journal;
static int max_level = LOG_INFO;

static const char *const level_names[] = {
        [LOG_EMERG] = "emerg",     [LOG_ALERT] = "alert",   [LOG_CRIT] = "crit", [LOG_ERR] = "err",
        [LOG_WARNING] = "warning", [LOG_NOTICE] = "notice", [LOG_INFO] = "info", [LOG_DEBUG] = "debug",
};

int log_target_from_string(const char *s, enum log_target *out)
{
        if (strcmp(s, "auto") == 0)
                *out = LOG_TARGET_AUTO;
        else if (strcmp(s, "journal") == 0)
                *out = LOG_TARGET_JOURNAL;
        else if (strcmp(s, "stderr") == 0)
                *out = LOG_TARGET_STDERR;
        else
                return -EINVAL;
        return 0;
}

int log_level_from_string(const char *s, int *out)
{
        for (int i = 0; i < (int)ARRAY_SIZE(level_names); i++) {
                if (strcmp(s, level_names[i]) == 0) {
                        *out = i;
                        return 0;
                }
        }
        if (strcmp(s, "error") == 0) {
                *out = LOG_ERR;
                return 0;
        }
        return -EINVAL;
}

const char *log_level_to_string(int level)
{
        if (level < 0 || level >= (int)ARRAY_SIZE(level_names))
                return "unknown";
        return level_names[level];
}

static void log_to_stderr(int level, const struct log_field *fields, size_t n, const char *message);

void log_open(enum log_target target, bool detached)
{
        switch (target) {
        case LOG_TARGET_JOURNAL:
                /* sd_journal_sendv() reports success when no journald listens, so ask first. */
                use_journal = access(JOURNAL_SOCKET, W_OK) == 0;
                if (!use_journal) {
                        char message[256];

                        snprintf(message, sizeof(message), "no journal at %s (%m): logging to stderr",
                                 JOURNAL_SOCKET);
                        log_to_stderr(LOG_WARNING, NULL, 0, message);
                }
                break;
        case LOG_TARGET_STDERR:
                use_journal = false;
                break;
        case LOG_TARGET_AUTO:
                use_journal = getenv("JOURNAL_STREAM") || (detached && access(JOURNAL_SOCKET, W_OK) == 0);
                break;
        }
}

void log_set_max_level(int level)
{
        max_level = level;
}

int log_get_max_level(void)
{
        return max_level;
}

bool log_is_journal(void)
{
        return use_journal;
}

static void upper_key(const char *key, char *buf, size_t size)
{
        size_t i;

        for (i = 0; key[i] && i + 1 < size; i++)
                buf[i] = key[i] == '-' ? '_' : (char)toupper((unsigned char)key[i]);
        buf[i] = '\0';
}

static int log_to_journal(int level, const char *message_id, const struct log_field *fields, size_t n,
                          const char *message)
{
        struct iovec iov[MAX_FIELDS + 3];
        char *strings[MAX_FIELDS + 3] = { 0 };
        size_t k = 0;
        int r = -ENOMEM;

        if (asprintf(&strings[k++], "MESSAGE=%s", message) < 0 ||
            asprintf(&strings[k++], "PRIORITY=%d", level) < 0)
                goto out;
        if (message_id && asprintf(&strings[k++], "MESSAGE_ID=%s", message_id) < 0)
                goto out;
        for (size_t i = 0; i < n && k < ARRAY_SIZE(strings); i++) {
                char key[64];

                if (!fields[i].value)
                        continue;
                upper_key(fields[i].key, key, sizeof(key));
                if (asprintf(&strings[k++], "SPARKD_%s=%s", key, fields[i].value) < 0)
                        goto out;
        }
        for (size_t i = 0; i < k; i++)
                iov[i] = (struct iovec){ .iov_base = strings[i], .iov_len = strlen(strings[i]) };
        r = sd_journal_sendv(iov, (int)k);
out:
        for (size_t i = 0; i < ARRAY_SIZE(strings); i++)
                free(strings[i]);
        return r;
}

static void log_to_stderr(int level, const struct log_field *fields, size_t n, const char *message)
{
        char line[4096];
        size_t used;

        used = (size_t)snprintf(line, sizeof(line), "%s: %s", log_level_to_string(level), message);
        for (size_t i = 0; i < n && used < sizeof(line); i++) {
                if (!fields[i].value)
                        continue;
                {
                        char value[512];

                        escape_log(value, sizeof(value), fields[i].value);
                        used += (size_t)snprintf(line + used, sizeof(line) - used, " %s=%s", fields[i].key,
                                                 value);
                }
        }
        if (used >= sizeof(line))
                used = sizeof(line) - 1;
        line[used] = '\n';
        /* One write per line keeps lines whole when several processes share stderr. */
        (void)!write(STDERR_FILENO, line, used + 1);
}

static void log_dispatch(int level, const char *message_id, const struct log_field *fields, size_t n,
                         const char *fmt, va_list ap)
{
        char raw[2048], message[2048];
        int saved = errno;

        if (level > max_level)
                return;
        vsnprintf(raw, sizeof(raw), fmt, ap);
        /* A message is one line: a newline or an escape sequence in it came from outside text (a
         * peer's name, a switch's description) and is shown escaped, never as a line of its own. */
        escape_log(message, sizeof(message), raw);
        /* A message the journal does not take (no journald, --log-target=journal outside systemd)
         * still reaches stderr rather than vanishing. */
        if (!use_journal || log_to_journal(level, message_id, fields, n, message) < 0)
                log_to_stderr(level, fields, n, message);
        errno = saved;
}

void log_structured(int level, const char *message_id, const struct log_field *fields, size_t n,
                    const char *fmt, ...)
{
        va_list ap;

        va_start(ap, fmt);
        log_dispatch(level, message_id, fields, n, fmt, ap);
        va_end(ap);
}

void log_msg(int level, const char *fmt, ...)
{
        va_list ap;

        va_start(ap, fmt);
        log_dispatch(level, NULL, NULL, 0, fmt, ap);
        va_end(ap);
}
