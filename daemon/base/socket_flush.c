#include "socket_flush.h"

#include <errno.h>
#include <event2/buffer.h>

int socket_flush_now(struct bufferevent *bev)
{
        struct evbuffer *out = bufferevent_get_output(bev);
        int n;

        if (evbuffer_get_length(out) == 0)
                return 0;
        evbuffer_unfreeze(out, 1);
        n = evbuffer_write(out, bufferevent_getfd(bev));
        evbuffer_freeze(out, 1);
        return n < 0 ? (errno > 0 ? -errno : -EIO) : n;
}
