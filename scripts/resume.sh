#!/usr/bin/env bash
# Checkpoints and resume under mpirun (README, "Checkpoints and resume"):
#  1. an 8-rank Cora run killed with kill -9 after a checkpoint resumes
#     (-resume latest) to metrics equal to the uninterrupted run's
#     (runs/cora-8, compare -tol 0); its checkpoint also resumes on 1 rank
#     and on 1x2x3 within 1e-5;
#  2. SIGTERM to mpirun leaves a checkpoint and an "interrupted" summary;
#     -resume latest finishes the run identically;
#  3. a mini-batch run with 2 replicas and bf16, killed and resumed, equals
#     its uninterrupted run;
#  4. predictions on 8 ranks: N x classes probabilities;
#  5. bad checkpoints (corrupt byte, missing file, another dataset, another
#     model width, half-written) give one line and a non-zero exit, and
#     latest still takes the last good one.
#
#   scripts/resume.sh    (after runs/cora-8 exists: make mpitest runs it)
set -uo pipefail
bin=${SCALEGNN:-./scalegnn}
mpirun=(mpirun)
[ "$(id -u)" = 0 ] && mpirun+=(--allow-run-as-root)
mpirun+=(--oversubscribe)
r=runs/resume
rm -rf "$r" && mkdir -p "$r"
fail() { echo "resume.sh: FAIL: $*"; exit 1; }
job() { # name, base job file, extra TOML appended: writes $r/name.toml with output.dir $r/name
  sed -e "s#^dir = .*#dir = \"$r/$1\"#" "$2" >"$r/$1.toml"
  printf '%b' "$3" >>"$r/$1.toml"
}
waitfor() { # path, pid: wait until path exists while pid runs
  for _ in $(seq 600); do [ -e "$1" ] && return 0; kill -0 "$2" 2>/dev/null || return 1; sleep 0.1; done; return 1
}
[ -f runs/cora-8/metrics.jsonl ] || fail "runs/cora-8/metrics.jsonl missing: run the 8-rank Cora job first"

