/* Values quoted for a launcher's YAML and KEY=VALUE files (sink_quote.h). */
#include "sink_quote.h"

#include <errno.h>
#include <string.h>

void sink_quote_yaml(FILE *f, const char *s)
{
        fputc('"', f);
        for (; *s; s++) {
                unsigned char c = (unsigned char)*s;

                if (c == '"' || c == '\\')
                        fprintf(f, "\\%c", c);
                else if (c < 0x20 || c == 0x7f)
                        fprintf(f, "\\x%02x", c);
                else
                        fputc(c, f);
        }
        fputc('"', f);
}

bool sink_env_value_is_safe(const char *s)
{
        if (!*s)
                return false;
        for (; *s; s++)
                if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') ||
                      strchr(".,:/=+@_-", *s)))
                        return false;
        return true;
}

int sink_quote_env(FILE *f, const char *s)
{
        if (!sink_env_value_is_safe(s))
                return -EINVAL;
        fprintf(f, "\"%s\"", s);
        return 0;
}
