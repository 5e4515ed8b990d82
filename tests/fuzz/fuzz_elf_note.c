/*
 * The head of an ELF file, through the build id parser the software facts use on every libnccl
 * found (elf_note.c): whatever the bytes, it returns, never reads past them, and a build id it
 * gives is lowercase hex of an even length within ELF_BUILD_ID_HEX_MAX. The machine reader the
 * doctor's nccl check uses (elf_machine.c) reads the same bytes: never past them, never machine 0.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "inventory/elf_machine.h"
#include "inventory/elf_note.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        char hex[ELF_BUILD_ID_HEX_MAX];
        struct elf_machine machine;
        uint8_t *copy;
        size_t len;

        /* An exact-size copy, so ASan sees any read past the input. */
        copy = malloc(size ? size : 1);
        if (!copy)
                abort();
        memcpy(copy, data, size);
        if (elf_machine_parse(copy, size, &machine) == 0 && machine.machine == 0)
                abort();
        if (elf_build_id_parse(copy, size, hex, sizeof(hex)) == 0) {
                len = strlen(hex);
                if (len == 0 || len % 2 || len >= sizeof(hex) || strspn(hex, "0123456789abcdef") != len)
                        abort();
        }
        free(copy);
        return 0;
}
