package launch

import (
	"fmt"
	"io"
	"os"

	"scalegnn/collectives/mpi"
	"scalegnn/internal/node"
)

// yieldVar is Open MPI's setting that makes a rank waiting for a message
// yield its core instead of polling. Open MPI reads OMPI_MCA_* variables
// from the environment in MPI_Init, so setting it before Init works under
// every launcher (srun, mpirun inside an allocation, mpirun with slots).
const yieldVar = "OMPI_MCA_mpi_yield_when_idle"

// yieldPlan decides what to do when a node runs more ranks than a rank
// has cores (perNode ranks on this node, as l says; cores in this rank's
// affinity mask): with Open MPI, set yieldVar (set true) unless the
// environment already has it, or mpirun marked the node oversubscribed
// (OMPI_MCA_mpi_oversubscribe, which yields already); with another
// library, which has no such setting, say to start fewer ranks. line is the one
// line for the start ("" for nothing to say).
func yieldPlan(l mpi.Launch, cores int, lib mpi.Library, getenv func(string) string) (set bool, line string) {
	if l.PerNode <= cores || cores < 1 || lib.Srun == "" {
		return false, ""
	}
	who := fmt.Sprintf("%d ranks on this node (%s=%d) share %d cores", l.PerNode, l.PerNodeVar, l.PerNode, cores)
	switch lib.Name {
	case "Open MPI":
		switch v := getenv(yieldVar); {
		case v != "":
			return false, "" // the user's choice
		case truthy(getenv("OMPI_MCA_mpi_oversubscribe")):
			return false, "" // mpirun knows: Open MPI yields already
		}
		return true, fmt.Sprintf("scalegnn: %s: set %s=1, so that a waiting rank yields its core instead of polling (export %s=0 to keep polling)", who, yieldVar, yieldVar)
	default:
		// MPIR_CVAR_POLLS_BEFORE_YIELD=1 made Debian's MPICH 4.0
		// (ch4:ucx) slower, not faster: there is nothing to set.
		return false, fmt.Sprintf("scalegnn: %s, and a waiting %s rank polls its core (%s has no setting that makes it yield): start at most %d ranks per node", who, lib.Name, lib.Name, cores)
	}
}

// truthy reports whether an Open MPI boolean parameter's value says yes.
func truthy(v string) bool {
	switch v {
	case "1", "t", "true", "enabled", "yes", "y":
		return true
	}
	return false
}

// prepareYield applies yieldPlan to this process before MPI starts and
// has the launcher's rank 0 print its line to stderr.
func prepareYield(stderr io.Writer) {
	l, err := mpi.ReadLaunch(os.Getenv)
	if err != nil {
		return // Init says so
	}
	cores := 0
	if mask, err := node.Affinity(); err == nil {
		cores = node.Cores(mask)
	}
	set, line := yieldPlan(l, cores, mpi.Built, os.Getenv)
	if set {
		if err := os.Setenv(yieldVar, "1"); err != nil {
			line = fmt.Sprintf("scalegnn: %d ranks on this node share %d cores, and setting %s=1 failed (%v): export it yourself", l.PerNode, cores, yieldVar, err)
		}
	}
	if line != "" && LauncherRank() == 0 {
		fmt.Fprintln(stderr, line)
	}
}
