/*
 * The doctor's checks of the host's software: the sysctls sparkd manages, the memlock limits RDMA
 * needs, the GPU and its driver, the GPU Direct RDMA risk of nvidia_peermem, and NCCL.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "common/strutil.h"
#include "doctor_checks.h"

#define MEMLOCK_ENOUGH (1ULL << 30) /* RDMA probes and NCCL pin hundreds of MiB */

void doctor_check_sysctls(struct check *c, const struct fabric_facts *f)
{
        size_t wrong = 0;

        check_begin(c, "sysctls");
        for (size_t i = 0; i < f->n_sysctls; i++) {
                const struct fabric_sysctl *s = &f->sysctls[i];
                char a[128], w[128];

                evidence(c, "%s = %s (wanted %s)", s->name, s->actual[0] ? s->actual : "unreadable",
                         s->wanted);
                snprintf(a, sizeof(a), "%s", s->actual);
                snprintf(w, sizeof(w), "%s", s->wanted);
                if (strcmp(str_strip(a), str_strip(w)) != 0)
                        wrong++;
        }
        if (f->n_sysctls == 0) {
                check_end(c, DOCTOR_OK, NULL, "no sysctl is managed ([sysctl] is empty)");
                return;
        }
        if (wrong) {
                check_end(c, DOCTOR_WARN,
                          "run sparkd in enforce mode, or: sysctl -w NAME=VALUE (and persist it in "
                          "/etc/sysctl.d)",
                          "%zu of %zu sysctls differ from the config", wrong, f->n_sysctls);
                return;
        }
        check_end(c, DOCTOR_OK, NULL, "%zu sysctls as configured", f->n_sysctls);
}

static void format_memlock(uint64_t v, char *buf, size_t size)
{
        if (v == HOSTFACTS_UNLIMITED)
                snprintf(buf, size, "unlimited");
        else
                snprintf(buf, size, "%llu KiB", (unsigned long long)(v / 1024));
}

static bool memlock_is_low(uint64_t v)
{
        return v != HOSTFACTS_UNLIMITED && v < MEMLOCK_ENOUGH;
}

/* sparkd's own limit comes from its systemd unit: name the line that keeps it low, or say that
 * the unit is right and only systemd has not applied it, rather than asking for a line that is
 * already there. */
static void fix_daemon_limit(const struct fabric_facts *f, char *fix, size_t size)
{
        const struct hostfacts *h = &f->host;
        char unit[32];

        if (!f->is_daemon_under_systemd) {
                snprintf(fix, size,
                         "for sparkd: start it as the service (systemctl start sparkd; its unit sets "
                         "LimitMEMLOCK=infinity), or run `ulimit -l unlimited` in the shell that starts it "
                         "(limits.d does not apply to it)");
                return;
        }
        if (!h->memlock_unit_source[0]) {
                snprintf(fix, size,
                         "for sparkd: systemctl edit sparkd, add '[Service]' and 'LimitMEMLOCK=infinity', "
                         "then "
                         "systemctl restart sparkd");
                return;
        }
        format_memlock(h->memlock_unit, unit, sizeof(unit));
        if (memlock_is_low(h->memlock_unit))
                snprintf(fix, size,
                         "for sparkd: LimitMEMLOCK at %s keeps it at %s: make it LimitMEMLOCK=infinity "
                         "there, then "
                         "systemctl daemon-reload and systemctl restart sparkd",
                         h->memlock_unit_source, unit);
        else
                snprintf(fix, size,
                         "for sparkd: its unit already sets LimitMEMLOCK=%s (%s), but systemd has not "
                         "applied it "
                         "to the running sparkd: systemctl daemon-reload and systemctl restart sparkd "
                         "(`systemctl show sparkd -p LimitMEMLOCK` shows what systemd applies)",
                         h->memlock_unit == HOSTFACTS_UNLIMITED ? "infinity" : unit, h->memlock_unit_source);
}

/* One pam_limits line of login sessions: fine as it is, to be changed where it is set, or to be
 * added (collected in adds). */
static void fix_login_line(const char *type, uint64_t value, const char *source, char *fix, size_t size,
                           char *adds, size_t adds_size)
{
        size_t used = strlen(fix);
        char v[32];

        if (source[0] && !memlock_is_low(value))
                return;
        format_memlock(value, v, sizeof(v));
        if (source[0])
                snprintf(fix + used, size - used, "%schange %s (%s %s) to '* %s memlock unlimited'",
                         used ? "; " : "", source, type, v, type);
        else
                snprintf(adds + strlen(adds), adds_size - strlen(adds), "%s'* %s memlock unlimited'",
                         adds[0] ? " and " : "", type);
}

