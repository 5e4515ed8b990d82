#!/usr/bin/env bash
# The man pages must name every option of sparkd and sparkc (from their --help), every sparkc
# command and its options (from `sparkc --help`), and every config key (from the key table in
# daemon/config/conf_keys.c, under its [section]). Fails listing what is missing, so a new option or key
# cannot be added without its documentation.
#
# Likewise every option of sparkd-slurm-health (from its --help) in its own page.
#
# usage: check-man.sh SOURCE_ROOT SPARKD SPARKC
set -u

src=$1
sparkd=$2
sparkc=$3
missing=0

miss() { echo "MISSING: $*"; missing=$((missing + 1)); }

# mentions PAGE WORD: the page names WORD in bold (*WORD*, *WORD,* or *-x, WORD*), as scdoc
# writes options, commands and keys.
mentions() {
        grep -qE -- "\*([^*]*, )?$(sed 's/[.[\*^$]/\\&/g' <<<"$2")[*,=]" "$src/man/$1"
}

for page in sparkd.8.scd sparkc.1.scd sparkd.conf.5.scd sparkd-slurm-health.8.scd; do
        [ -f "$src/man/$page" ] || { echo "FAIL: $src/man/$page does not exist"; exit 1; }
done

help_options() { "$1" --help | grep -oE -- '(^|[ ,])--[a-z][a-z-]*' | sed 's/^[ ,]*//' | sort -u; }

n=0
for opt in $(help_options "$sparkd"); do
        n=$((n + 1))
        mentions sparkd.8.scd "$opt" || miss "sparkd option $opt in man/sparkd.8.scd"
done
[ "$n" -ge 5 ] || { echo "FAIL: only $n options in sparkd --help"; exit 1; }

# sparkc's own options come before "Commands:", the commands (with their options) after it.
n=0
for opt in $("$sparkc" --help | sed '/^Commands:/q' | grep -oE -- '(^|[ ,])--[a-z][a-z-]*' |
             sed 's/^[ ,]*//' | sort -u); do
        n=$((n + 1))
        mentions sparkc.1.scd "$opt" || miss "sparkc option $opt in man/sparkc.1.scd"
done
[ "$n" -ge 3 ] || { echo "FAIL: only $n options in sparkc --help"; exit 1; }

n=0
while read -r cmd; do
        n=$((n + 1))
        # A command is described in an entry that starts with it, its options within that entry.
        entry=$(awk -v c="*$cmd*" 'index($0, c) == 1 { f = 1; print; next }
                f && /^\t/ { print; next } f { exit }' "$src/man/sparkc.1.scd")
        if [ -z "$entry" ]; then
                miss "sparkc command $cmd in man/sparkc.1.scd"
                continue
        fi
        for opt in $("$sparkc" "$cmd" --help | head -n 1 | grep -oE -- '--[a-z][a-z-]*' | sort -u); do
                grep -qF -- "*$opt*" <<<"$entry" || miss "sparkc $cmd option $opt in man/sparkc.1.scd"
        done
done < <("$sparkc" --help | awk '/^Commands:/ { f = 1; next } f && /^$/ { exit } f && /^  [a-z]/ { print $1 }')
[ "$n" -ge 10 ] || { echo "FAIL: only $n commands in sparkc --help"; exit 1; }

# The key table: rows start with { "section", "key", then the value's shape. Each key must appear
# in its section of the page.
n=0
while read -r section key; do
        n=$((n + 1))
        body=$(awk -v s="# [$section]" '$0 == s { f = 1; next } f && /^# / { exit } f' \
                "$src/man/sparkd.conf.5.scd")
        [ -n "$body" ] || { miss "section [$section] in man/sparkd.conf.5.scd"; continue; }
        grep -qE -- "\*$key\*" <<<"$body" || miss "key [$section] $key in man/sparkd.conf.5.scd"
done < <(sed -nE '/^static const struct conf_key keys\[\] = \{/,/^\};/ s/^[[:space:]]*\{ *"([a-z_]+)", *"([a-z_]+)",.*/\1 \2/p' \
         "$src/daemon/config/conf_keys.c")
[ "$n" -ge 20 ] || { echo "FAIL: only $n keys found in daemon/config/conf_keys.c (has its table changed shape?)"; exit 1; }
grep -qx '# \[sysctl\]' "$src/man/sparkd.conf.5.scd" || miss "section [sysctl] in man/sparkd.conf.5.scd"

n=0
for opt in $(help_options "$src/integrations/slurm/sparkd-slurm-health"); do
        n=$((n + 1))
        mentions sparkd-slurm-health.8.scd "$opt" || miss "sparkd-slurm-health option $opt in man/sparkd-slurm-health.8.scd"
done
[ "$n" -ge 5 ] || { echo "FAIL: only $n options in sparkd-slurm-health --help"; exit 1; }

if [ "$missing" -ne 0 ]; then
        echo "FAIL: $missing thing(s) missing from the man pages"
        exit 1
fi
echo "PASS: the man pages name every option, command and config key"
