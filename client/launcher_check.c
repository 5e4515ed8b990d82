/* The gate: a launcher's file compared with what the plan makes of it, each difference named
 * with its fix (common/launcher_export.h). Both are read by one small reader of the two formats: keys
 * and their values, sparkrun's hosts list joined by ','. */
#include "launcher_check.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/macro.h"

#define MAX_KEYS 128

struct entry {
        char key[80];
        char *value; /* as long as the line: CLUSTER_LINKS of a large ring is kilobytes */
        int line;
};

struct entries {
        size_t n;
        struct entry v[MAX_KEYS];
};

static struct entry *find(struct entries *e, const char *key)
{
        for (size_t i = 0; i < e->n; i++)
                if (strcmp(e->v[i].key, key) == 0)
                        return &e->v[i];
        return NULL;
}

/* A value as YAML or bash reads it: "double" (with \" \\ \xNN), 'single' ('' in YAML), or plain
 * up to a " #" comment. */
static void unquote(const char *s, size_t len, bool yaml, char *out, size_t size)
{
        size_t n = 0;

        while (len && (*s == ' ' || *s == '\t'))
                s++, len--;
        if (len && (*s == '"' || *s == '\'')) {
                char q = *s;

                for (size_t i = 1; i < len && n + 1 < size; i++) {
                        if (s[i] == q && !(q == '\'' && yaml && i + 1 < len && s[i + 1] == '\''))
                                break;
                        if (q == '\'' && s[i] == '\'')
                                i++;
                        else if (q == '"' && s[i] == '\\' && i + 1 < len) {
                                i++;
                                if (s[i] == 'x' && i + 2 < len) {
                                        char hex[3] = { s[i + 1], s[i + 2], 0 };

                                        out[n++] = (char)strtol(hex, NULL, 16);
                                        i += 2;
                                        continue;
                                }
                        }
                        out[n++] = s[i];
                }
        } else {
                const char *hash = NULL;

                for (size_t i = 0; i + 1 < len && !hash; i++)
                        if ((s[i] == ' ' || s[i] == '\t') && s[i + 1] == '#')
                                hash = s + i;
                if (hash)
                        len = (size_t)(hash - s);
                while (len && (s[len - 1] == ' ' || s[len - 1] == '\t' || s[len - 1] == '\r'))
                        len--;
                n = len < size ? len : size - 1;
                memcpy(out, s, n);
        }
        out[n] = '\0';
}

static void entries_free(struct entries *e)
{
        for (size_t i = 0; e && i < e->n; i++)
                free(e->v[i].value);
        free(e);
}

static int add(struct entries *e, const char *key, size_t key_len, const char *value, int line)
{
        struct entry *x = NULL;
        char *copy;

        for (size_t i = 0; i < e->n; i++) /* the last one wins, as for both readers */
                if (strlen(e->v[i].key) == key_len && strncmp(e->v[i].key, key, key_len) == 0)
                        x = &e->v[i];
        if (!x && e->n == MAX_KEYS)
                return 0;
        copy = strdup(value);
        if (!copy)
                return -ENOMEM;
        if (!x)
                x = &e->v[e->n++];
        free(x->value);
        x->value = copy;
        snprintf(x->key, sizeof(x->key), "%.*s", (int)key_len, key);
        x->line = line;
        return 0;
}

/* item appended to sparkrun's hosts, joined by ','. */
static int add_host(struct entry *h, const char *item)
{
        size_t n = strlen(h->value);
        char *more = realloc(h->value, n + strlen(item) + 2);

        if (!more)
                return -ENOMEM;
        h->value = more;
        snprintf(more + n, strlen(item) + 2, "%s%s", n ? "," : "", item);
        return 0;
}

static int parse(const char *text, enum launcher_format format, struct entries *e)
{
        bool in_hosts = false;
        int line = 0, r = 0;

        for (const char *s = text; *s && r == 0;) {
                size_t len = strcspn(s, "\n"), key;
                _cleanup_free_ char *value = malloc(len + 1);

                if (!value)
                        return -ENOMEM;
                line++;
                if (format == LAUNCHER_SPARKRUN && in_hosts && len >= 2 && strspn(s, " ") < len &&
                    s[strspn(s, " ")] == '-') {
                        struct entry *h = find(e, "hosts");
                        size_t at = strspn(s, " ") + 1;

                        unquote(s + at, len - at, true, value, len + 1);
                        if (h)
                                r = add_host(h, value);
                } else if (len && *s != '#' && *s != ' ') {
                        const char *sep = format == LAUNCHER_SPARKRUN ? ":" : "=";

                        if (format == LAUNCHER_SVD && strncmp(s, "export ", 7) == 0)
                                s += 7, len -= 7;
                        key = strcspn(s, sep);
                        in_hosts = false;
                        if (key < len) {
                                unquote(s + key + 1, len - key - 1, format == LAUNCHER_SPARKRUN, value,
                                        len + 1);
                                r = add(e, s, key, value, line);
                                in_hosts = format == LAUNCHER_SPARKRUN && key == 5 &&
                                           strncmp(s, "hosts", 5) == 0;
                        }
                }
                s += len;
                if (*s == '\n')
                        s++;
        }
        return r;
}

/* Text from a file or another node, to the terminal: control bytes as '?'. */
static void put(FILE *out, const char *s)
{
        for (; *s; s++)
                fputc((unsigned char)*s < ' ' || *s == 0x7f ? '?' : *s, out);
}

static const struct launcher_node *node_at(const struct launcher_plan *p, const char *address)
{
        for (size_t i = 0; i < p->n_nodes; i++)
                if (strcmp(p->nodes[i].address, address) == 0)
                        return &p->nodes[i];
        return NULL;
}