/* Each process gets its limit from where it was started: sparkd from its systemd unit or from the
 * shell that ran it, login sessions from pam_limits (limits.conf, limits.d), which applies to
 * neither systemd services nor sparkd. So each low limit has its own fix, and a line that is
 * already right is never asked for. */
void doctor_check_memlock(struct check *c, const struct fabric_facts *f)
{
        const struct hostfacts *h = &f->host;
        char daemon[32], login[32], summary[160] = "", fix[1024] = "", login_fix[640] = "", adds[128] = "";
        bool daemon_low = memlock_is_low(f->memlock_daemon);
        bool login_low = !h->memlock_login_source[0] || memlock_is_low(h->memlock_login);

        check_begin(c, "memlock");
        format_memlock(f->memlock_daemon, daemon, sizeof(daemon));
        if (daemon_low)
                evidence(c, "sparkd: %s (%s)", daemon,
                         f->is_daemon_under_systemd ? "LimitMEMLOCK of its systemd unit"
                                                    : "started outside systemd: the limit of the shell "
                                                      "that started it");
        else
                evidence(c, "sparkd: %s", daemon);
        if (h->memlock_login_source[0]) {
                format_memlock(h->memlock_login, login, sizeof(login));
                evidence(c, "login sessions: %s (%s)", login, h->memlock_login_source);
        } else {
                snprintf(login, sizeof(login), "the distribution's default");
                evidence(c, "login sessions: not set in /etc/security/limits.conf or limits.d (the "
                            "distribution default, often 8 MiB)");
        }
        if (!daemon_low && !login_low) {
                check_end(c, DOCTOR_OK, NULL, "memlock unlimited for sparkd and login sessions");
                return;
        }
        if (daemon_low)
                fix_daemon_limit(f, fix, sizeof(fix));
        if (login_low) {
                /* The hard limit caps the soft one: both must allow it, each fixed where it is set. */
                fix_login_line("soft", h->memlock_login_soft, h->memlock_login_soft_source, login_fix,
                               sizeof(login_fix), adds, sizeof(adds));
                fix_login_line("hard", h->memlock_login_hard, h->memlock_login_hard_source, login_fix,
                               sizeof(login_fix), adds, sizeof(adds));
                if (adds[0])
                        snprintf(login_fix + strlen(login_fix), sizeof(login_fix) - strlen(login_fix),
                                 "%sadd %s to /etc/security/limits.d/90-rdma.conf", login_fix[0] ? "; " : "",
                                 adds);
                snprintf(fix + strlen(fix), sizeof(fix) - strlen(fix),
                         "%sfor login sessions: %s and log in again", fix[0] ? "; " : "", login_fix);
        }
        if (daemon_low)
                snprintf(summary, sizeof(summary), "sparkd's memlock limit is %s%s", daemon,
                         login_low ? ", and login sessions' is " : "");
        if (login_low)
                snprintf(summary + strlen(summary), sizeof(summary) - strlen(summary), "%s%s",
                         daemon_low ? "" : "login sessions' memlock limit is ", login);
        check_end(c, DOCTOR_WARN, fix, "%s: RDMA memory registration may fail (RDMA pins memory)", summary);
}

/* A node of a GPU cluster without a usable GPU cannot take its part in a job: that is a failure,
 * even though the facts themselves treat a missing driver as a plain fact. */
void doctor_check_gpu(struct check *c, const struct fabric_facts *f)
{
        const struct hostfacts *h = &f->host;

        check_begin(c, "gpu");
        if (!h->has_nvidia_driver) {
                evidence(c, "no NVIDIA kernel driver (/proc/driver/nvidia/version is missing)");
                check_end(c, DOCTOR_FAIL,
                          "install the NVIDIA GPU driver (the open kernel module, 580 or later, also allows "
                          "DMA-BUF GPU Direct RDMA) and check with nvidia-smi",
                          "no NVIDIA GPU driver: NCCL jobs cannot use a GPU on this node");
                return;
        }
        for (size_t i = 0; i < h->n_gpus; i++)
                evidence(c, "GPU %s at %s", h->gpus[i].model, h->gpus[i].bus);
        if (h->n_gpus == 0) {
                check_end(c, DOCTOR_FAIL, "check nvidia-smi and `dmesg | grep -i nvrm`",
                          "NVIDIA driver %s is loaded but reports no GPU", h->driver_version);
                return;
        }
        check_end(c, DOCTOR_OK, NULL, "%zu GPU%s, driver %s", h->n_gpus, h->n_gpus == 1 ? "" : "s",
                  h->driver_version);
}

