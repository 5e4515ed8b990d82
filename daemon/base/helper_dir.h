/* Where sparkd finds its probe helpers when the config names no directory: beside it in the build
 * tree when it runs from there (a developer's build finds the helpers it built), else the
 * installed directory. */
#pragma once

/* The build tree's probes/ when this process is the very sparkd the build tree made (its
 * /proc/self/exe, or under qemu-user, where that is the emulator, the AT_EXECFN it was started
 * as), else SPARKD_HELPER_DIR: an installed sparkd never runs helpers from a build tree. Decided
 * at the first call; a static string. */
const char *helper_dir_default(void);
