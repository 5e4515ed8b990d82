/*
 * The saved probe history (history.json in the state directory), read at start piece by piece:
 * the input is the file. Whatever it holds, the results read from it print as one JSON array of
 * at most the history's size, and saving and reading it back again prints the same.
 */
#include <event2/event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syslog.h>
#include <unistd.h>

#include "daemon/base/log.h"
#include "daemon/base/store.h"
#include "daemon/probe/history.h"
#include "fuzz.h"

#define LIMIT 8

static char dir[256];
static struct event_base *base;
static struct store *store;

static void remove_state(const char *name)
{
        char path[300];

        snprintf(path, sizeof(path), "%s/%s", dir, name);
        unlink(path);
}

static void remove_dir(void)
{
        remove_state("history.json");
        remove_state("history.json.corrupt");
        store_close(store);
        rmdir(dir);
}

/* The history read from the state directory, as its whole query prints; aborts when that is not
 * an array of at most LIMIT results. */
static char *load_and_print(void)
{
        struct history *h = NULL;
        json_object *printed, *parsed, *latest;
        char *text;

        if (history_new(base, store, LIMIT, &h) < 0)
                abort();
        printed = history_query_printed(h, NULL, NULL, 0);
        if (!printed)
                abort();
        text = strdup(json_object_to_json_string(printed));
        parsed = json_tokener_parse(text);
        if (!json_object_is_type(parsed, json_type_array) || json_object_array_length(parsed) > LIMIT)
                abort();
        latest = history_latest(h);
        if (json_object_array_length(latest) > json_object_array_length(parsed))
                abort();
        json_object_put(latest);
        json_object_put(parsed);
        json_object_put(printed);
        history_free(h); /* saves a file it read differently from how it prints */
        return text;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        char path[300], *first, *again;
        FILE *f;

        if (!base) {
                log_set_max_level(LOG_EMERG);
                fuzz_tmpdir("history", dir, sizeof(dir));
                base = event_base_new();
                if (!base || store_open(dir, &store) < 0)
                        abort();
                atexit(remove_dir);
        }
        remove_state("history.json.corrupt");
        snprintf(path, sizeof(path), "%s/history.json", dir);
        f = fopen(path, "wb");
        if (!f || fwrite(data, 1, size, f) != size || fclose(f) != 0)
                abort();
        first = load_and_print();
        again = load_and_print();
        if (strcmp(first, again) != 0)
                abort();
        free(first);
        free(again);
        return 0;
}
