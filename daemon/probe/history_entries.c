#include "history_entries.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

const char *history_entry_kind(const struct history_entry *e)
{
        return e->block;
}

const char *history_entry_peer_id(const struct history_entry *e)
{
        return e->block + e->peer_id_at;
}

const char *history_entry_peer(const struct history_entry *e)
{
        return e->peer_at ? e->block + e->peer_at : NULL;
}

static const char *entry_text(const struct history_entry *e)
{
        return e->text_at ? e->block + e->text_at : NULL;
}

void history_entries_drop_oldest(struct history_entries *l, size_t drop)
{
        if (drop == 0)
                return;
        for (size_t i = 0; i < drop; i++)
                free(l->v[i].block);
        memmove(l->v, l->v + drop, (l->n - drop) * sizeof(*l->v));
        l->n -= drop;
}

void history_entries_clear(struct history_entries *l)
{
        history_entries_drop_oldest(l, l->n);
        free(l->v);
        if (l->fd >= 0)
                close(l->fd);
        *l = (struct history_entries)HISTORY_ENTRIES_INIT;
}

int history_entries_add(struct history_entries *l, const char *text, off_t offset, size_t len,
                        const char *kind, const char *peer_id, const char *peer, bool is_deferred)
{
        size_t kind_len = strlen(kind) + 1, id_len = strlen(peer_id) + 1,
               peer_len = peer ? strlen(peer) + 1 : 0, names_len = kind_len + id_len + peer_len;
        struct history_entry *e;
        char *block;

        /* Names of this length are no node's: a result naming them is not kept. */
        if (names_len > UINT16_MAX || len > UINT32_MAX)
                return -E2BIG;
        if (l->n == l->size) {
                size_t size = l->size ? l->size * 2 : 16;
                struct history_entry *v = realloc(l->v, size * sizeof(*v));

                if (!v)
                        return -ENOMEM;
                l->v = v;
                l->size = size;
        }
        block = malloc(names_len + (text ? len + 1 : 0));
        if (!block)
                return -ENOMEM;
        memcpy(block, kind, kind_len);
        memcpy(block + kind_len, peer_id, id_len);
        if (peer)
                memcpy(block + kind_len + id_len, peer, peer_len);
        if (text) {
                memcpy(block + names_len, text, len);
                block[names_len + len] = '\0';
        }
        e = &l->v[l->n++];
        *e = (struct history_entry){ .block = block,
                                     .offset = offset,
                                     .len = (uint32_t)len,
                                     .peer_id_at = (uint16_t)kind_len,
                                     .peer_at = peer ? (uint16_t)(kind_len + id_len) : 0,
                                     .text_at = text ? (uint16_t)names_len : 0,
                                     .is_deferred = is_deferred };
        return 0;
}

/* Saved at offset of the file now open: its text leaves memory. */
static void entry_saved(struct history_entry *e, off_t offset)
{
        char *block;

        e->offset = offset;
        if (!e->text_at)
                return;
        block = realloc(e->block, e->text_at);
        if (block)
                e->block = block;
        e->text_at = 0;
}

char *history_entry_read(const struct history_entries *l, const struct history_entry *e)
{
        char *text = malloc(e->len + 1);
        size_t done = 0;

        if (!text)
                return NULL;
        if (entry_text(e)) {
                memcpy(text, entry_text(e), e->len);
                done = e->len;
        }
        while (done < e->len) {
                ssize_t n = pread(l->fd, text + done, e->len - done, e->offset + (off_t)done);

                if (n < 0 && errno == EINTR)
                        continue;
                if (n <= 0) {
                        free(text);
                        return NULL;
                }
                done += (size_t)n;
        }
        text[e->len] = '\0';
        return text;
}

/* Copies len bytes at offset of the file open to out. */
static int copy_saved(int fd, off_t offset, size_t len, FILE *out)
{
        char buf[16384];

        while (len > 0) {
                ssize_t n = pread(fd, buf, len < sizeof(buf) ? len : sizeof(buf), offset);

                if (n < 0 && errno == EINTR)
                        continue;
                if (n <= 0)
                        return n < 0 ? -errno : -EIO;
                if (fwrite(buf, 1, (size_t)n, out) != (size_t)n)
                        return -EIO;
                offset += n;
                len -= (size_t)n;
        }
        return 0;
}

int history_entries_write(const struct history_entries *l, FILE *out, off_t start, off_t *offsets)
{
        off_t at = start;
        int r;

        for (size_t i = 0, next; i < l->n; i = next) {
                const struct history_entry *first = &l->v[i];

                if (i > 0) {
                        fputc(',', out);
                        at++;
                }
                if (entry_text(first)) {
                        offsets[i] = at;
                        fwrite(entry_text(first), 1, first->len, out);
                        at += (off_t)first->len;
                        next = i + 1;
                        continue;
                }
                /* Saved entries follow each other in the file, a ',' apart: one copy for a run. */
                for (next = i + 1;
                     next < l->n && !entry_text(&l->v[next]) &&
                     l->v[next].offset == l->v[next - 1].offset + (off_t)l->v[next - 1].len + 1;
                     next++)
                        ;
                for (size_t k = i; k < next; k++)
                        offsets[k] = at + (l->v[k].offset - first->offset);
                r = copy_saved(l->fd, first->offset,
                               (size_t)(l->v[next - 1].offset - first->offset) + l->v[next - 1].len, out);
                if (r < 0)
                        return r;
                at = offsets[next - 1] + (off_t)l->v[next - 1].len;
        }
        return 0;
}

void history_entries_use_file(struct history_entries *l, int fd, const off_t *offsets)
{
        if (l->fd >= 0)
                close(l->fd);
        l->fd = fd;
        for (size_t i = 0; i < l->n; i++)
                entry_saved(&l->v[i], offsets[i]);
}
