package dataset

import "embed"

// builtinFS holds the Planetoid datasets shipped with the binary, one
// folder per dataset (gzipped text files and meta.toml), so that Builtin
// works from any directory and tests never need the shared data folder.
//
//go:embed planetoid/*/*.gz planetoid/*/meta.toml
var builtinFS embed.FS
