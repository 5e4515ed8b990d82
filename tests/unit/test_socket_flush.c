#include <errno.h>
#include <event2/buffer.h>
#include <event2/event.h>
#include <fcntl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "daemon/base/socket_flush.h"
#include "test.h"

/* What is queued reaches the other end in the call, without a turn of the loop; what the socket
 * does not take stays queued, in order, for the bufferevent. */
static void test_written_in_the_call(void)
{
        struct event_base *base = event_base_new();
        struct bufferevent *bev;
        static char big[1 << 20];
        char got[16] = "";
        int sv[2];
        ssize_t n;

        CHECK(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, sv) == 0);
        bev = bufferevent_socket_new(base, sv[0], BEV_OPT_CLOSE_ON_FREE);
        bufferevent_enable(bev, EV_READ | EV_WRITE);
        CHECK(socket_flush_now(bev) == 0); /* nothing queued */
        evbuffer_add(bufferevent_get_output(bev), "hello", 5);
        CHECK(socket_flush_now(bev) == 5);
        n = read(sv[1], got, sizeof(got));
        CHECK(n == 5 && memcmp(got, "hello", 5) == 0);

        /* More than the socket takes: the rest stays, and the loop's writes go on from it. */
        memset(big, 'x', sizeof(big));
        big[sizeof(big) - 1] = 'z';
        evbuffer_add(bufferevent_get_output(bev), big, sizeof(big));
        n = socket_flush_now(bev);
        CHECK(n > 0 && (size_t)n < sizeof(big));
        CHECK(evbuffer_get_length(bufferevent_get_output(bev)) == sizeof(big) - (size_t)n);
        CHECK(socket_flush_now(bev) == -EAGAIN);
        /* The output is the bufferevent's again: the user cannot drain it. */
        CHECK(evbuffer_drain(bufferevent_get_output(bev), 1) < 0);
        bufferevent_free(bev);
        close(sv[1]);
        event_base_free(base);
}

int main(void)
{
        RUN(test_written_in_the_call);
        return test_result();
}
