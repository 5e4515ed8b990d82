#include "report.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/text_escape.h"

static const char *get_str(json_object *o, const char *key, const char *fallback)
{
        json_object *v;

        if (json_object_object_get_ex(o, key, &v) && json_object_is_type(v, json_type_string))
                return json_object_get_string(v);
        return fallback;
}

void report_put_text(FILE *out, const char *s)
{
        for (; *s; s++)
                fputc((unsigned char)*s < ' ' || *s == 0x7f ? '?' : *s, out);
}

int env_format_from_string(const char *s, enum env_format *out)
{
        if (strcmp(s, "sh") == 0)
                *out = ENV_FORMAT_SH;
        else if (strcmp(s, "docker") == 0)
                *out = ENV_FORMAT_DOCKER;
        else if (strcmp(s, "systemd") == 0)
                *out = ENV_FORMAT_SYSTEMD;
        else
                return -EINVAL;
        return 0;
}

int report_env_refusal(FILE *err, json_object *env, bool force)
{
        json_object *refused;

        if (!json_object_object_get_ex(env, "refused", &refused) || !refused)
                return 0;
        if (force) {
                fprintf(err, "sparkc: warning: forced mode %s, which NCCL cannot run with here: %s\n",
                        get_str(env, "mode_requested", "?"), get_str(refused, "reason", "?"));
                return 0;
        }
        fprintf(err, "sparkc: env: refusing mode %s: %s\n", get_str(env, "mode_requested", "?"),
                get_str(refused, "reason", "?"));
        fprintf(err, "sparkc: env: use `%s` (or add --force to print this mode anyway)\n",
                get_str(refused, "safe_command", "sparkc env --mode safe"));
        return -EPERM;
}

int report_env_for_refusal(FILE *err, json_object *env)
{
        const char *why = get_str(env, "for_refused", NULL);
        json_object *left = NULL;

        /* Every node the plan leaves out, named on every node, whatever this one is given. */
        json_object_object_get_ex(env, "left_out", &left);
        for (size_t i = 0; left && i < json_object_array_length(left); i++) {
                fprintf(err, "sparkc: env --for %s: left out ", get_str(env, "for", "?"));
                report_put_text(err, get_str(json_object_array_get_idx(left, i), "name", "?"));
                fputs(": ", err);
                report_put_text(err, get_str(json_object_array_get_idx(left, i), "reason", "?"));
                fputc('\n', err);
        }
        if (!why)
                return 0;
        /* Half a rendezvous is worse than none: nothing goes to stdout. */
        fprintf(err, "sparkc: env --for %s: %s\n", get_str(env, "for", "?"), why);
        return -ENODATA;
}