void doctor_check_gdr_risk(struct check *c, const struct fabric_facts *f)
{
        const struct hostfacts *h = &f->host;

        check_begin(c, "gpu-direct");
        if (!h->has_nvidia_driver) {
                evidence(c, "no NVIDIA driver loaded");
                check_end(c, DOCTOR_OK, NULL, "no NVIDIA GPU driver: nothing to risk");
                return;
        }
        evidence(c, "NVIDIA driver %s (%s kernel module)", h->driver_version,
                 h->is_open_kernel_module ? "open" : "proprietary");
        for (size_t i = 0; i < h->n_gpus; i++)
                evidence(c, "GPU %s at %s%s", h->gpus[i].model, h->gpus[i].bus,
                         h->gpus[i].is_unified_memory ? ": unified memory" : "");
        evidence(c, "nvidia_peermem %s", h->has_peermem ? "loaded" : "not loaded");
        evidence(c, "DMA-BUF: %s", h->dmabuf_reason);
        if (h->has_unified_memory && h->has_peermem) {
                check_end(c, DOCTOR_FAIL,
                          "unload it (modprobe -r nvidia_peermem), keep it out (echo 'blacklist "
                          "nvidia_peermem' > "
                          "/etc/modprobe.d/sparkd-no-peermem.conf), and run jobs with `sparkc env` (safe "
                          "mode, or "
                          "dmabuf with the open driver 580+)",
                          "nvidia_peermem is loaded on a unified-memory GPU: NCCL init hangs forever with "
                          "GPU Direct "
                          "RDMA on");
                return;
        }
        check_end(c, DOCTOR_OK, NULL, "%s",
                  h->is_dmabuf_possible
                          ? "GPU Direct RDMA possible through DMA-BUF (sparkc env --mode dmabuf)"
                          : "GPU Direct RDMA off (safe mode); no peermem risk");
}

void doctor_check_nccl(struct check *c, const struct fabric_facts *f)
{
        const char *version = f->host.nccl_version[0] ? f->host.nccl_version : "(version unknown)";
        char lib[64], self[64], fix[160];

        check_begin(c, "nccl");
        if (!f->host.has_nccl) {
                check_end(c, DOCTOR_WARN, "install NCCL (libnccl2) for GPU jobs and the nccl probe",
                          "NCCL library not found");
                return;
        }
        elf_machine_name(&f->daemon_machine, self, sizeof(self));
        if (f->host.nccl_machine_error == -EBADMSG) {
                evidence(c, "%s: not an ELF file", f->host.nccl_path);
                snprintf(fix, sizeof(fix), "install NCCL for %s again (libnccl2, or CUDA's NCCL)", self);
                check_end(c, DOCTOR_FAIL, fix, "NCCL %s at %s is not a library: nothing here can load it",
                          version, f->host.nccl_path);
                return;
        }
        if (f->host.nccl_machine_error < 0) {
                evidence(c, "%s: %s", f->host.nccl_path, strerror(-f->host.nccl_machine_error));
                check_end(c, DOCTOR_WARN, "check that the library can be read (ls -lL on it)",
                          "NCCL %s: the library cannot be read, so the machine it is built for is not known",
                          version);
                return;
        }
        elf_machine_name(&f->host.nccl_machine, lib, sizeof(lib));
        if (!elf_machine_equal(&f->host.nccl_machine, &f->daemon_machine)) {
                evidence(c, "%s: ELF for %s", f->host.nccl_path, lib);
                evidence(c, "sparkd: ELF for %s", self);
                snprintf(fix, sizeof(fix),
                         "install the NCCL built for %s (libnccl2 of this node's architecture)", self);
                check_end(c, DOCTOR_FAIL, fix,
                          "NCCL %s is built for %s, this node runs %s: no job here can load it", version,
                          lib, self);
                return;
        }
        evidence(c, "%s: ELF for %s, as sparkd", f->host.nccl_path, lib);
        check_end(c, DOCTOR_OK, NULL, "NCCL %s", version);
}
