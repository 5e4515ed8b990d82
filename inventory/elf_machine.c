#include "elf_machine.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/file_read.h"
#include "common/macro.h"

#ifndef EM_LOONGARCH
#define EM_LOONGARCH 258
#endif

/* Each architecture's name, and its usual word size and byte order (0: either). */
static const struct {
        uint16_t machine;
        const char *name;
        uint8_t elf_class;
        uint8_t byte_order;
} machines[] = {
        { EM_X86_64, "x86-64", ELFCLASS64, ELFDATA2LSB },
        { EM_AARCH64, "AArch64", ELFCLASS64, ELFDATA2LSB },
        { EM_386, "i386", ELFCLASS32, ELFDATA2LSB },
        { EM_ARM, "32-bit ARM", ELFCLASS32, ELFDATA2LSB },
        { EM_PPC64, "PowerPC64", ELFCLASS64, ELFDATA2LSB },
        { EM_PPC, "PowerPC", ELFCLASS32, ELFDATA2MSB },
        { EM_S390, "s390", 0, ELFDATA2MSB },
        { EM_RISCV, "RISC-V", 0, ELFDATA2LSB },
        { EM_LOONGARCH, "LoongArch", 0, ELFDATA2LSB },
        { EM_MIPS, "MIPS", 0, 0 },
        { EM_SPARCV9, "SPARC64", ELFCLASS64, ELFDATA2MSB },
        { EM_SPARC, "SPARC", ELFCLASS32, ELFDATA2MSB },
        { EM_IA_64, "IA-64", ELFCLASS64, ELFDATA2LSB },
        { EM_ALPHA, "Alpha", ELFCLASS64, ELFDATA2LSB },
        { EM_PARISC, "PA-RISC", 0, ELFDATA2MSB },
        { EM_68K, "m68k", ELFCLASS32, ELFDATA2MSB },
        { EM_SH, "SuperH", ELFCLASS32, 0 },
};

int elf_machine_parse(const uint8_t *data, size_t size, struct elf_machine *ret)
{
        if (size < EI_NIDENT + 4 || memcmp(data, ELFMAG, SELFMAG) != 0)
                return -EBADMSG;
        if (data[EI_CLASS] != ELFCLASS32 && data[EI_CLASS] != ELFCLASS64)
                return -EBADMSG;
        if (data[EI_DATA] != ELFDATA2LSB && data[EI_DATA] != ELFDATA2MSB)
                return -EBADMSG;
        /* e_type, then e_machine: at the same offset in both classes. */
        *ret = (struct elf_machine){
                .machine = data[EI_DATA] == ELFDATA2LSB ? (uint16_t)(data[18] | data[19] << 8)
                                                        : (uint16_t)(data[18] << 8 | data[19]),
                .elf_class = data[EI_CLASS],
                .byte_order = data[EI_DATA],
        };
        return ret->machine == EM_NONE ? -EBADMSG : 0;
}

int elf_machine_read(const char *path, struct elf_machine *ret)
{
        uint8_t head[EI_NIDENT + 4];
        ssize_t have = file_read_head(path, head, sizeof(head));

        if (have < 0)
                return (int)have;
        return elf_machine_parse(head, (size_t)have, ret);
}

struct elf_machine elf_machine_self(void)
{
        struct elf_machine m = {
                .elf_class = sizeof(void *) == 8 ? ELFCLASS64 : ELFCLASS32,
                .byte_order = __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ ? ELFDATA2LSB : ELFDATA2MSB,
        };

#if defined(__x86_64__)
        m.machine = EM_X86_64;
#elif defined(__aarch64__)
        m.machine = EM_AARCH64;
#elif defined(__i386__)
        m.machine = EM_386;
#elif defined(__arm__)
        m.machine = EM_ARM;
#elif defined(__powerpc64__)
        m.machine = EM_PPC64;
#elif defined(__powerpc__)
        m.machine = EM_PPC;
#elif defined(__s390__)
        m.machine = EM_S390;
#elif defined(__riscv)
        m.machine = EM_RISCV;
#elif defined(__loongarch__)
        m.machine = EM_LOONGARCH;
#elif defined(__mips__)
        m.machine = EM_MIPS;
#elif defined(__sparc__)
        m.machine = sizeof(void *) == 8 ? EM_SPARCV9 : EM_SPARC;
#elif defined(__ia64__)
        m.machine = EM_IA_64;
#elif defined(__alpha__)
        m.machine = EM_ALPHA;
#elif defined(__hppa__)
        m.machine = EM_PARISC;
#elif defined(__m68k__)
        m.machine = EM_68K;
#elif defined(__sh__)
        m.machine = EM_SH;
#else
#error "add this architecture's ELF machine to elf_machine_self and the table above"
#endif
        return m;
}

bool elf_machine_equal(const struct elf_machine *a, const struct elf_machine *b)
{
        return a->machine == b->machine && a->elf_class == b->elf_class && a->byte_order == b->byte_order;
}

const char *elf_machine_name(const struct elf_machine *m, char *buf, size_t size)
{
        for (size_t i = 0; i < ARRAY_SIZE(machines); i++) {
                if (machines[i].machine != m->machine)
                        continue;
                snprintf(buf, size, "%s%s%s", machines[i].name,
                         machines[i].elf_class && m->elf_class != machines[i].elf_class
                                 ? (m->elf_class == ELFCLASS64 ? " 64-bit" : " 32-bit")
                                 : "",
                         machines[i].byte_order && m->byte_order != machines[i].byte_order
                                 ? (m->byte_order == ELFDATA2MSB ? " big-endian" : " little-endian")
                                 : "");
                return buf;
        }
        snprintf(buf, size, "ELF machine %u (%s, %s)", m->machine,
                 m->elf_class == ELFCLASS64 ? "64-bit" : "32-bit",
                 m->byte_order == ELFDATA2MSB ? "big-endian" : "little-endian");
        return buf;
}
