#!/usr/bin/env bash
# Checkpoints and resume under mpirun (README, "Checkpoints and resume"),
# on the first E = 60 epochs of the Cora jobs: a run's epochs do not depend
# on how many follow, so runs/cora-8's first 60 lines are the uninterrupted
# reference (runs/cora-minibatch-8's first 20 for the mini-batch job):
#  1. an 8-rank Cora run killed with kill -9 after a checkpoint resumes
#     (-resume latest) to metrics equal to the uninterrupted run's
#     (compare -tol 0); its checkpoint of epoch 50 also resumes on 1 rank
#     and on 1x2x3 within 1e-5;
#  2. SIGTERM to mpirun leaves a checkpoint and an "interrupted" summary;
#     -resume latest finishes the run identically;
#  3. a mini-batch run with 2 replicas of 2x2x1 and bf16, killed and
#     resumed, equals its uninterrupted run; with float32 its checkpoint
#     resumes on 2 replicas of 1x1x1 within 1e-5 (bf16 cannot across
#     grids: README);
#  4. predictions of the 8-rank model on 8 ranks: the argmax over the test
#     split gives exactly the run's test accuracy, and probabilities and
#     layer 0's embeddings hold the rows of 1 rank's predictions
#     (scripts/checkpreds);
#  5. bad checkpoints (corrupt byte, missing file, another dataset, another
#     model width, half-written) give one line and a non-zero exit, and
#     latest still takes the last good one.
#
#   scripts/resume.sh    (after runs/cora-8 exists: make mpitest runs it)
set -uo pipefail
E=60
r=runs/resume
. "$(dirname "$0")/resume-lib.sh"
[ -f runs/cora-8/metrics.jsonl ] || fail "runs/cora-8/metrics.jsonl missing: run the 8-rank Cora job first"
head -n $E runs/cora-8/metrics.jsonl >$r/ref8.jsonl

# 1. kill -9 after the checkpoint of epoch 20, resume on 8 ranks.
job k8 examples/cora-8.toml '[checkpoint]\nevery = 10\nkeep = 2\n'
sed -i "s#^dir = \"$r/k8\"#&\nsave_model = true#" $r/k8.toml # the final model, for predict
kill9_resume k8 ckpt-00000020 $r/ref8.jsonl
# ... and the checkpoint of epoch 50 on 1 rank and on 1x2x3.
for g in 1x1x1:1 1x2x3:6; do
  job g${g%:*} examples/cora-8.toml ''
  mkdir -p $r/g${g%:*} && cp $r/k8/metrics.jsonl $r/g${g%:*}/
  "${mpirun[@]}" -np ${g#*:} "$bin" -config $r/g${g%:*}.toml -grid ${g%:*} -resume $r/k8/checkpoints/ckpt-00000050 \
    >$r/g${g%:*}.log 2>&1 || { cat $r/g${g%:*}.log; fail "resume on ${g%:*}"; }
  "$bin" compare -tol 1e-5 $r/ref8.jsonl $r/g${g%:*}/metrics.jsonl || fail "resume on ${g%:*} differs"
done

# 2. SIGTERM to mpirun, once training is under way (its first checkpoint).
sigterm_resume examples/cora-8.toml $r/ref8.jsonl

# 3. Mini-batch, 2 replicas of 2x2x1 (2 steps an epoch), 20 epochs.
E=20
# bf16: uninterrupted, then killed after the checkpoint of epoch 5 and resumed.
sed -e 's/^comm_dtype = .*/comm_dtype = "bf16"/' examples/cora-minibatch-8.toml >$r/mb-base.toml
job mb $r/mb-base.toml '' && job mbk $r/mb-base.toml '[checkpoint]\nevery = 5\n'
"${mpirun[@]}" -np 8 "$bin" -config $r/mb.toml >$r/mb.log 2>&1 || { cat $r/mb.log; fail "mb"; }
kill9_resume mbk ckpt-00000010 $r/mb/metrics.jsonl
# float32: the checkpoint of epoch 10 on 2 replicas of 1x1x1 (2 ranks).
job mf examples/cora-minibatch-8.toml '[checkpoint]\nevery = 10\n' && job mf1 examples/cora-minibatch-8.toml ''
"${mpirun[@]}" -np 8 "$bin" -config $r/mf.toml >$r/mf.log 2>&1 || { cat $r/mf.log; fail "mf"; }
mkdir -p $r/mf1 && cp $r/mf/metrics.jsonl $r/mf1/
"${mpirun[@]}" -np 2 "$bin" -config $r/mf1.toml -grid 1x1x1 -resume $r/mf/checkpoints/ckpt-00000020 >$r/mf1.log 2>&1 ||
  { cat $r/mf1.log; fail "mini-batch resume on 1x1x1 (d=2)"; }
"$bin" compare -tol 1e-5 $r/mf/metrics.jsonl $r/mf1/metrics.jsonl || fail "mini-batch float32 resumed on 1x1x1 (d=2) differs"
E=60

# 4. Predictions of the 8-rank model (its final model, output.save_model)
# on 8 ranks and on 1: probabilities and layer 0's embeddings.
sed -e 's/^\([xyz]\) = .*/\1 = 1/' $r/k8.toml >$r/k1.toml # the job on one rank
for np in 8 1; do
  for what in preds emb; do
    emb=(); [ $what = emb ] && emb=(-embeddings 0)
    "${mpirun[@]}" -np $np "$bin" predict -config $r/k$np.toml -checkpoint $r/k8/model "${emb[@]}" \
      -out $r/$what$np.npy >$r/$what$np.log 2>&1 || { cat $r/$what$np.log; fail "predict $what on $np ranks"; }
  done
done
go run ./scripts/checkpreds -config $r/k8.toml -run $r/k8 -preds $r/preds8.npy -ref $r/preds1.npy \
  -emb $r/emb8.npy -emb-ref $r/emb1.npy || fail "predictions on 8 ranks"

# 5. Bad checkpoints, on 1 rank.
good=$r/k8/checkpoints/ckpt-00000050
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
mkdir -p $r/latest/checkpoints && cp -r $good $r/latest/checkpoints/ && cp -r $r/bad/corrupt $r/latest/checkpoints/ckpt-00000055 &&
  cp -r $r/bad/half $r/latest/checkpoints/.tmp-ckpt-00000057 && cp -r $r/bad/half $r/latest/checkpoints/ckpt-00000059
job latest examples/cora-8.toml "[checkpoint]\ndir = \"$r/latest/checkpoints\"\nevery = 100\n"
"$bin" -config $r/latest.toml -grid 1x1x1 -resume latest >$r/latest.log 2>&1 || { cat $r/latest.log; fail "latest"; }
grep -q "resuming.*ckpt-00000050" $r/latest.log || { cat $r/latest.log; fail "latest did not take the last good checkpoint"; }
echo "resume.sh: kill -9 and SIGTERM resumes equal the uninterrupted runs; 1 rank and 1x2x3 within 1e-5; mini-batch bf16 equal, float32 on 1x1x1 (d=2) within 1e-5; predictions on 8 ranks exact; bad checkpoints refused, latest takes the last good one"
