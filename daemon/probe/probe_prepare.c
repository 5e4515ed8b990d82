#include "probe_prepare.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "common/macro.h"
#include "probe_memory.h"

/* The NCCL environment of this node for the request's mode, with its overrides. */
static int helper_environment(struct probe *p, const struct fabric_facts *f)
{
        enum env_mode mode = ENV_MODE_AUTO;
        const char *overrides[32];
        size_t n;
        int r;

        (void)env_mode_from_string(probe_kind_param_string(p->kind, p->params, p->kind->env_mode_param),
                                   &mode);
        n = probe_kind_environment(p->kind, p->params, overrides, ARRAY_SIZE(overrides));
        r = probe_env_build(f, mode, p->local, overrides, n, &p->env);
        if (r < 0)
                snprintf(p->error, sizeof(p->error), "cannot build the %s environment: %s", p->kind->name,
                         strerror(-r));
        return r;
}

int probe_prepare(struct probe *p)
{
        struct probes *ps = p->owner;
        bool needs_env = p->kind->env_mode_param && !p->env.entries;
        struct fabric_facts f;
        int r, gathered;

        if (!p->kind->memory_needed && !needs_env)
                return 0;
        /* One read of the facts for both: it walks sysfs and asks libibverbs. */
        gathered = ps->gather_facts ? ps->gather_facts(ps->facts_userdata, &f) : -ENODATA;
        if (gathered < 0 && needs_env) {
                snprintf(p->error, sizeof(p->error),
                         "cannot read this node's fabric facts for the %s environment: %s", p->kind->name,
                         strerror(-gathered));
                return gathered;
        }
        r = p->kind->memory_needed
                    ? probe_memory_guard(p->kind, p->params, gathered == 0 && f.host.has_unified_memory,
                                         ps->host_root, ps->memory_margin, p->error, sizeof(p->error))
                    : 0;
        if (r == 0 && needs_env)
                r = helper_environment(p, &f);
        if (gathered == 0)
                fabric_facts_free(&f);
        return r;
}
