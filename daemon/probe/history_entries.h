/*
 * The probe history's results in order, oldest first, each as the JSON text it is saved as
 * (json-c's PLAIN, slashes escaped): in history.json once saved there, read back from that file
 * when asked for, and in memory only until then. A full history's texts are otherwise the bulk
 * of the daemon's heap; what the history's filters look at (kind, peer id, peer name) is kept in
 * memory, in 32 bytes and a small block a result, as a history holds thousands.
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

struct history_entry {
        char *block;         /* kind, peer_id and peer, each ending in NUL; then the text until saved */
        off_t offset;        /* of the text in the open file, once saved */
        uint32_t len;        /* of the text */
        uint16_t peer_id_at; /* in block */
        uint16_t peer_at;    /* in block; 0 when the result names no peer */
        uint16_t text_at;    /* in block; 0 once saved */
        bool is_deferred;
};

struct history_entries {
        struct history_entry *v;
        size_t n;
        size_t size;
        int fd; /* the file saved entries are read from (history.json as loaded or last saved) */
};

#define HISTORY_ENTRIES_INIT                                                                                \
        {                                                                                                   \
                .fd = -1                                                                                    \
        }

/* Drops every entry and closes the file. */
void history_entries_clear(struct history_entries *l);
/* With text NULL the entry is in the file at offset (see history_entries_use_file). */
int history_entries_add(struct history_entries *l, const char *text, off_t offset, size_t len,
                        const char *kind, const char *peer_id, const char *peer, bool is_deferred);
void history_entries_drop_oldest(struct history_entries *l, size_t n);
/* Writes the texts, a ',' between two, to out; offsets[i] is where entry i starts counting from
 * start (out's position now). Saved texts are copied from the file in runs. */
int history_entries_write(const struct history_entries *l, FILE *out, off_t start, off_t *offsets);
/* fd is now the file, with entry i at offsets[i]: texts in memory leave it. Takes fd. */
void history_entries_use_file(struct history_entries *l, int fd, const off_t *offsets);
/* The entry's text as saved, NUL-terminated, in a buffer of its own; NULL when it cannot be read
 * (out of memory, or the file cut short under the daemon). */
char *history_entry_read(const struct history_entries *l, const struct history_entry *e);

const char *history_entry_kind(const struct history_entry *e);
const char *history_entry_peer_id(const struct history_entry *e);
/* NULL when the result names no peer. */
const char *history_entry_peer(const struct history_entry *e);
