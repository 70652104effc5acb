// Package jobfile is the job file: the TOML a run is configured by
// (Config), read with LoadConfig or ParseConfig, which fill defaults for
// absent keys and validate every value before any work starts, so a typo
// or an out-of-range value is reported on one line naming the file, the
// key, the value and what was expected. docs/jobfile.md lists every key,
// and a test fails when one is missing there.
//
// The file is decoded by internal/tomlx (the strictness every
// configuration file shares); the options are their owning packages'
// types (permute.Scheme, gcn.Mode, gcn.Norm, collectives.DType,
// method.Algorithm), and [dataset.sbm] and [dataset.rmat] are package
// dataset's generator configs, which dataset validates. The keys every
// method shares are checked in Validate; each training method's own keys
// by its entry in methodChecks (methodcheck.go). LoadGraph reads or
// generates the graph a job file names.
package jobfile
