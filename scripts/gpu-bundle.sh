#!/usr/bin/env bash
# Builds here, in release, every test executable, the gpusort binary, the library's examples and
# the benchmark into one folder with a run.sh, so that a CUDA machine without Rust runs them all
# with one command:
#   scripts/gpu-bundle.sh [DIR]        (default DIR: bundle/, ignored by git)
#   DIR/run.sh                         tests (REQUIRE_GPU=1), the examples and the main job at 2^25
#   DIR/run.sh sanitize                compute-sanitizer (memcheck, racecheck, synccheck, initcheck)
#                                      over every family of kernels
#   DIR/run.sh profiles [names]        the GPU test suites natively and under each device profile
#                                      (GPUSORT_TEST_PROFILE: v100 t4 a100 rtx4090 by default)
#   DIR/run.sh bench [criterion args]  the criterion benchmarks
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-bundle}
rm -rf "$out"
mkdir -p "$out/tests" "$out/bin"

# cargo's JSON messages (stdin) → "KIND-NAME PATH" for each test executable of target kind KIND.
executables() {
  grep '"profile":{[^}]*"test":true' | grep "\"kind\":\[\"$1\"" \
    | sed -n 's/.*"target":{"kind":\["\([a-z-]*\)"\][^}]*"name":"\([^"]*\)".*"executable":"\([^"]*\)".*/\1-\2 \3/p'
}

# cargo's JSON messages (stdin) → "example-NAME PATH" for each example program.
examples() {
  sed -n 's/.*"target":{"kind":\["example"\][^}]*"name":"\([^"]*\)".*"executable":"\([^"]*\)".*/example-\1 \2/p'
}

cargo build --release -p gpusort-cli --locked
cp target/release/gpusort "$out/bin/" && strip "$out/bin/gpusort"
# The PTX the binary embeds, for ptxas/cuobjdump/ncu on the device.
cp gpusort/kernels.ptx "$out/kernels.ptx"
# The maintenance crate's tests read the source tree, not the GPU: they stay with the test command.
tests=$(cargo test --workspace --exclude xtask --release --locked --no-run --message-format=json 2>/dev/null)
for kind in lib bin test; do
  echo "$tests" | executables "$kind" | while read -r name exe; do
    cp "$exe" "$out/tests/$name" && strip "$out/tests/$name"
  done
done
# The library's examples, each a program that must exit 0 on the device (bin/example-NAME).
cargo build --release -p gpusort --examples --locked --message-format=json 2>/dev/null \
  | examples | while read -r name exe; do
    cp "$exe" "$out/bin/$name" && strip "$out/bin/$name"
  done
# The project outside the workspace, built as a user builds it (stable Rust, the cudarc feature).
cargo +stable build --release --locked --manifest-path examples/downstream/Cargo.toml \
  --target-dir target/stable
cp target/stable/release/downstream "$out/bin/" && strip "$out/bin/downstream"
cargo bench --workspace --locked --no-run --message-format=json 2>/dev/null \
  | executables bench | while read -r name exe; do
    cp "$exe" "$out/bin/$name" && strip "$out/bin/$name"
  done

