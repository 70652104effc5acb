package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestSlurmScripts checks the sbatch scripts of examples/slurm: bash
// syntax, the directives a cluster run needs, a perfmodel predict step
// before srun, and an environment file for each MPI they name.
func TestSlurmScripts(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash")
	}
	scripts, _ := filepath.Glob(filepath.Join("examples", "slurm", "*.sbatch"))
	if len(scripts) < 2 {
		t.Fatalf("examples/slurm holds %d sbatch scripts, want one for 1 node and one for 2", len(scripts))
	}
	nodes := map[string]bool{}
	for _, p := range scripts {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		text := string(data)
		if out, err := exec.Command(bash, "-n", p).CombinedOutput(); err != nil {
			t.Errorf("%s: bash -n: %v\n%s", p, err, out)
		}
		directive := func(re string) string {
			m := regexp.MustCompile(`(?m)^#SBATCH ` + re + `$`).FindStringSubmatch(text)
			if m == nil {
				t.Errorf("%s: no #SBATCH line matching %q", p, re)
				return ""
			}
			return m[len(m)-1]
		}
		nodes[directive(`--nodes=(\d+)`)] = true
		directive(`--ntasks-per-node=\d+`)
		directive(`--cpus-per-task=\d+`)
		directive(`--signal=B:USR1@120`)
		predict := strings.Index(text, "./scalegnn perfmodel predict -config")
		srun := strings.Index(text, "\nsrun ")
		if predict < 0 || srun < 0 || predict > srun {
			t.Errorf("%s: want a ./scalegnn perfmodel predict step before srun (at %d and %d)", p, predict, srun)
		}
		if !strings.Contains(text, `source "examples/slurm/env-${MPI}.sh"`) {
			t.Errorf("%s: does not source examples/slurm/env-${MPI}.sh", p)
		}
	}
	if !nodes["1"] || !nodes["2"] {
		t.Errorf("scripts for nodes %v, want 1 and 2", nodes)
	}
	for mpi, want := range map[string]string{"openmpi": "SRUN_MPI", "craympich": "-tags craympi"} {
		p := filepath.Join("examples", "slurm", "env-"+mpi+".sh")
		data, err := os.ReadFile(p)
		if err != nil {
			t.Errorf("%v", err)
			continue
		}
		if !strings.Contains(string(data), want) || !strings.Contains(string(data), "OPENBLAS_NUM_THREADS=1") {
			t.Errorf("%s: want %q and OPENBLAS_NUM_THREADS=1", p, want)
		}
		if out, err := exec.Command(bash, "-n", p).CombinedOutput(); err != nil {
			t.Errorf("%s: bash -n: %v\n%s", p, err, out)
		}
	}
}

// TestCheckDeps runs scripts/check-deps.sh with a PATH that lacks mpirun:
// one line naming it and what to run, exit 1. With the real PATH it
// passes wherever the build works (this test binary was built).
func TestCheckDeps(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash")
	}
	bin := t.TempDir()
	for _, tool := range []string{"go", "pkg-config", "grep"} {
		p, err := exec.LookPath(tool)
		if err != nil {
			t.Skipf("no %s", tool)
		}
		if err := os.Symlink(p, filepath.Join(bin, tool)); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command(bash, filepath.Join("scripts", "check-deps.sh"))
	cmd.Env = append(os.Environ(), "PATH="+bin)
	out, err := cmd.CombinedOutput()
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if err == nil || len(lines) != 1 || !strings.Contains(lines[0], "missing: ") ||
		!strings.Contains(lines[0], "Open MPI's mpirun") || !strings.Contains(lines[0], "run scripts/setup.sh") {
		t.Errorf("check-deps.sh without mpirun: %v, output %q; want exit 1 and one line naming mpirun and scripts/setup.sh", err, out)
	}
}

// TestGeneratorLimitsRefused checks that the generators' size limits
// are job-file errors for training, perfmodel predict and prepare alike:
// one line naming the key, its value and the limit, before any work.
func TestGeneratorLimitsRefused(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		name, table, want string
	}{
		{"rmat features", "[dataset]\nsource = \"rmat\"\n[dataset.rmat]\nscale = 28\nfeatures = 64\n",
			"dataset.rmat.features = 64: expected an integer >= 1 with 2^scale·features <= 2^32"},
		{"rmat edges", "[dataset]\nsource = \"rmat\"\n[dataset.rmat]\nscale = 30\nfeatures = 1\n",
			"dataset.rmat.edge_factor = 16: expected an integer in [1, 1024] with edge_factor·2^scale <= 2^32"},
		{"rmat scale", "[dataset]\nsource = \"rmat\"\n[dataset.rmat]\nscale = 31\n",
			"dataset.rmat.scale = 31"},
		{"sbm features", "[dataset]\nsource = \"sbm\"\n[dataset.sbm]\nnodes = 100000000\nfeatures = 64\n",
			"dataset.sbm.features = 64: expected an integer >= 1 with nodes·features <= 2^32"},
	} {
		t.Run(c.name, func(t *testing.T) {
			job := filepath.Join(dir, strings.ReplaceAll(c.name, " ", "-")+".toml")
			if err := os.WriteFile(job, []byte(c.table), 0o644); err != nil {
				t.Fatal(err)
			}
			for _, args := range [][]string{
				{"perfmodel", "predict", "-config", job, "-ranks", "8"},
				{"-config", job},
				{"prepare", "-q", "-format", "job", "-in", job, "-out", filepath.Join(dir, "out")},
			} {
				code, stderr := runMain(t, args...)
				lines := errorLines(stderr)
				if code == 0 || len(lines) != 1 || !strings.Contains(lines[0], c.want) {
					t.Errorf("scalegnn %s: exit %d, stderr %q; want one line containing %q", strings.Join(args, " "), code, stderr, c.want)
				}
			}
		})
	}
}
