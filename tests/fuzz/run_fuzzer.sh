#!/bin/sh
# Runs a libFuzzer target for a bounded time over a seed corpus; CTest's fuzz.frontends.
#   run_fuzzer.sh FUZZER SEED_DIR WORK_DIR SECONDS [DICT]
# New inputs go to WORK_DIR/corpus (never into the seeds in git); a crash, leak, timeout or
# out-of-memory leaves its reproducer in WORK_DIR/artifacts and fails the test. Exit 77: skipped.
fuzzer=$1 seeds=$2 work=$3 seconds=$4 dict=$5
if [ ! -x "$fuzzer" ]; then
    echo "fuzz.frontends skipped: $fuzzer is not built"
    exit 77
fi
mkdir -p "$work/corpus" "$work/artifacts"
# -timeout=10: tree-sitter's error recovery is slow on garbage (corpus/slow-treesitter-error-recovery),
# but every parse now stops at its budget (CudaParseLimits: 2 s for inputs this small), and an input
# is parsed twice (indexCudaSource, liftCudaProgram); anything longer is a real hang.
set -- -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len=4096 \
    -artifact_prefix="$work/artifacts/" -print_final_stats=1
if [ -n "$dict" ]; then
    set -- "$@" -dict="$dict"
fi
"$fuzzer" "$@" "$work/corpus" "$seeds"
status=$?
if [ $status -ne 0 ]; then
    echo "fuzz.frontends: the fuzzer failed (exit $status); reproducers:" >&2
    ls -l "$work/artifacts" >&2
    echo "replay one with: $fuzzer ARTIFACT" >&2
fi
exit $status
