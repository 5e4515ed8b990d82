/* A job's environment judged against this node: which value NCCL will see for each variable (the
 * environment, else the first config file that sets it), each judged, the files' lines that a
 * process without this environment would get, and the job's memlock limit. */
#include "env_check.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/macro.h"
#include "env_check_judge.h"
#include "envgen.h"
#include "envgen_frameworks.h"

#define MEMLOCK_ENOUGH (1ULL << 30) /* NCCL registers hundreds of MiB per communicator */

/* NCCL takes a file's line only where nothing set the variable before: the environment first,
 * then the caller's file, then /etc/nccl.conf. A line the environment wins over still matters:
 * a rank launched without this environment (mpirun without -x, a container) gets it. */
static int effective_settings(const struct env_check_input *in, struct env_judge *j,
                              struct env_settings *out)
{
        int r;

        for (size_t i = 0; i < in->environ.n; i++)
                if (!env_settings_find(out, in->environ.v[i].name) &&
                    (r = env_settings_add(out, in->environ.v[i].name, in->environ.v[i].value,
                                          "environment")) < 0)
                        return r;
        for (size_t i = 0; i < in->files.n; i++) {
                const struct env_setting *file = &in->files.v[i], *seen = env_settings_find(out, file->name);

                if (!seen) {
                        if ((r = env_settings_add(out, file->name, file->value, file->source)) < 0)
                                return r;
                } else if (strcmp(seen->source, "environment") == 0 && strcmp(seen->value, file->value) != 0)
                        env_finding(
                                j, false, file,
                                "remove that line: it is what every rank started without this environment "
                                "runs with",
                                "this environment's '%s' wins in this process, but a rank launched without "
                                "it (mpirun without -x %s, a container, a service) gets this line's",
                                seen->value, file->name);
        }
        return 0;
}

static void format_limit(uint64_t v, char *buf, size_t size)
{
        if (v == HOSTFACTS_UNLIMITED)
                snprintf(buf, size, "unlimited");
        else
                snprintf(buf, size, "%llu KiB", (unsigned long long)(v / 1024));
}

/* The job's own limit is what NCCL's registrations hit, whatever sparkd's or a login's is. */
static void judge_memlock(struct env_judge *j, const struct env_check_input *in)
{
        const struct hostfacts *h = &j->f->host;
        char soft[32], hard[32], login[32], fix[768];

        if (!in->has_memlock)
                return;
        if (in->memlock_soft == HOSTFACTS_UNLIMITED || in->memlock_soft >= MEMLOCK_ENOUGH)
                return;
        format_limit(in->memlock_soft, soft, sizeof(soft));
        format_limit(in->memlock_hard, hard, sizeof(hard));
        if (in->memlock_hard == HOSTFACTS_UNLIMITED || in->memlock_hard >= MEMLOCK_ENOUGH) {
                env_finding(
                        j, false, NULL,
                        "run `ulimit -l unlimited` at the top of the job script: the hard limit allows it",
                        "this job's memlock limit is %s (hard %s): NCCL's RDMA memory registrations "
                        "fail past it",
                        soft, hard);
                return;
        }
        /* Never the limits.d line that is already there: a job at a low limit where login sessions
         * get enough was started some other way. */
        if (h->memlock_login_source[0] &&
            (h->memlock_login == HOSTFACTS_UNLIMITED || h->memlock_login >= MEMLOCK_ENOUGH)) {
                format_limit(h->memlock_login, login, sizeof(login));
                snprintf(
                        fix, sizeof(fix),
                        "login sessions already get %s (%s), so this job was started another way: a systemd "
                        "service needs LimitMEMLOCK=infinity, a container --ulimit memlock=-1, a session "
                        "opened before that line was written a new login",
                        login, h->memlock_login_source);
        } else
                snprintf(fix, sizeof(fix),
                         "raise it where the job starts: login sessions through '* soft memlock unlimited' "
                         "and "
                         "'* hard memlock unlimited' in /etc/security/limits.d, then a new login (`sparkc "
                         "doctor` names a line that keeps it low); a systemd service through "
                         "LimitMEMLOCK=infinity; a container through --ulimit memlock=-1");
        env_finding(
                j, true, NULL, fix,
                "this job's memlock limit is %s, hard %s: NCCL's RDMA memory registrations fail past it, "
                "and the job cannot raise it",
                soft, hard);
}

static const struct env_setting *setting_of(const struct env_settings *s, const char *name)
{
        for (size_t i = 0; i < s->n; i++)
                if (strcmp(s->v[i].name, name) == 0)
                        return &s->v[i];
        return NULL;
}

/* The rendezvous as the job will try it: a route from this node to its host, and the job plan's. */
static void judge_rendezvous(struct env_judge *j, const struct env_check_input *in,
                             const struct env_settings *effective)
{
        for (size_t i = 0; i < in->n_routes; i++) {
                const struct env_check_route *r = &in->routes[i];
                const struct env_setting *s = setting_of(effective, r->name);
                char fix[160];

                if (!s)
                        continue;
                if (in->rendezvous[0])
                        snprintf(fix, sizeof(fix),
                                 "the job plan's rendezvous is %s: `sparkc env --for ...` gives it",
                                 in->rendezvous);
                else
                        snprintf(fix, sizeof(fix), "see `sparkc plan`");
                if (r->error)
                        env_finding(j, true, s, fix,
                                    "%s has no route from this node (the kernel's route lookup: %s): the "
                                    "job cannot reach its rendezvous",
                                    r->host, strerror(-r->error));
                else if (in->rendezvous[0] && strcmp(r->host, in->rendezvous) != 0)
                        env_finding(
                                j, false, s, fix,
                                "%s is reachable from here (through %s, from %s) but is not the job plan's "
                                "rendezvous: nodes that follow the plan meet elsewhere",
                                r->host, r->ifname[0] ? r->ifname : "?", r->source);
        }
}

json_object *env_check_run(const struct fabric_facts *f, const struct env_check_input *in)
{
        static const char *const words[] = { "ok", "warn", "fail" };
        _cleanup_(env_settings_free) struct env_settings effective = { 0 };
        json_object *o = json_object_new_object(), *env = envgen_build(f, ENV_MODE_AUTO), *vars = NULL;
        struct env_judge j = { .f = f,
                               .effective = &effective,
                               .findings = json_object_new_array(),
                               .own_address = in->own_address,
                               .bootstrap_ifname = in->bootstrap_ifname };
        size_t checked = 0;

        /* What `sparkc env` gives: on the management plane its bootstrap there too. */
        if (in->bootstrap_ifname[0]) {
                json_object *plan = json_object_new_object(), *self = json_object_new_object();

                json_object_object_add(self, "ifname", json_object_new_string(in->bootstrap_ifname));
                json_object_object_add(plan, "plane", json_object_new_string("management"));
                json_object_object_add(plan, "self", self);
                envgen_apply_plan(env, plan, false);
                json_object_put(plan);
        }
        if (json_object_object_get_ex(env, "variables", &vars))
                j.suggested = vars;
        if (effective_settings(in, &j, &effective) < 0)
                env_finding(&j, true, NULL, "try again", "out of memory while reading the settings");
        for (size_t i = 0; i < effective.n; i++)
                if (env_judge_variable(&j, &effective.v[i]))
                        checked++;
        judge_memlock(&j, in);
        judge_rendezvous(&j, in, &effective);
        json_object_object_add(o, "status", json_object_new_string(words[j.worst]));
        json_object_object_add(o, "checked", json_object_new_int((int)checked));
        json_object_object_add(o, "findings", j.findings);
        json_object_put(env);
        return o;
}
