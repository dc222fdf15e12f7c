#!/usr/bin/env bash
# The first GPU loan's job (issue #20, item 5), until `make gpu-job` exists: in one command,
#   1. the device, torch and free GPU memory;
#   2. k trainings at once (benchmarks/train_speed.py --concurrent), with and without MPS;
#   3. a cross-entropy pilot on full CIFAR-10 at the gpu profile's numerics: several
#      (network, epochs) candidates trained at once, each under one deadline, to size the
#      gpu profile (issue #20, item 4: test error <= 8 % and pre-TS ECE >= 2 %);
#   4. the finished runs packed into $OUT (replicate runs pack), one log beside them.
# Run on the device from the repository root, carrying data/cifar10-jpeg.tar.gz:
#   bash benchmarks/gpu_pilot.sh                       # budget 570 s in all (GPU_PILOT_SECONDS)
# Rehearsal on the CPU (generated-size runs, the same code paths):
#   PILOT_PROFILE=smoke PILOT_RUNS="tiny_cnn:1 tiny_cnn:2" PILOT_DEVICE=cpu OUT=/tmp/pilot \
#     CONCURRENT_ARGS="--smoke --models tiny_cnn --concurrent 1,2" CONCURRENT50_ARGS="--smoke --models tiny_cnn \
#     --concurrent 1" CONCURRENT_MPS_ARGS="--smoke --models tiny_cnn --concurrent 2 --mps on" bash benchmarks/gpu_pilot.sh
set -u
OUT=${OUT:?set OUT to the folder that comes back}
mkdir -p "$OUT"
BUDGET=${GPU_PILOT_SECONDS:-570}
PROFILE=${PILOT_PROFILE:-gpu}
DEVICE=${PILOT_DEVICE:-cuda}
RUNS=${PILOT_RUNS:-"resnet18:15 resnet18:20 resnet18:30 resnet50:12"}
CONC=${CONCURRENT_ARGS:-"--concurrent 1,2,4,8 --models resnet18 --seconds 4"}
CONC50=${CONCURRENT50_ARGS:-"--concurrent 1,4 --models resnet50 --seconds 4"}
CONCMPS=${CONCURRENT_MPS_ARGS:-"--concurrent 4,8 --models resnet18 --seconds 4 --mps on"}
PY=${PYTHON:-python3}
export PYTHONUNBUFFERED=1 REPLICATE_DATA=${REPLICATE_DATA:-$PWD/data}
T0=$(date +%s)
left() { echo $(( BUDGET - ($(date +%s) - T0) )); }
LOGS=$(mktemp -d)
pin() { if command -v taskset >/dev/null; then taskset -c "$1" "${@:2}"; else "${@:2}"; fi; }

main() {

echo "== gpu_pilot $(date -u '+%Y-%m-%d %H:%M UTC'); commit $(git rev-parse --short HEAD 2>/dev/null); budget ${BUDGET} s"
command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name,memory.total,memory.used,driver_version --format=csv
$PY -c "import torch; print('torch', torch.__version__, '| cuda', torch.version.cuda, '| free/total GiB',
  [round(v / 2**30, 1) for v in torch.cuda.mem_get_info()] if torch.cuda.is_available() else 'no CUDA')"
nproc
$PY -m replicate data check cifar10 || exit 1

echo "== k trainings at once ($(left) s left)"
timeout -k 5 75 $PY benchmarks/train_speed.py $CONC --json "$LOGS/c18.json"
timeout -k 5 35 $PY benchmarks/train_speed.py $CONC50 --json "$LOGS/c50.json"
timeout -k 5 40 $PY benchmarks/train_speed.py $CONCMPS --json "$LOGS/cmps.json"
$PY - "$OUT/concurrency.json" "$LOGS"/c18.json "$LOGS"/c50.json "$LOGS"/cmps.json <<'PYEOF'
import json, os, sys
parts = [json.load(open(p)) for p in sys.argv[2:] if os.path.exists(p)]
a = {"meta": parts[0]["meta"] if parts else {}, "concurrent": [r for p in parts for r in p["concurrent"]]}
json.dump(a, open(sys.argv[1], "w"), indent=1)
for r in a["concurrent"]:
    print(f"  {r['model']:<10} k={r['k']} mps={r['mps']!s:<5} {r['images_per_s']:8.0f} img/s  "
          f"{r['s_per_epoch_per_run']:6.2f} s/epoch/run")
PYEOF

echo "== cross-entropy pilot at profile $PROFILE: $RUNS ($(left) s left)"
PILOT_BUDGET=$(( $(left) - 45 ))
set -- $RUNS
n=$#; cores=$(nproc); per=$(( cores / n > 0 ? cores / n : 1 )); i=0; pids=()
for spec in "$@"; do
  net=${spec%%:*}; epochs=${spec##*:}
  lo=$(( (i * per) % cores )); hi=$(( lo + per - 1 ))
  OMP_NUM_THREADS=$per pin $lo-$hi $PY -m replicate train cifar10 "$net" cross_entropy --profile "$PROFILE" \
    --epochs "$epochs" --store results --progress log --device "$DEVICE" --time-budget "$PILOT_BUDGET" \
    > "$LOGS/pilot-$net-$epochs.log" 2>&1 &
  pids+=($!); i=$((i + 1))
done
for p in "${pids[@]}"; do wait "$p"; echo "  pid $p exit $?"; done
for f in "$LOGS"/pilot-*.log; do echo "--- $(basename "$f")"; cat "$f"; done

echo "== pack ($(left) s left)"
$PY -m replicate runs ls --store results 2>/dev/null | grep -w "$PROFILE" | head -20
$PY -m replicate runs pack --profile "$PROFILE" --output "$OUT/pilot-runs" --max-mib 15
echo "== done in $(( $(date +%s) - T0 )) s"
}

main 2>&1 | tee "$OUT/pilot.log"
