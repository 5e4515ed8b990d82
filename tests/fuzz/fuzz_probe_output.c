/*
 * What a probe helper writes: JSON lines on stdout, framed and filtered as child.c does, then
 * classified and (for a server helper's listening line) turned into the probe-ready message the
 * peer checks; and NCCL's log lines on stderr, as sparkd-probe-nccl reads them.
 */
#include <stdlib.h>
#include <string.h>

#include "daemon/probe/probe_helper.h"
#include "fuzz.h"
#include "probes/nccl_report.h"

static void helper_line(const char *line, struct nccl_transport *t)
{
        json_object *obj = json_tokener_parse(line), *ready, *fields;

        nccl_transport_parse_line(t, line);
        if (!obj || !json_object_is_type(obj, json_type_object)) {
                json_object_put(obj);
                return;
        }
        if (probe_helper_line_kind(obj) == HELPER_LINE_LISTENING) {
                ready = probe_ready_message("0011223344556677", obj);
                if (json_object_object_get_ex(ready, "fields", &fields) && !probe_ready_fields_ok(fields))
                        abort(); /* what this node sends, its peer must take */
                json_object_put(ready);
        }
        json_object_put(obj);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        struct nccl_transport t = { 0 };
        const char *p = (const char *)data, *end = p + size;
        json_object *j;

        while (p < end) {
                const char *nl = memchr(p, '\n', (size_t)(end - p));
                size_t len = nl ? (size_t)(nl - p) : (size_t)(end - p);
                char *line = malloc(len + 1);

                if (!line)
                        abort();
                memcpy(line, p, len);
                line[len] = '\0';
                helper_line(line, &t);
                free(line);
                p += len + 1;
        }
        (void)nccl_transport_socket_fallback(&t, "mlx5_0,mlx5_1");
        j = nccl_transport_to_json(&t, "mlx5_0");
        json_object_put(j);
        return 0;
}
