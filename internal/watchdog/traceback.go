package watchdog

import "os"

// traceback reports whether the user asked for stack traces with panics
// (SCALEGNN_TRACEBACK, as the main goroutine's recovery in withMPI reads).
func traceback() bool { return os.Getenv("SCALEGNN_TRACEBACK") != "" }
