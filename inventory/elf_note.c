#include "elf_note.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/file_read.h"
#include "common/macro.h"

struct elf_view {
        const uint8_t *data;
        size_t size;
        bool is_64;
        bool is_big_endian;
};

/* An unsigned field of width bytes at off, or false when it is not all inside the view. */
static bool field(const struct elf_view *v, uint64_t off, unsigned width, uint64_t *out)
{
        uint64_t value = 0;

        if (off > v->size || width > v->size - off)
                return false;
        for (unsigned i = 0; i < width; i++) {
                unsigned shift = v->is_big_endian ? 8 * (width - 1 - i) : 8 * i;

                value |= (uint64_t)v->data[off + i] << shift;
        }
        *out = value;
        return true;
}

static uint64_t align_up(uint64_t n, uint64_t a)
{
        return (n + a - 1) / a * a;
}

/* The notes of one segment [off, off + len): 1 with hex filled, 0 when none is a build id. */
static int scan_notes(const struct elf_view *v, uint64_t off, uint64_t len, uint64_t align, char *hex,
                      size_t hex_size)
{
        uint64_t end = off + len;

        while (end - off >= 12) {
                uint64_t namesz, descsz, type, name_off = off + 12, desc_off, next;

                if (!field(v, off, 4, &namesz) || !field(v, off + 4, 4, &descsz) ||
                    !field(v, off + 8, 4, &type))
                        return -EBADMSG;
                desc_off = name_off + align_up(namesz, align);
                next = desc_off + align_up(descsz, align);
                if (desc_off > end || next > end + (align - 1) || desc_off + descsz > end)
                        return -EBADMSG;
                if (type == NT_GNU_BUILD_ID && namesz == 4 && memcmp(v->data + name_off, "GNU", 4) == 0) {
                        if (descsz == 0 || descsz * 2 + 1 > hex_size ||
                            descsz * 2 + 1 > ELF_BUILD_ID_HEX_MAX)
                                return -EBADMSG;
                        for (uint64_t i = 0; i < descsz; i++) {
                                static const char digits[] = "0123456789abcdef";

                                hex[2 * i] = digits[v->data[desc_off + i] >> 4];
                                hex[2 * i + 1] = digits[v->data[desc_off + i] & 15];
                        }
                        hex[2 * descsz] = '\0';
                        return 1;
                }
                if (next >= end)
                        break;
                off = next;
        }
        return 0;
}

int elf_build_id_parse(const uint8_t *data, size_t size, char *hex, size_t hex_size)
{
        struct elf_view v = { .data = data, .size = size };
        uint64_t phoff, phentsize, phnum;
        bool is_past_head = false;

        if (size < EI_NIDENT || memcmp(data, ELFMAG, SELFMAG) != 0)
                return -EBADMSG;
        if (data[EI_CLASS] != ELFCLASS32 && data[EI_CLASS] != ELFCLASS64)
                return -EBADMSG;
        if (data[EI_DATA] != ELFDATA2LSB && data[EI_DATA] != ELFDATA2MSB)
                return -EBADMSG;
        v.is_64 = data[EI_CLASS] == ELFCLASS64;
        v.is_big_endian = data[EI_DATA] == ELFDATA2MSB;
        if (v.is_64 ? !field(&v, 32, 8, &phoff) || !field(&v, 54, 2, &phentsize) || !field(&v, 56, 2, &phnum)
                    : !field(&v, 28, 4, &phoff) || !field(&v, 42, 2, &phentsize) ||
                              !field(&v, 44, 2, &phnum))
                return -EBADMSG;
        if (phentsize < (v.is_64 ? sizeof(Elf64_Phdr) : sizeof(Elf32_Phdr)))
                return phnum == 0 ? -ENOENT : -EBADMSG;
        for (uint64_t i = 0; i < phnum; i++) {
                uint64_t ph = phoff + i * phentsize, type, off, len, align;
                int r;

                if (phoff > size || i * phentsize > size)
                        return -ENODATA;
                if (!field(&v, ph, 4, &type))
                        return -ENODATA;
                if (type != PT_NOTE)
                        continue;
                if (v.is_64 ? !field(&v, ph + 8, 8, &off) || !field(&v, ph + 32, 8, &len) ||
                                      !field(&v, ph + 48, 8, &align)
                            : !field(&v, ph + 4, 4, &off) || !field(&v, ph + 16, 4, &len) ||
                                      !field(&v, ph + 28, 4, &align))
                        return -EBADMSG;
                if (off > size || len > size - off) {
                        is_past_head = true;
                        continue;
                }
                r = scan_notes(&v, off, len, align == 8 ? 8 : 4, hex, hex_size);
                if (r != 0)
                        return r < 0 ? r : 0;
        }
        return is_past_head ? -ENODATA : -ENOENT;
}

int elf_build_id_read(const char *path, char *hex, size_t hex_size)
{
        _cleanup_free_ uint8_t *head = malloc(ELF_NOTE_HEAD_MAX);
        ssize_t have;

        if (!head)
                return -ENOMEM;
        have = file_read_head(path, head, ELF_NOTE_HEAD_MAX);
        if (have < 0)
                return (int)have;
        return elf_build_id_parse(head, (size_t)have, hex, hex_size);
}
