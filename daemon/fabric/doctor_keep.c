#include "doctor_keep.h"

#include "daemon/base/clock.h"

static uint64_t daemon_clock(void)
{
        return clock_monotonic_usec();
}

struct doctor_keep *doctor_keep_init(struct doctor_keep *k, doctor_keep_run_fn run, void *userdata,
                                     uint64_t (*clock)(void))
{
        *k = (struct doctor_keep){ .run = run, .userdata = userdata, .clock = clock ? clock : daemon_clock };
        return k;
}

void doctor_keep_clear(struct doctor_keep *k)
{
        json_object_put(k->result);
        k->result = NULL;
}

void doctor_keep_changed(struct doctor_keep *k)
{
        if (k)
                k->is_changed = true;
}

static void take(struct doctor_keep *k, json_object *doctor, uint64_t now)
{
        json_object_put(k->result);
        k->result = doctor;
        k->made_usec = now;
        k->generation++;
        k->runs++;
        k->is_changed = false;
}

static bool is_due(const struct doctor_keep *k, uint64_t now)
{
        uint64_t age = now - k->made_usec;

        if (!k->generation || age >= DOCTOR_KEEP_MAX_AGE_USEC)
                return true;
        return k->is_changed && age >= DOCTOR_KEEP_MIN_GAP_USEC;
}

json_object *doctor_keep_get(struct doctor_keep *k)
{
        uint64_t now = k->clock();
        json_object *doctor = NULL;

        if (!is_due(k, now))
                return k->result;
        if (k->run(k->userdata, &doctor) < 0)
                doctor = NULL;
        take(k, doctor, now);
        return k->result;
}

void doctor_keep_put(struct doctor_keep *k, json_object *doctor)
{
        if (k)
                take(k, json_object_get(doctor), k->clock());
}

uint64_t doctor_keep_generation(const struct doctor_keep *k)
{
        return k->generation;
}

uint64_t doctor_keep_runs(const struct doctor_keep *k)
{
        return k->runs;
}
