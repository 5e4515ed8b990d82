/*
 * The GNU build id (the NT_GNU_BUILD_ID note) of an ELF file, read without loading it: two
 * copies of a library with one version but different build ids are different builds. Only the
 * head of the file is read (the notes a linker writes sit right after the program headers), and
 * the parser trusts none of what it reads: every offset and size is checked against the bytes it
 * has.
 */
#pragma once

#include <stddef.h>
#include <stdint.h>

/* How much of a file elf_build_id_read looks at. */
#define ELF_NOTE_HEAD_MAX (64 * 1024)
/* A build id in hex: GNU ld writes 20 bytes (sha1); at most 64 bytes are taken. */
#define ELF_BUILD_ID_HEX_MAX (64 * 2 + 1)

/* The build id in data (the first size bytes of an ELF file) as lowercase hex in hex (at least
 * ELF_BUILD_ID_HEX_MAX bytes). -EBADMSG: not ELF, or a header or note out of bounds; -ENOENT:
 * no build id note; -ENODATA: a note segment lies past the bytes given. */
int elf_build_id_parse(const uint8_t *data, size_t size, char *hex, size_t hex_size);

/* The same for the file at path (a regular file, opened without blocking, its first
 * ELF_NOTE_HEAD_MAX bytes); what open or read said as a negative errno. */
int elf_build_id_read(const char *path, char *hex, size_t hex_size);