static bool in_list(const char *list, const char *item)
{
        size_t n = strlen(item);

        for (const char *s = list; *s;) {
                size_t len = strcspn(s, ",");

                if (len == n && strncmp(s, item, n) == 0)
                        return true;
                s += len;
                if (*s == ',')
                        s++;
        }
        return false;
}

/* The members list (hosts, CLUSTER_NODES): who joined, who left, who is the head. */
static int compare_members(FILE *out, const char *path, const char *key, const struct entry *have,
                           const char *want, const struct launcher_plan *p, const char *fix)
{
        int n = 0;

        for (size_t i = 0; i < p->n_nodes; i++)
                if (!in_list(have->value, p->nodes[i].address)) {
                        fprintf(out, "%s:%d: %s lacks %s, the plan's rank %zu (", path, have->line, key,
                                p->nodes[i].address, i);
                        put(out, p->nodes[i].name);
                        fprintf(out, "): a node joined the plan; fix: %s\n", fix);
                        n++;
                }
        for (const char *s = have->value; *s;) {
                size_t len = strcspn(s, ",");
                char item[64];

                snprintf(item, sizeof(item), "%.*s", (int)(len < 63 ? len : 63), s);
                if (!in_list(want, item)) {
                        fprintf(out, "%s:%d: %s has ", path, have->line, key);
                        put(out, item);
                        fprintf(out,
                                ", which is no member of the plan: a node left or is left out (sparkc "
                                "plan says why); fix: %s\n",
                                fix);
                        n++;
                }
                s += len;
                if (*s == ',')
                        s++;
        }
        if (n == 0 && strcmp(have->value, want) != 0) {
                fprintf(out,
                        "%s:%d: %s is in another order than the plan's (%s): the "
                        "head or a rank moved; fix: %s\n",
                        path, have->line, key, want, fix);
                n++;
        }
        return n;
}

static int compare(FILE *out, const char *path, enum launcher_format format, struct entries *have,
                   struct entries *want, const struct launcher_plan *p)
{
        const char *fix =
                format == LAUNCHER_SPARKRUN ? "sparkc export sparkrun" : "sparkc export svd on this node";
        int n = 0;

        for (size_t i = 0; i < want->n; i++) {
                const struct entry *w = &want->v[i], *h = find(have, w->key);

                if (!h) {
                        fprintf(out, "%s: no %s; the plan has \"%s\"; fix: %s\n", path, w->key, w->value,
                                fix);
                        n++;
                } else if (strcmp(w->key, "hosts") == 0 || strcmp(w->key, "CLUSTER_NODES") == 0)
                        n += compare_members(out, path, w->key, h, w->value, p, fix);
                else if (strcmp(h->value, w->value) != 0) {
                        const struct launcher_node *other = node_at(p, h->value);

                        fprintf(out, "%s:%d: %s is \"", path, h->line, w->key);
                        put(out, h->value);
                        fprintf(out, "\", the plan's is \"%s\": ", w->value);
                        if (strcmp(w->key, "LOCAL_IP") == 0 && other) {
                                fputs("this .env is ", out);
                                put(out, other->name);
                                fputs("'s, copied to this node", out);
                        } else if (strcmp(w->key, "topology") == 0 || strcmp(w->key, "ETH_IF") == 0 ||
                                   strcmp(w->key, "IB_IF") == 0 || strcmp(w->key, "CLUSTER_LINKS") == 0)
                                fputs("the cabling changed (a cable moved, a port went down)", out);
                        else if (strcmp(w->key, "description") == 0)
                                fputs("the file was written from another plan", out);
                        else
                                fputs("the plan changed", out);
                        fprintf(out, "; fix: %s\n", fix);
                        n++;
                }
        }
        for (size_t i = 0; format == LAUNCHER_SVD && i < have->n; i++)
                if (strncmp(have->v[i].key, "CONTAINER_NCCL_", 15) == 0 && !find(want, have->v[i].key)) {
                        fprintf(out,
                                "%s:%d: %s is set, the plan sets no %s: it would override the plan's "
                                "NCCL settings; fix: %s\n",
                                path, have->v[i].line, have->v[i].key, have->v[i].key + 10, fix);
                        n++;
                }
        return n;
}

static int check_with(FILE *report, enum launcher_format format, const char *text, const char *path,
                      const struct launcher_plan *p, struct entries *have, struct entries *want)
{
        _cleanup_free_ char *expected = NULL;
        size_t size = 0;
        char why[512];
        FILE *f;
        int r;

        if (parse(text, format, have) < 0)
                return -ENOMEM;
        f = open_memstream(&expected, &size);
        if (!f)
                return -ENOMEM;
        if (format == LAUNCHER_SPARKRUN) {
                const struct entry *name = find(have, "name");

                r = launcher_write_sparkrun(f, p, name ? name->value : "", why, sizeof(why));
        } else
                r = launcher_write_svd(f, p, why, sizeof(why));
        if (fclose(f) != 0 && r == 0)
                r = -ENOMEM;
        if (r < 0) {
                fprintf(report, "%s: not checked: %s\n", path, why);
                return r;
        }
        if (parse(expected, format, want) < 0)
                return -ENOMEM;
        r = compare(report, path, format, have, want, p);
        if (r == 0)
                fprintf(report, "%s: matches the plan %s\n", path, p->digest);
        return r;
}

int launcher_check(FILE *report, enum launcher_format format, const char *text, const char *path,
                   const struct launcher_plan *p)
{
        struct entries *have = calloc(1, sizeof(*have)), *want = calloc(1, sizeof(*want));
        int r = have && want ? check_with(report, format, text, path, p, have, want) : -ENOMEM;

        entries_free(have);
        entries_free(want);
        return r;
}
