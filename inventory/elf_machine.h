/*
 * Which machine an ELF file is for (e_machine, with its class and byte order), read from its
 * header without loading it, and which one this program is for: a library of another
 * architecture (an x86-64 libnccl.so.2 on an arm64 node) is no library the processes here can
 * load, whatever its version says. This program's own comes from the compiler, not from
 * /proc/self/exe, which under qemu-user is the emulator's.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct elf_machine {
        uint16_t machine;   /* e_machine: EM_AARCH64, EM_X86_64, ...; 0 when not known */
        uint8_t elf_class;  /* ELFCLASS32 or ELFCLASS64 */
        uint8_t byte_order; /* ELFDATA2LSB or ELFDATA2MSB */
};

/* The machine of data (the first size bytes of an ELF file); -EBADMSG when it is no ELF
 * header. */
int elf_machine_parse(const uint8_t *data, size_t size, struct elf_machine *ret);
/* The same for the file at path (a regular file, opened without blocking); what open or read
 * said as a negative errno. */
int elf_machine_read(const char *path, struct elf_machine *ret);
/* What this program was built for. */
struct elf_machine elf_machine_self(void);
bool elf_machine_equal(const struct elf_machine *a, const struct elf_machine *b);
/* "AArch64", "x86-64", ...: the architecture's name, with its word size and byte order where
 * they are not the usual ones for it ("x86-64 32-bit", "PowerPC64 big-endian"); "ELF machine N"
 * for one this table lacks. */
const char *elf_machine_name(const struct elf_machine *m, char *buf, size_t size);