cat > "$out/run.sh" <<'RUN'
#!/usr/bin/env bash
# Runs the bundled tests with REQUIRE_GPU=1 (a missing GPU fails them), then the main job.
cd "$(dirname "$0")"
export REQUIRE_GPU=1 GPUSORT_BIN="$PWD/bin/gpusort"
mode=${1:-test}
case "$mode" in
  bench) shift; exec bin/bench-sort --bench "$@" ;;
  sanitize)
    # memcheck over the GPU test suite (the 2^25 cases skipped: too slow under the tool), then
    # every tool over the main job with each sort (bitonic, merge, radix) at sizes that take each
    # bitonic path: the small sort (5000 keys),
    # and the window passes' tile sort and passes (300001); 32- and 64-bit keys, both orders.
    fail=0 runs=0
    check() { runs=$((runs + 1)); echo "=== compute-sanitizer $*"; compute-sanitizer --error-exitcode 99 --print-limit 20 "$@" || fail=$((fail + 1)); }
    check --tool memcheck tests/test-gpu_sorts --skip large_arrays --test-threads 1
    # The stream-ordered calls on foreign memory, streams and cudarc's buffers.
    # Less two tests: the refused pointers' deliberate cuPointerGetAttribute failure is an API
    # error to the tool (and launches nothing); the tool waits for each kernel, so calls that only
    # queue cannot return ahead of a held stream under it.
    for tool in memcheck racecheck synccheck; do
      check --tool "$tool" tests/test-queue --test-threads 1 --skip memory_outside_an_allocation \
        --skip queued_without_waiting
      check --tool "$tool" bin/downstream
    done
    # Another library's memory and stream (cuMemAlloc, cuStreamCreate) through raw pointers.
    check --tool memcheck bin/example-raw_pointers
    for tool in memcheck racecheck synccheck initcheck; do
      for args in "--n 5000 --dtype f32" "--n 300001 --dtype u32" "--n 300001 --dtype i64 --order desc"; do
        for algo in bitonic merge radix; do
          check --tool "$tool" bin/gpusort $args --algo "$algo" --reps 1 --no-baselines
        done
      done
    done
    # The segmented sorts (rows short and long, padded and radix block sorts, variable segments,
    # long segments) and top-k (arrays by rounds and by digits, rows), every tool, through the
    # bench sweeps at small sizes.
    for tool in memcheck racecheck synccheck initcheck; do
      check --tool "$tool" bin/gpusort bench --rows 16,100,1024,8192,20000 --segments \
        --segments-log2 15 --dtypes u32,u64 --reps 1 --out "/tmp/sanitize-rows-$tool"
      check --tool "$tool" bin/gpusort bench --topk 1,64,1024 --min-log2 12 --max-log2 16 \
        --topk-rows 8x4096,2x70000 --dtypes f32,u64 --reps 1 --out "/tmp/sanitize-topk-$tool"
    done
    # The multi-GPU kernels (sample, ranks, fill, check, merge of two runs), three parts on GPU 0,
    # and with peer copies across every GPU present.
    for tool in memcheck racecheck synccheck initcheck; do
      check --tool "$tool" bin/gpusort --devices 0,0,0 --n 300001 --reps 1
      check --tool "$tool" bin/gpusort --devices 0,0 --n 9000 --dtype f64 --order desc --reps 1
    done
    gpus=$(nvidia-smi -L | wc -l)
    if [ "$gpus" -ge 2 ]; then check --tool memcheck bin/gpusort --gpus "$gpus" --n 1000003 --reps 1; fi
    echo "$((runs - fail)) passed, $fail failed"
    exit $((fail > 0)) ;;
  test)
    passed=0 failed=0
    for t in tests/*; do
      echo "=== $t"
      if "$t"; then passed=$((passed + 1)); else failed=$((failed + 1)); echo "FAILED: $t"; fi
    done
    echo "=== bin/downstream (a crate outside the workspace, stable Rust, cudarc)"
    if bin/downstream; then passed=$((passed + 1)); else failed=$((failed + 1)); echo "FAILED: downstream"; fi
    for example in bin/example-*; do
      echo "=== $example (the library's example)"
      if "$example"; then passed=$((passed + 1)); else failed=$((failed + 1)); echo "FAILED: $example"; fi
    done
    for algo in bitonic merge radix; do
      echo "=== main job: gpusort --n 33554432 --algo $algo"
      if bin/gpusort --n 33554432 --algo "$algo"; then passed=$((passed + 1)); else failed=$((failed + 1)); fi
    done
    echo "=== main job: gpusort --devices 0,0,0 --n 33554432 (the multi-GPU code, parts on GPU 0)"
    if bin/gpusort --devices 0,0,0 --n 33554432 --reps 3; then passed=$((passed + 1)); else failed=$((failed + 1)); fi
    echo "$passed passed, $failed failed"
    exit $((failed > 0)) ;;
  profiles)
    # The GPU test suites (tests/test-*, the library's own and the workspace's) natively and as
    # each smaller device would run them: the sorters choose kernels and shapes from the profile's
    # shared memory per block, multiprocessors and L2 (gpusort_suite::test_profile).
    shift
    profiles=${*:-native v100 t4 a100 rtx4090}
    passed=0 failed=0
    for profile in $profiles; do
      for t in tests/test-gpu_sorts tests/test-multi_gpu; do
        echo "=== GPUSORT_TEST_PROFILE=$profile $t"
        if GPUSORT_TEST_PROFILE=$profile "$t"; then passed=$((passed + 1)); else failed=$((failed + 1)); echo "FAILED: $profile $t"; fi
      done
    done
    echo "$passed passed, $failed failed"
    exit $((failed > 0)) ;;
  *) echo "usage: run.sh [test|sanitize|profiles [names]|bench [criterion args]]" >&2; exit 2 ;;
esac
RUN
chmod +x "$out/run.sh"
du -sh "$out"