/* A variable's name as every format carries it unquoted: [A-Za-z_][A-Za-z0-9_]*. */
static bool is_variable_name(const char *s)
{
        size_t len = strlen(s);

        return len > 0 && !(s[0] >= '0' && s[0] <= '9') &&
               strspn(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_") == len;
}

static void comment(FILE *f, const char *prefix, const char *text)
{
        fprintf(f, "# %s", prefix);
        escape_comment(f, text);
        fputc('\n', f);
}

/* The variables in format into f; -EINVAL after saying on err which one no format can carry. */
static int render_env(FILE *f, FILE *err, json_object *env, enum env_format format)
{
        json_object *vars = NULL, *notes = NULL;

        if (format == ENV_FORMAT_SYSTEMD)
                fprintf(f, "[Service]\n");
        fprintf(f, "# sparkd: mode ");
        escape_comment(f, get_str(env, "mode", "?"));
        fputs(": ", f);
        escape_comment(f, get_str(env, "mode_reason", ""));
        fputc('\n', f);
        json_object_object_get_ex(env, "notes", &notes);
        for (size_t i = 0; notes && i < json_object_array_length(notes); i++)
                comment(f, "sparkd: ", json_object_get_string(json_object_array_get_idx(notes, i)));
        json_object_object_get_ex(env, "variables", &vars);
        for (size_t i = 0; vars && i < json_object_array_length(vars); i++) {
                json_object *v = json_object_array_get_idx(vars, i);
                const char *name = get_str(v, "name", ""), *value = get_str(v, "value", "");

                if (!is_variable_name(name)) {
                        fputs("sparkc: env: a variable named \"", err);
                        escape_term(err, name);
                        fputs("\" is not a name a shell, docker or systemd takes; nothing printed\n", err);
                        return -EINVAL;
                }
                comment(f, "", get_str(v, "why", ""));
                switch (format) {
                case ENV_FORMAT_SH:
                        fprintf(f, "export %s=", name);
                        escape_sh_value(f, value);
                        fputc('\n', f);
                        break;
                case ENV_FORMAT_DOCKER:
                        fprintf(f, "%s=", name);
                        if (escape_docker_value(f, value) < 0) {
                                fprintf(err,
                                        "sparkc: env: the value of %s holds a control character, which a "
                                        "docker env-file cannot carry; nothing printed\n",
                                        name);
                                return -EINVAL;
                        }
                        fputc('\n', f);
                        break;
                case ENV_FORMAT_SYSTEMD:
                        fprintf(f, "Environment=\"%s=", name);
                        escape_systemd_value(f, value);
                        fputs("\"\n", f);
                        break;
                }
        }
        return 0;
}

int report_env(FILE *out, FILE *err, json_object *env, enum env_format format)
{
        json_object *found;
        char *text = NULL;
        size_t size = 0;
        FILE *f;
        int r;

        if (!json_object_object_get_ex(env, "fabric_found", &found) || !json_object_get_boolean(found)) {
                fputs("sparkc: no fabric found: ", err);
                escape_term(err, get_str(env, "reason", "unknown reason"));
                fputc('\n', err);
                fprintf(err,
                        "sparkc: not printing NCCL settings that would be wrong; see `sparkc doctor`\n");
                return -ENODATA;
        }
        /* Rendered whole first: a value no format can carry prints nothing, not half a file. */
        f = open_memstream(&text, &size);
        if (!f)
                return -ENOMEM;
        r = render_env(f, err, env, format);
        if (fclose(f) != 0 && r == 0)
                r = -ENOMEM;
        if (r == 0)
                fwrite(text, 1, size, out);
        free(text);
        return r;
}

int report_doctor(FILE *out, json_object *doctor)
{
        json_object *checks = NULL;
        const char *status = get_str(doctor, "status", "fail");

        json_object_object_get_ex(doctor, "checks", &checks);
        for (size_t i = 0; checks && i < json_object_array_length(checks); i++) {
                json_object *c = json_object_array_get_idx(checks, i), *evidence = NULL, *fix;
                const char *s = get_str(c, "status", "?");
                const char *tag = strcmp(s, "ok") == 0 ? " ok " : strcmp(s, "warn") == 0 ? "WARN" : "FAIL";

                fprintf(out, "[%s] %-15s %s\n", tag, get_str(c, "id", "?"), get_str(c, "summary", ""));
                json_object_object_get_ex(c, "evidence", &evidence);
                for (size_t k = 0; evidence && k < json_object_array_length(evidence); k++)
                        fprintf(out, "       %s\n",
                                json_object_get_string(json_object_array_get_idx(evidence, k)));
                if (json_object_object_get_ex(c, "fix", &fix) && fix)
                        fprintf(out, "       fix: %s\n", json_object_get_string(fix));
        }
        fprintf(out, "%s\n",
                strcmp(status, "ok") == 0     ? "all checks passed"
                : strcmp(status, "warn") == 0 ? "some checks warn"
                                              : "some checks failed");
        return strcmp(status, "ok") == 0 ? 0 : strcmp(status, "warn") == 0 ? 1 : 2;
}

static int check_rank(const char *status)
{
        return strcmp(status, "ok") == 0 ? 0 : strcmp(status, "warn") == 0 ? 1 : 2;
}

/* Copies full into line, cut back with "..." at its end where it does not fit, never inside a
 * UTF-8 sequence. */
static void fit_line(char *line, size_t size, const char *full)
{
        size_t len = strlen(full), end;

        if (len < size) {
                memcpy(line, full, len + 1);
                return;
        }
        end = size > 4 ? size - 4 : 0;
        while (end > 0 && ((unsigned char)full[end] & 0xc0) == 0x80)
                end--;
        memcpy(line, full, end);
        snprintf(line + end, size - end, "...");
}

int report_doctor_line(char *line, size_t size, json_object *doctor, const char *only)
{
        static const char *const words[] = { "ok", "warn", "fail" };
        json_object *checks = NULL, *worst = NULL, *evidence = NULL;
        char full[REPORT_DOCTOR_LINE_SIZE];
        size_t n, considered = 0, used;
        int rank = -1;

        if (size == 0)
                return -EINVAL;
        json_object_object_get_ex(doctor, "checks", &checks);
        n = checks ? json_object_array_length(checks) : 0;
        for (size_t i = 0; i < n; i++) {
                json_object *c = json_object_array_get_idx(checks, i);
                int r = check_rank(get_str(c, "status", "?"));

                if (only && strcmp(get_str(c, "id", ""), only) != 0)
                        continue;
                considered++;
                if (r > rank) {
                        rank = r;
                        worst = c;
                }
        }
        if (!worst) {
                used = snprintf(full, sizeof(full), "unknown: no check %s; the checks are",
                                only ? only : "");
                for (size_t i = 0; i < n && used < sizeof(full); i++)
                        used += snprintf(full + used, sizeof(full) - used, "%s %s", i ? "," : "",
                                         get_str(json_object_array_get_idx(checks, i), "id", "?"));
                fit_line(line, size, full);
                return -ENOENT;
        }
        if (rank == 0 && !only)
                used = snprintf(full, sizeof(full), "ok: all %zu checks pass", considered);
        else
                used = snprintf(full, sizeof(full), "%s: %s: %s", words[rank], get_str(worst, "id", "?"),
                                get_str(worst, "summary", ""));
        json_object_object_get_ex(worst, "evidence", &evidence);
        if (rank > 0 && evidence && json_object_array_length(evidence) > 0 && used < sizeof(full))
                snprintf(full + used, sizeof(full) - used, " (%s)",
                         json_object_get_string(json_object_array_get_idx(evidence, 0)));
        fit_line(line, size, full);
        return rank;
}

int hostfile_format_from_string(const char *s, enum hostfile_format *out)
{
        if (strcmp(s, "openmpi") == 0)
                *out = HOSTFILE_OPENMPI;
        else if (strcmp(s, "mpich") == 0)
                *out = HOSTFILE_MPICH;
        else if (strcmp(s, "plain") == 0)
                *out = HOSTFILE_PLAIN;
        else
                return -EINVAL;
        return 0;
}

static int hostfile_order(const void *a, const void *b)
{
        json_object *x = *(json_object *const *)a, *y = *(json_object *const *)b, *sx, *sy;
        bool self_x = json_object_object_get_ex(x, "self", &sx) && json_object_get_boolean(sx);
        bool self_y = json_object_object_get_ex(y, "self", &sy) && json_object_get_boolean(sy);
        int c;

        if (self_x != self_y)
                return self_x ? -1 : 1;
        c = strcmp(get_str(x, "name", ""), get_str(y, "name", ""));
        return c ? c : strcmp(get_str(x, "node_id", ""), get_str(y, "node_id", ""));
}

int report_hostfile(FILE *out, FILE *err, json_object *plan, enum hostfile_format format, unsigned slots)
{
        json_object *nodes = NULL, *left = NULL, **sorted;
        size_t n;

        json_object_object_get_ex(plan, "nodes", &nodes);
        json_object_object_get_ex(plan, "left_out", &left);
        n = nodes && json_object_is_type(nodes, json_type_array) ? json_object_array_length(nodes) : 0;
        sorted = calloc(n + 1, sizeof(*sorted));
        if (!sorted)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++)
                sorted[i] = json_object_array_get_idx(nodes, i);
        qsort(sorted, n, sizeof(*sorted), hostfile_order);
        for (size_t i = 0; i < n; i++) {
                const char *address = get_str(sorted[i], "address", "?");
                json_object *doctor;

                if (format == HOSTFILE_OPENMPI)
                        fprintf(out, "%s slots=%u\n", address, slots);
                else if (format == HOSTFILE_MPICH)
                        fprintf(out, "%s:%u\n", address, slots);
                else
                        fprintf(out, "%s\n", address);
                if (!json_object_object_get_ex(sorted[i], "doctor", &doctor) || !doctor)
                        fprintf(err,
                                "sparkc: hostfile: %s (%s) included, but its doctor is not known here\n",
                                get_str(sorted[i], "name", "?"), address);
        }
        for (size_t i = 0; left && i < json_object_array_length(left); i++) {
                json_object *l = json_object_array_get_idx(left, i);

                fputs("sparkc: hostfile: left out ", err);
                report_put_text(err, get_str(l, "name", "?"));
                fprintf(err, " (%s): ", get_str(l, "address", "no address"));
                report_put_text(err, get_str(l, "reason", "?"));
                fputc('\n', err);
        }
        fprintf(err, "sparkc: hostfile: job plan %s: %zu node%s on the %s network\n",
                get_str(plan, "digest", "?"), n, n == 1 ? "" : "s", get_str(plan, "plane", "?"));
        free(sorted);
        return (int)n;
}

