/*
 * The doctor's check of the fabric ports' error counters: each port's counts since the driver
 * loaded, and what the daemon's counter watch made of their rise over its window. A fatal
 * counter that rose fails the check, a rate past its threshold warns; counts alone (no watch,
 * or nothing rising) are evidence, not a fault, since the kernel never clears them.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "daemon/host/counter_watch.h"
#include "doctor_checks.h"

static bool has_error_counters(const struct port_counter_sample *s)
{
        for (size_t c = 0; c < _PORT_COUNTER_MAX; c++)
                if (s->has[c] && !port_counter_is_traffic(c))
                        return true;
        return false;
}

/* "symbol_error 1200 (+600 in 60s, 10/s), link_downed 1": the counters that counted anything. */
static void port_evidence(struct check *c, const struct port_counter_sample *s)
{
        char line[MAX_EVIDENCE_LINE];
        size_t len = 0;

        line[0] = '\0';
        for (size_t k = 0; k < _PORT_COUNTER_MAX && len < sizeof(line); k++) {
                if (!s->has[k] || port_counter_is_traffic(k) || s->values[k] == 0)
                        continue;
                len += (size_t)snprintf(line + len, sizeof(line) - len, "%s%s %" PRIu64, len ? ", " : "",
                                        port_counter_name(k), s->values[k]);
                if (len < sizeof(line) && s->window_delta[k] > 0)
                        len += (size_t)snprintf(
                                line + len, sizeof(line) - len, " (+%" PRId64 " in %" PRIu64 "s, %.3g/s)",
                                s->window_delta[k], s->window_usec / 1000000, s->rate_per_sec[k]);
        }
        evidence(c, "%s port %u (%s): %s", s->device, s->port, s->netdev[0] ? s->netdev : "no netdev",
                 line[0] ? line : "no errors counted");
}

/* The worst alarm of the ports, and the first port and counter that raised it. */
static enum port_counter_alarm worst_alarm(const struct port_counter_list *l,
                                           const struct port_counter_sample **at, size_t *counter)
{
        enum port_counter_alarm worst = PORT_COUNTER_QUIET;

        for (size_t i = 0; i < l->n; i++)
                for (size_t k = 0; k < _PORT_COUNTER_MAX; k++)
                        if (l->v[i].has[k] && l->v[i].alarm[k] > worst) {
                                worst = l->v[i].alarm[k];
                                *at = &l->v[i];
                                *counter = k;
                        }
        return worst;
}

void doctor_check_port_counters(struct check *c, const struct fabric_facts *f)
{
        const struct port_counter_sample *at = NULL;
        size_t ports = 0, counter = 0;
        enum port_counter_alarm worst;

        for (size_t i = 0; i < f->counters.n; i++)
                ports += has_error_counters(&f->counters.v[i]);
        if (ports == 0)
                return; /* no port shows counters (no RDMA device, or a kernel without them) */
        check_begin(c, "port-counters");
        for (size_t i = 0; i < f->counters.n; i++)
                if (has_error_counters(&f->counters.v[i]))
                        port_evidence(c, &f->counters.v[i]);
        worst = worst_alarm(&f->counters, &at, &counter);
        if (worst == PORT_COUNTER_FATAL) {
                check_end(c, DOCTOR_FAIL, counter_action(counter),
                          "%s port %u: %s rose within the last %" PRIu64 "s", at->device, at->port,
                          port_counter_name(counter), at->window_usec / 1000000);
                return;
        }
        if (worst == PORT_COUNTER_DEGRADED) {
                check_end(c, DOCTOR_WARN, counter_action(counter),
                          "%s port %u: %s at %.3g/s over the last %" PRIu64 "s, past its threshold",
                          at->device, at->port, port_counter_name(counter), at->rate_per_sec[counter],
                          at->window_usec / 1000000);
                return;
        }
        check_end(c, DOCTOR_OK, NULL, "no error counter rising past its threshold on %zu port%s", ports,
                  ports == 1 ? "" : "s");
}
