/* One escaping function per sink (text_escape.h). */
#include "text_escape.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "text_check.h"

void escape_sh_value(FILE *f, const char *s)
{
        fputc('\'', f);
        for (; *s; s++) {
                if (*s == '\'')
                        fputs("'\\''", f);
                else
                        fputc(*s, f);
        }
        fputc('\'', f);
}

/* Writes s with every control character and every byte that is not UTF-8 as \xNN (each byte of
 * a multi-byte control); with special, the characters in it as a backslash and themselves. */
static void escape_controls(FILE *f, const char *s, const char *special)
{
        size_t len = strlen(s);

        for (size_t i = 0; i < len;) {
                unsigned cp;
                size_t n = text_utf8_char(s + i, len - i, &cp);

                if (n == 0 || text_is_control(cp)) {
                        for (size_t k = 0; k < (n ? n : 1); k++)
                                fprintf(f, "\\x%02x", (unsigned char)s[i + k]);
                        i += n ? n : 1;
                        continue;
                }
                if (n == 1 && special && strchr(special, s[i]))
                        fputc('\\', f);
                fwrite(s + i, 1, n, f);
                i += n;
        }
}

void escape_comment(FILE *f, const char *s)
{
        escape_controls(f, s, "\\");
}

void escape_systemd_value(FILE *f, const char *s)
{
        size_t len = strlen(s), start = 0;

        /* '%' first: systemd expands specifiers in the raw line, then unquotes and unescapes. */
        for (size_t i = 0; i <= len; i++) {
                if (i < len && s[i] != '%')
                        continue;
                {
                        char *part = strndup(s + start, i - start);

                        if (part)
                                escape_controls(f, part, "\\\"");
                        free(part);
                }
                if (i < len)
                        fputs("%%", f);
                start = i + 1;
        }
}

int escape_docker_value(FILE *f, const char *s)
{
        for (const char *c = s; *c; c++)
                if ((unsigned char)*c < 0x20 || *c == 0x7f)
                        return -EINVAL;
        fputs(s, f);
        return 0;
}

void escape_yaml(FILE *f, const char *s)
{
        fputc('"', f);
        escape_controls(f, s, "\\\"");
        fputc('"', f);
}

bool escape_env_file_value_is_safe(const char *s)
{
        if (!*s)
                return false;
        for (; *s; s++)
                if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') ||
                      strchr(".,:/=+@_-", *s)))
                        return false;
        return true;
}

int escape_env_file_value(FILE *f, const char *s)
{
        if (!escape_env_file_value_is_safe(s))
                return -EINVAL;
        fprintf(f, "\"%s\"", s);
        return 0;
}

void escape_term(FILE *f, const char *s)
{
        escape_controls(f, s, NULL);
}

char *escape_term_dup(const char *s)
{
        char *text = NULL;
        size_t size = 0;
        FILE *f = open_memstream(&text, &size);

        if (!f)
                return NULL;
        escape_term(f, s);
        if (fclose(f) != 0) {
                free(text);
                return NULL;
        }
        return text;
}

static bool needs_term_escape(const char *s)
{
        size_t len = strlen(s);

        for (size_t i = 0; i < len;) {
                unsigned cp;
                size_t n = text_utf8_char(s + i, len - i, &cp);

                if (n == 0 || text_is_control(cp))
                        return true;
                i += n;
        }
        return false;
}

int escape_term_json(json_object *o)
{
        if (json_object_is_type(o, json_type_string)) {
                char *e;
                int r;

                /* The JSON length: a string may hold a NUL the C string stops at. */
                if (!needs_term_escape(json_object_get_string(o)) &&
                    strlen(json_object_get_string(o)) == (size_t)json_object_get_string_len(o))
                        return 0;
                e = escape_term_dup(json_object_get_string(o));
                if (!e)
                        return -ENOMEM;
                r = json_object_set_string(o, e) ? 0 : -ENOMEM;
                free(e);
                return r;
        }
        if (json_object_is_type(o, json_type_array)) {
                for (size_t i = 0; i < json_object_array_length(o); i++)
                        if (escape_term_json(json_object_array_get_idx(o, i)) < 0)
                                return -ENOMEM;
                return 0;
        }
        if (!json_object_is_type(o, json_type_object))
                return 0;
        for (;;) { /* a key to escape is taken out and put back escaped, then the walk restarts */
                const char *bad = NULL;
                json_object *value = NULL;
                char *e;

                json_object_object_foreach(o, key, v) {
                        if (needs_term_escape(key)) {
                                bad = key;
                                value = v;
                                break;
                        }
                }
                if (!bad)
                        break;
                e = escape_term_dup(bad);
                if (!e)
                        return -ENOMEM;
                json_object_get(value);
                json_object_object_del(o, bad);
                json_object_object_add(o, e, value);
                free(e);
        }
        json_object_object_foreach(o, key, v) {
                (void)key;
                if (escape_term_json(v) < 0)
                        return -ENOMEM;
        }
        return 0;
}

size_t escape_log(char *dst, size_t size, const char *s)
{
        char *text = escape_term_dup(s);
        size_t len = text ? strlen(text) : 0;

        if (len >= size) { /* cut at a character boundary: the escaped text is UTF-8 */
                len = size - 1;
                while (len > 0 && ((unsigned char)text[len] & 0xc0) == 0x80)
                        len--;
        }
        if (text)
                memcpy(dst, text, len);
        dst[len] = '\0';
        free(text);
        return len;
}