int report_env_check(FILE *out, json_object *result)
{
        json_object *findings = NULL, *checked;
        size_t errors = 0, warnings = 0;

        json_object_object_get_ex(result, "findings", &findings);
        for (size_t i = 0; findings && i < json_object_array_length(findings); i++) {
                json_object *f = json_object_array_get_idx(findings, i);
                bool is_error = strcmp(get_str(f, "severity", "error"), "warning") != 0;
                const char *variable = get_str(f, "variable", NULL);

                if (is_error)
                        errors++;
                else
                        warnings++;
                if (variable)
                        fprintf(out, "%s: %s='%s' (%s): %s\n", is_error ? "error" : "warning", variable,
                                get_str(f, "value", ""), get_str(f, "source", "?"),
                                get_str(f, "problem", ""));
                else
                        fprintf(out, "%s: %s\n", is_error ? "error" : "warning", get_str(f, "problem", ""));
                fprintf(out, "  fix: %s\n", get_str(f, "fix", ""));
        }
        fprintf(out, "%d variables judged: %zu error%s, %zu warning%s\n",
                json_object_object_get_ex(result, "checked", &checked) ? json_object_get_int(checked) : 0,
                errors, errors == 1 ? "" : "s", warnings, warnings == 1 ? "" : "s");
        return errors ? 2 : warnings ? 1 : 0;
}
