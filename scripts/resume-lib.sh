# Shared by scripts/resume.sh and scripts/resume-15d.sh, which source it
# after setting r (their runs folder) and E (epochs): the mpirun command,
# fail, job, waitfor, and the SIGTERM check both make.
bin=${SCALEGNN:-./scalegnn}
mpirun=(mpirun)
[ "$(id -u)" = 0 ] && mpirun+=(--allow-run-as-root)
mpirun+=(--oversubscribe)
rm -rf "$r" && mkdir -p "$r"
fail() { echo "$(basename "$0"): FAIL: $*"; exit 1; }
job() { # name, base job file, extra TOML appended: writes $r/name.toml with output.dir $r/name and E epochs
  sed -e "s#^dir = .*#dir = \"$r/$1\"#; s/^epochs = .*/epochs = $E/" "$2" >"$r/$1.toml"
  printf '%b' "$3" >>"$r/$1.toml"
}
waitfor() { # path, pid: wait until path exists while pid runs
  for _ in $(seq 600); do [ -e "$1" ] && return 0; kill -0 "$2" 2>/dev/null || return 1; sleep 0.05; done; return 1
}
sigterm_resume() { # base job file, reference metrics: SIGTERM to mpirun once
  # training is under way (its checkpoint of epoch 10) leaves a checkpoint
  # and an "interrupted" summary; -resume latest then finishes the run
  # identically to the reference (compare -tol 0).
  job t8 "$1" '[checkpoint]\nevery = 10\n'
  "${mpirun[@]}" -np 8 "$bin" -config $r/t8.toml >$r/t8.log 2>&1 &
  local pid=$!
  waitfor $r/t8/checkpoints/ckpt-00000010 $pid || fail "t8: no checkpoint at epoch 10"
  kill -TERM $pid; wait $pid && fail "t8: exit 0 after SIGTERM"
  grep -q '"status": "interrupted"' $r/t8/summary.json || { cat $r/t8.log; fail "t8: summary not interrupted"; }
  grep -q '"checkpoint": ' $r/t8/summary.json || fail "t8: summary names no checkpoint"
  grep 'resume with' $r/t8.log || fail "t8: no resume line"
  "${mpirun[@]}" -np 8 "$bin" -config $r/t8.toml -resume latest >$r/t8-resume.log 2>&1 || { cat $r/t8-resume.log; fail "t8 resume"; }
  "$bin" compare -tol 0 "$2" $r/t8/metrics.jsonl || fail "t8: resumed run differs"
}
kill9_resume() { # name, checkpoint, reference metrics: $r/name.toml on 8
  # ranks, killed with kill -9 once checkpoint exists, resumes (-resume
  # latest) to the reference's metrics (compare -tol 0).
  "${mpirun[@]}" -np 8 "$bin" -config $r/$1.toml >$r/$1.log 2>&1 &
  local pid=$!
  waitfor $r/$1/checkpoints/$2 $pid || fail "$1: no $2"
  kill -9 $(pgrep -P $pid) 2>/dev/null; wait $pid
  grep -q '"status": "completed"' $r/$1/summary.json && fail "$1: finished before kill -9"
  "${mpirun[@]}" -np 8 "$bin" -config $r/$1.toml -resume latest >$r/$1-resume.log 2>&1 || { cat $r/$1-resume.log; fail "$1 resume"; }
  grep -q 'resuming' $r/$1-resume.log || { cat $r/$1-resume.log; fail "$1: did not resume"; }
  "$bin" compare -tol 0 "$3" $r/$1/metrics.jsonl || fail "$1: resumed run differs"
}
