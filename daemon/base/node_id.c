#include "node_id.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>

#include "common/macro.h"
#include "event.h"
#include "log.h"

int node_id_check(const char *s, size_t len)
{
        if (len == NODE_ID_LEN + 1 && s[NODE_ID_LEN] == '\n')
                len--;
        if (len != NODE_ID_LEN)
                return -EBADMSG;
        for (size_t i = 0; i < len; i++)
                if (!strchr("0123456789abcdef", s[i]))
                        return -EBADMSG;
        return 0;
}

int node_id_random(char id[NODE_ID_LEN + 1])
{
        unsigned char bytes[NODE_ID_LEN / 2];
        ssize_t n = getrandom(bytes, sizeof(bytes), 0);

        if (n != (ssize_t)sizeof(bytes))
                return n < 0 ? -errno : -EIO;
        for (size_t i = 0; i < sizeof(bytes); i++)
                snprintf(id + 2 * i, 3, "%02x", bytes[i]);
        return 0;
}

int node_id_load(struct store *store, char id[NODE_ID_LEN + 1])
{
        _cleanup_free_ char *data = NULL;
        size_t len = 0;
        char line[NODE_ID_LEN + 2];
        int r;

        if (store) {
                r = store_read(store, NODE_ID_FILE, 4096, &data, &len);
                if (r == 0 && node_id_check(data, len) == 0) {
                        memcpy(id, data, NODE_ID_LEN);
                        id[NODE_ID_LEN] = '\0';
                        return 0;
                }
                if (r == 0 || r == -EFBIG || r == -EBADMSG) {
                        struct log_field f[] = { { "file", NODE_ID_FILE } };

                        r = store_quarantine(store, NODE_ID_FILE);
                        event_emit(EVENT_STATE_QUARANTINED, f, ARRAY_SIZE(f),
                                   "state file %s/%s is damaged; moved aside to %s.corrupt%s",
                                   store_path(store), NODE_ID_FILE, NODE_ID_FILE, r < 0 ? " (failed)" : "");
                } else if (r != -ENOENT) {
                        log_warning("cannot read %s/%s: %s; making a new node id", store_path(store),
                                    NODE_ID_FILE, strerror(-r));
                }
        }

        r = node_id_random(id);
        if (r < 0)
                return r;
        if (!store)
                return 0;
        snprintf(line, sizeof(line), "%s\n", id);
        r = store_write(store, NODE_ID_FILE, line, strlen(line));
        if (r < 0)
                log_warning("cannot save the node id in %s: %s; it will change at the next start",
                            store_path(store), strerror(-r));
        return 0;
}
