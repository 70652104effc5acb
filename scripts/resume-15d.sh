#!/usr/bin/env bash
# Checkpoints and resume of a 1.5D (CAGNET) job under mpirun, as
# scripts/resume.sh checks them for 3D, on E = 60 epochs of
# examples/cora-15d-8.toml (8 ranks, 4 process rows x 2 replicas):
#  1. the uninterrupted run (its final model saved) is the reference;
#  2. a run killed with kill -9 after its checkpoint of epoch 20 resumes
#     (-resume latest) to the same metrics (compare -tol 0); its
#     checkpoint of epoch 50 resumes within 1e-5 on 6 ranks as 2x3
#     (replication 3) and in 3D on 2x2x2 (the checkpoint is grid-free);
#  3. SIGTERM to mpirun leaves a checkpoint and an "interrupted" summary;
#     -resume latest finishes the run identically;
#  4. the same job on a prepared Cora (every rank reads its block rows)
#     trains exactly like the in-memory one (compare -tol 0);
#  5. scalegnn predict with the saved model on 8 ranks (1.5D): the argmax
#     over the test split is the run's test accuracy, and probabilities
#     and layer 0's embeddings hold the rows of 1 rank's (scripts/checkpreds).
#
#   scripts/resume-15d.sh    (make mpitest runs it; about a minute)
set -uo pipefail
E=60
r=runs/resume-15d
. "$(dirname "$0")/resume-lib.sh"

# 1. The reference, with its final model.
job ref examples/cora-15d-8.toml '' && sed -i "s#^dir = \"$r/ref\"#&\nsave_model = true#" $r/ref.toml
"${mpirun[@]}" -np 8 "$bin" -config $r/ref.toml >$r/ref.log 2>&1 || { cat $r/ref.log; fail "ref"; }

# 2. kill -9 after the checkpoint of epoch 20, resume on 8 ranks.
job k8 examples/cora-15d-8.toml '[checkpoint]\nevery = 10\nkeep = 4\n'
kill9_resume k8 ckpt-00000020 $r/ref/metrics.jsonl
# ... and its checkpoint of epoch 50 on 1.5D 2x3 (6 ranks) and 3D 2x2x2.
job c6 examples/cora-15d-8.toml '' && sed -i 's/^x = 8/x = 6/; s/^replication = 2/replication = 3/' $r/c6.toml
job d3 examples/cora-15d-8.toml '' && sed -i '/^algorithm = /d; /^replication = /d; s/^x = 8/x = 2/; s/^y = 1/y = 2/; s/^z = 1/z = 2/' $r/d3.toml
for g in c6:6 d3:8; do
  n=${g%:*}
  mkdir -p $r/$n && cp $r/k8/metrics.jsonl $r/$n/
  "${mpirun[@]}" -np ${g#*:} "$bin" -config $r/$n.toml -resume $r/k8/checkpoints/ckpt-00000050 >$r/$n.log 2>&1 ||
    { cat $r/$n.log; fail "resume on $n"; }
  "$bin" compare -tol 1e-5 $r/ref/metrics.jsonl $r/$n/metrics.jsonl || fail "resume on $n differs"
done

# 3. SIGTERM to mpirun, once training is under way (its first checkpoint).
sigterm_resume examples/cora-15d-8.toml $r/ref/metrics.jsonl

# 4. A prepared Cora (3x3 stored blocks, no permutation as the job).
"$bin" prepare -q -force -in cora -format builtin -out $r/cora-prepared -blocks 3 -permute none || fail "prepare"
job prep examples/cora-15d-8.toml "" && sed -i "s#^source = .*#source = \"prepared\"\npath = \"$PWD/$r/cora-prepared\"#" $r/prep.toml
"${mpirun[@]}" -np 8 "$bin" -config $r/prep.toml >$r/prep.log 2>&1 || { cat $r/prep.log; fail "prepared"; }
"$bin" compare -tol 0 $r/ref/metrics.jsonl $r/prep/metrics.jsonl || fail "prepared differs from in memory"

# 5. Predictions of the saved model on 8 ranks (1.5D) against 1 rank's.
sed -e 's/^x = .*/x = 1/; s/^replication = .*/replication = 1/' $r/ref.toml >$r/ref1.toml
for np in 8 1; do
  cfg=$r/ref.toml; [ $np = 1 ] && cfg=$r/ref1.toml
  for what in preds emb; do
    emb=(); [ $what = emb ] && emb=(-embeddings 0)
    "${mpirun[@]}" -np $np "$bin" predict -config $cfg -checkpoint $r/ref/model "${emb[@]}" \
      -out $r/$what$np.npy >$r/$what$np.log 2>&1 || { cat $r/$what$np.log; fail "predict $what on $np ranks"; }
  done
done
go run ./scripts/checkpreds -config $r/ref.toml -run $r/ref -preds $r/preds8.npy -ref $r/preds1.npy \
  -emb $r/emb8.npy -emb-ref $r/emb1.npy || fail "predictions on 8 ranks"
echo "resume-15d.sh: 1.5D kill -9 and SIGTERM resumes equal the uninterrupted run; 2x3 and 3D 2x2x2 within 1e-5; prepared equals in memory; predictions on 8 ranks exact"
