// Package enum parses the names of typed options (permute.Scheme,
// gcn.Mode, gcn.Norm, collectives.DType): one helper so that every one of
// them refuses a bad name in the same words, which package tomlx turns into
// "file: key = "value": expected one of ...".
//
// docs/architecture.md shows how this package fits with the others.
package enum