# 1. kill -9 after the checkpoint of epoch 40, resume on 8 ranks.
job k8 examples/cora-8.toml '[checkpoint]\nevery = 20\nkeep = 2\n'
"${mpirun[@]}" -np 8 "$bin" -config $r/k8.toml >$r/k8.log 2>&1 &
pid=$!
waitfor $r/k8/checkpoints/ckpt-00000040 $pid || fail "k8: no checkpoint at epoch 40"
kill -9 $(pgrep -P $pid) 2>/dev/null; wait $pid
"${mpirun[@]}" -np 8 "$bin" -config $r/k8.toml -resume latest >$r/k8-resume.log 2>&1 || { cat $r/k8-resume.log; fail "k8 resume"; }
"$bin" compare -tol 0 runs/cora-8/metrics.jsonl $r/k8/metrics.jsonl || fail "k8: resumed run differs"
# ... and the checkpoint of epoch 180 on 1 rank and on 1x2x3.
for g in 1x1x1:1 1x2x3:6; do
  job g${g%:*} examples/cora-8.toml ''
  mkdir -p $r/g${g%:*} && cp $r/k8/metrics.jsonl $r/g${g%:*}/
  "${mpirun[@]}" -np ${g#*:} "$bin" -config $r/g${g%:*}.toml -grid ${g%:*} -resume $r/k8/checkpoints/ckpt-00000180 \
    >$r/g${g%:*}.log 2>&1 || { cat $r/g${g%:*}.log; fail "resume on ${g%:*}"; }
  "$bin" compare -tol 1e-5 runs/cora-8/metrics.jsonl $r/g${g%:*}/metrics.jsonl || fail "resume on ${g%:*} differs"
done

# 2. SIGTERM to mpirun.
job t8 examples/cora-8.toml '[checkpoint]\nevery = 50\n'
"${mpirun[@]}" -np 8 "$bin" -config $r/t8.toml >$r/t8.log 2>&1 &
pid=$!
waitfor $r/t8/metrics.jsonl $pid && sleep 2
kill -TERM $pid; wait $pid && fail "t8: exit 0 after SIGTERM"
grep -q '"status": "interrupted"' $r/t8/summary.json || { cat $r/t8.log; fail "t8: summary not interrupted"; }
grep -q '"checkpoint": ' $r/t8/summary.json || fail "t8: summary names no checkpoint"
grep 'resume with' $r/t8.log || fail "t8: no resume line"
"${mpirun[@]}" -np 8 "$bin" -config $r/t8.toml -resume latest >$r/t8-resume.log 2>&1 || { cat $r/t8-resume.log; fail "t8 resume"; }
"$bin" compare -tol 0 runs/cora-8/metrics.jsonl $r/t8/metrics.jsonl || fail "t8: resumed run differs"

# 3. Mini-batch, 2 replicas of 2x2x1, bf16: uninterrupted, then killed and resumed.
mb='s/^comm_dtype = .*/comm_dtype = "bf16"/; s/^epochs = .*/epochs = 60/'
sed -e "$mb" examples/cora-minibatch-8.toml >$r/mb-base.toml
job mb $r/mb-base.toml '' && job mbk $r/mb-base.toml '[checkpoint]\nevery = 20\n'
"${mpirun[@]}" -np 8 "$bin" -config $r/mb.toml >$r/mb.log 2>&1 || { cat $r/mb.log; fail "mb"; }
"${mpirun[@]}" -np 8 "$bin" -config $r/mbk.toml >$r/mbk.log 2>&1 &
pid=$!
waitfor $r/mbk/checkpoints/ckpt-00000040 $pid || fail "mbk: no checkpoint at epoch 20"
kill -9 $(pgrep -P $pid) 2>/dev/null; wait $pid
"${mpirun[@]}" -np 8 "$bin" -config $r/mbk.toml -resume latest >$r/mbk-resume.log 2>&1 || { cat $r/mbk-resume.log; fail "mbk resume"; }
"$bin" compare -tol 0 $r/mb/metrics.jsonl $r/mbk/metrics.jsonl || fail "mini-batch resumed run differs"

# 4. Predictions of the resumed 8-rank model on 8 ranks.
"${mpirun[@]}" -np 8 "$bin" predict -config $r/k8.toml -checkpoint $r/k8/checkpoints -out $r/preds8.npy >$r/preds8.log 2>&1 ||
  { cat $r/preds8.log; fail "predict"; }
head -c 80 $r/preds8.npy | grep -aq "'shape': (2708, 7)" || fail "preds8.npy: not 2708 x 7"

# 5. Bad checkpoints, on 1 rank.
good=$r/k8/checkpoints/ckpt-00000180
job other-data examples/cora.toml '' && sed -i 's/^source = .*/source = "citeseer"/' $r/other-data.toml
job other-width examples/cora-8.toml '' && sed -i 's/^hidden = .*/hidden = 32/' $r/other-width.toml
bad() { # name, expected substring, job, setup command (on $d, a copy of $good)
  local d=$r/bad/$1 out rc
  mkdir -p $r/bad && cp -r $good $d && eval "$4"
  out=$("$bin" -config $3 -grid 1x1x1 -resume $d 2>&1); rc=$?
  [ $rc != 0 ] || fail "bad $1: exit 0"
  [ "$(printf '%s\n' "$out" | grep -c '^scalegnn: ')" = 1 ] && printf '%s\n' "$out" | grep '^scalegnn: ' | grep -qF -- "$2" ||
    { printf '%s\n' "$out"; fail "bad $1: want one line with: $2"; }
  echo "ok   bad $1 (exit $rc): $(printf '%s\n' "$out" | grep '^scalegnn: ')"
}
bad corrupt 'corrupt file' $r/g1x1x1.toml 'printf "\x7f" | dd of=$d/gcn0.weight.npy bs=1 seek=200 conv=notrunc status=none'
bad missing 'missing' $r/g1x1x1.toml 'rm $d/gcn1.weight.v.npy'
bad half 'not a complete checkpoint' $r/g1x1x1.toml 'rm $d/manifest.json'
bad dataset 'another dataset' $r/other-data.toml ''
bad width 'another model' $r/other-width.toml ''
# latest passes over a newer corrupt checkpoint and a write killed half-way.
mkdir -p $r/latest/checkpoints && cp -r $good $r/latest/checkpoints/ && cp -r $r/bad/corrupt $r/latest/checkpoints/ckpt-00000190 &&
  cp -r $r/bad/half $r/latest/checkpoints/.tmp-ckpt-00000195 && cp -r $r/bad/half $r/latest/checkpoints/ckpt-00000199
job latest examples/cora-8.toml "[checkpoint]\ndir = \"$r/latest/checkpoints\"\nevery = 100\n"
"$bin" -config $r/latest.toml -grid 1x1x1 -resume latest >$r/latest.log 2>&1 || { cat $r/latest.log; fail "latest"; }
grep -q "resuming.*ckpt-00000180" $r/latest.log || { cat $r/latest.log; fail "latest did not take the last good checkpoint"; }
echo "resume.sh: kill -9 and SIGTERM resumes equal the uninterrupted runs; 1 rank and 1x2x3 within 1e-5; mini-batch bf16 equal; predictions 2708 x 7; bad checkpoints refused, latest takes the last good one"
