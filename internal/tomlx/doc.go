// Package tomlx decodes TOML strictly into a Go struct. It owns the rules
// every configuration file of scalegnn follows (the job file, the machine
// profiles of package perfmodel and the meta.toml of a prepared dataset):
//
//   - a key the struct does not declare is an error, with a "did you mean"
//     suggestion (edit distance, aliases, or the same key in another table);
//   - a value of the wrong TOML type is an error naming the key, the value
//     as written and the type expected, before anything is decoded;
//   - a syntax error names the line and column;
//   - Checker validates decoded values in the same words, and refuses NaN
//     and ±Inf, which TOML can spell, wherever a number is checked.
//
// The schema is the struct's toml tags, read by reflection. A field whose
// type implements encoding.TextUnmarshaler is a TOML string (typed options
// such as permute.Scheme decode directly); a map field is a table with any
// keys; a slice of structs is an array of tables.
//
// docs/architecture.md shows how this package fits with the others.
package tomlx
