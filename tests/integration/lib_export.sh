# The launchers' files sparkd keeps ([export] directory) on the cluster harness. Sourced after
# lib_cluster.sh; each node's files are in export_dir NODE.

export_dir() { echo "$TEST_TMP/$1.export"; }

# export_config NODE...: CL_EXTRA for each node: its own [export] directory.
export_config() {
        local n
        for n in "$@"; do CL_EXTRA[$n]=$(printf '[export]\ndirectory = %s' "$(export_dir "$n")"); done
}

# export_current NODE...: each NODE's kept sparkd.yaml and svd.env are what sparkc export writes
# there now, and sparkd.yaml is the same on all of them.
export_current() {
        local n first=""
        for n in "$@"; do
                rm -rf "$TEST_TMP/want-$n"
                mkdir -p "$TEST_TMP/want-$n"
                sparkc_of "$n" export sparkrun --output "$TEST_TMP/want-$n" >/dev/null || return 1
                sparkc_of "$n" export svd --output "$TEST_TMP/want-$n/svd.env" >/dev/null || return 1
                cmp -s "$TEST_TMP/want-$n/sparkd.yaml" "$(export_dir "$n")/sparkd.yaml" || return 1
                cmp -s "$TEST_TMP/want-$n/svd.env" "$(export_dir "$n")/svd.env" || return 1
                [ -n "$first" ] || first=$n
                cmp -s "$(export_dir "$first")/sparkd.yaml" "$(export_dir "$n")/sparkd.yaml" || return 1
        done
}

# export_wait_current TIMEOUT NODE...: export_current within TIMEOUT seconds, or fail showing the
# files and what the daemons logged of them.
export_wait_current() {
        local t=$1 n
        shift
        cluster_wait "$t" export_current "$@" && return 0
        for n in "$@"; do
                ls -la "$(export_dir "$n")" || true
                grep 'export:' "$(log_of "$n")" || true
        done
        fail "the kept files of $* are not what sparkc export writes"
}

# export_stamp NODE: the kept files' inode, mtime (ns) and checksum.
export_stamp() { (cd "$(export_dir "$1")" && stat -c '%n %i %.9Y' sparkd.yaml svd.env && sha256sum sparkd.yaml svd.env); }

export_reloads() { json_get "$(sparkc_of "$1" --json status 2>/dev/null)" 'd["reloads"]'; }
export_reloaded() { [ "$(export_reloads "$1")" -gt "$2" ]; }
export_written() { grep -c "export: $(export_dir "$1")/.* written" "$(log_of "$1")" || true; }

# export_untouched NODE...: a reload makes each NODE's files again at once; with the plan
# unchanged they keep their bytes, mtime and inode, and the log no new "written" line.
export_untouched() {
        local n before lines r
        for n in "$@"; do
                before=$(export_stamp "$n")
                lines=$(export_written "$n")
                r=$(export_reloads "$n")
                kill -HUP "$(pid_of "$n")"
                cluster_wait 20 export_reloaded "$n" "$r" || fail "$n did not reload"
                assert_eq "$(export_stamp "$n")" "$before" "$n's kept files after a reload"
                assert_eq "$(export_written "$n")" "$lines" "$n's written lines after a reload"
        done
        echo "$before"
}

# export_hosts NODE: the hosts of NODE's kept sparkrun file, comma-separated (yaml.safe_load, as
# sparkrun reads it).
export_hosts() {
        python3 -c 'import sys, yaml; print(",".join(yaml.safe_load(open(sys.argv[1]))["hosts"]))' \
                "$(export_dir "$1")/sparkd.yaml"
}
