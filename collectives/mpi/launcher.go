package mpi

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Library is the MPI library a build of this package links, and how
// launchers must start it.
type Library struct {
	// Name is the library as people name it: "Open MPI", "MPICH",
	// "Cray MPICH", or "no MPI" under -tags nompi.
	Name string
	// Tags are the go build tags of this build ("" for the default).
	Tags string
	// Srun is the value of srun's --mpi that starts it ("" for none).
	Srun string
	// Launcher is its own launcher, for a job started without srun.
	Launcher string
}

// The libraries a build can link; Built is one of them.
var (
	openMPI   = Library{Name: "Open MPI", Srun: "pmix", Launcher: "Open MPI's mpirun"}
	mpich     = Library{Name: "MPICH", Tags: "mpich", Srun: "pmi2", Launcher: "MPICH's mpiexec (hydra)"}
	crayMPICH = Library{Name: "Cray MPICH", Tags: "craympi", Srun: "cray_shasta", Launcher: "srun"}
	noMPI     = Library{Name: "no MPI", Tags: "nompi"}
)

// Launch is what the launcher that started this process says in the
// environment, read before MPI starts.
type Launch struct {
	// Launcher names it: "srun", "Open MPI's mpirun", "hydra's mpiexec";
	// "" when no variable says how many ranks it started.
	Launcher string
	// Ranks is the number of ranks it started (0: unknown), RanksVar the
	// variable that said so.
	Ranks    int
	RanksVar string
	// PerNode is the number of ranks on this node (0: unknown),
	// PerNodeVar the variable that said so.
	PerNode    int
	PerNodeVar string
}

// rankVars are the environment variables in which MPI launchers tell each
// process how many ranks they started, checked in this order: Open MPI's
// mpirun, the PMI of MPICH's hydra (and Cray's and Intel's, and srun
// --mpi=pmi2), hydra's count of ranks on this node, and Slurm's srun (per
// job step; SLURM_NTASKS is not used, since a batch script holds it while
// running a single process).
var rankVars = [...]string{
	"OMPI_COMM_WORLD_SIZE",
	"PMI_SIZE",
	"MPI_LOCALNRANKS",
	"SLURM_STEP_NUM_TASKS",
}

// perNodeVars are the variables that give the ranks on this node, in this
// order: Open MPI's mpirun, hydra (PMI_LOCAL_SIZE, MPI_LOCALNRANKS), then
// Slurm: the step's tasks per node, the --ntasks-per-node of the job, the
// job's tasks per node. Slurm's lists ("4(x2),3") hold one count per node,
// in node order; SLURM_NODEID picks this node's.
var perNodeVars = [...]string{
	"OMPI_COMM_WORLD_LOCAL_SIZE",
	"PMI_LOCAL_SIZE",
	"MPI_LOCALNRANKS",
	"SLURM_STEP_TASKS_PER_NODE",
	"SLURM_NTASKS_PER_NODE",
	"SLURM_TASKS_PER_NODE",
}

// ReadLaunch reads what the launcher says in getenv. It fails when a
// rank count is not a positive integer; an unset or empty variable says
// nothing, and a per-node count it cannot read is skipped.
func ReadLaunch(getenv func(string) string) (Launch, error) {
	var l Launch
	for _, key := range rankVars {
		v := getenv(key)
		if v == "" {
			continue
		}
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			return Launch{}, fmt.Errorf("mpi: Init: environment variable %s=%q is not a rank count (want a positive integer)", key, v)
		}
		l.Ranks, l.RanksVar = n, key
		srunStep := getenv("SLURM_STEP_NUM_TASKS") == v
		switch {
		case key == "OMPI_COMM_WORLD_SIZE" && (getenv("OMPI_MCA_orte_hnp_uri") != "" || !srunStep):
			// mpirun's ranks know its address; Open MPI started by srun
			// --mpi=pmix (no mpirun) may set the size too.
			l.Launcher = "Open MPI's mpirun"
		case key == "SLURM_STEP_NUM_TASKS" || srunStep:
			l.Launcher = "srun" // srun --mpi=pmi2 sets PMI_SIZE too
		default:
			l.Launcher = "hydra's mpiexec"
		}
		break
	}
	node, _ := strconv.Atoi(getenv("SLURM_NODEID"))
	for _, key := range perNodeVars {
		if n := tasksOnNode(getenv(key), node); n > 0 {
			l.PerNode, l.PerNodeVar = n, key
			break
		}
	}
	return l, nil
}

// tasksOnNode reads a count of tasks per node: a number, or Slurm's list
// of counts per node ("4(x2),3" is 4, 4, 3), of which it returns node's,
// or the largest when node is out of the list. It returns 0 for a value
// it cannot read.
func tasksOnNode(v string, node int) int {
	if v == "" {
		return 0
	}
	var counts []int
	for _, part := range strings.Split(v, ",") {
		n, times := part, "1"
		if i := strings.Index(part, "(x"); i >= 0 && strings.HasSuffix(part, ")") {
			n, times = part[:i], part[i+2:len(part)-1]
		}
		c, err1 := strconv.Atoi(n)
		k, err2 := strconv.Atoi(times)
		if err1 != nil || err2 != nil || c < 1 || k < 1 || k > 1<<20 {
			return 0
		}
		for range k {
			counts = append(counts, c)
		}
	}
	if node >= 0 && node < len(counts) {
		return counts[node]
	}
	return slices.Max(counts)
}

// LaunchError says that a launcher started more ranks than MPI joined
// into this process's world: each process runs alone, as a world of
// World ranks (1), which this build's library could not connect to the
// launcher (a wrong srun --mpi, another MPI's launcher, or -tags nompi).
type LaunchError struct {
	Launch  Launch
	World   int
	Library Library
}

func (e *LaunchError) Error() string {
	l, lib := e.Launch, e.Library
	if lib.Srun == "" { // -tags nompi
		return fmt.Sprintf("mpi: Init: this scalegnn was built with -tags nompi and runs one rank, but the launcher started %d (%s=%d); rebuild without -tags nompi",
			l.Ranks, l.RanksVar, l.Ranks)
	}
	head := fmt.Sprintf("mpi: Init: %s started %d ranks (%s=%d) but MPI sees %d: this scalegnn is built with %s", l.Launcher, l.Ranks, l.RanksVar, l.Ranks, e.World, lib.Name)
	if l.Launcher == "srun" {
		return fmt.Sprintf("%s, which srun starts with --mpi=%s (srun --mpi=%s -n %d ...; srun --mpi=list shows this Slurm's plugins)", head, lib.Srun, lib.Srun, l.Ranks)
	}
	return fmt.Sprintf("%s, which %s cannot start: use %s or srun --mpi=%s, or a scalegnn built for the launcher's MPI", head, l.Launcher, lib.Launcher, lib.Srun)
}

// checkLaunch is the one rule of a wrong launch: the launcher started more
// than one rank and MPI's world holds fewer. It returns a *LaunchError
// then, and nil otherwise.
func checkLaunch(l Launch, world int, lib Library) error {
	if l.Ranks > 1 && world == 1 {
		return &LaunchError{Launch: l, World: world, Library: lib}
	}
	return nil
}
