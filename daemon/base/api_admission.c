#include "api_admission.h"

#include <errno.h>
#include <stdio.h>
#include <sys/socket.h>
#include <unistd.h>

#include "common/jsonrpc.h"
#include "common/proto.h"

unsigned api_admission_reserved(const struct api_access *access)
{
        unsigned half = access->max_clients / 2;

        return access->reserved_admin_clients < half ? access->reserved_admin_clients : half;
}

int api_admission_check(const struct api_access *access, uid_t uid, bool is_admin,
                        const struct api_admission_load *load, char *why, size_t size)
{
        unsigned reserved = api_admission_reserved(access);

        if (load->open >= access->max_clients) {
                snprintf(why, size, "%u connections open (max_clients %u)", load->open, access->max_clients);
                return -EUSERS;
        }
        if (is_admin)
                return 0;
        if (load->open >= access->max_clients - reserved) {
                snprintf(why, size,
                         "%u connections open; the last %u of max_clients %u are kept for root and the "
                         "admin group (reserved_admin_clients)",
                         load->open, reserved, access->max_clients);
                return -EUSERS;
        }
        if (load->open_of_uid >= access->max_clients_per_uid) {
                snprintf(why, size, "uid %u holds %u connections (max_clients_per_uid %u)", (unsigned)uid,
                         load->open_of_uid, access->max_clients_per_uid);
                return -EUSERS;
        }
        return 0;
}

void api_admission_refuse(int fd, const char *why)
{
        char message[512];
        json_object *msg;
        const char *s;
        size_t len;

        snprintf(message, sizeof(message), "too many clients: %s", why);
        msg = jsonrpc_error_new(NULL, RPC_BUSY, message, NULL);
        s = jsonrpc_to_string(msg, &len);
        (void)!send(fd, s, len, MSG_DONTWAIT | MSG_NOSIGNAL);
        (void)!send(fd, "\n", 1, MSG_DONTWAIT | MSG_NOSIGNAL);
        json_object_put(msg);
        close(fd);
}
