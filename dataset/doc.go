// Package dataset owns the node-classification datasets of scalegnn: the
// in-memory Graph, the Planetoid text format (with Cora and CiteSeer
// embedded in the binary), GCN preprocessing (feature row normalisation and
// the symmetric adjacency normalisation Â = D^-1/2 (A+I) D^-1/2), and the
// seeded synthetic generators used for tests and scaling runs (stochastic
// block model, R-MAT). The generator configs carry the job file's keys as
// toml tags, and their Validate is the one place their ranges are checked
// (a *ConfigError names the key, for the job file to prefix its table).
//
// The package is pure Go with no MPI: every rank can load or generate the
// same graph independently, and the tests run alone. Malformed input is
// reported as an error naming the file, the line and what was expected;
// the package panics only on programmer misuse.
//
// docs/architecture.md shows how this package fits with the others.
package dataset
