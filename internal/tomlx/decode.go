package tomlx

import (
	"encoding"
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"strings"

	"github.com/BurntSushi/toml"
)

// Options tune the suggestions of Decode.
type Options struct {
	// Aliases maps key names other programs use to the struct's own
	// (learning_rate → lr), for "did you mean".
	Aliases map[string]string
}

// Decode decodes the TOML document data into v, a pointer to a struct whose
// fields may hold defaults: keys absent from data leave them as they are.
// name labels every message ("name: line 3, column 1: ..."). The first
// problem in file order is returned: a syntax error, a value of the wrong
// type, or an unknown key. The metadata lets the caller ask which keys were
// present.
func Decode(name string, data []byte, v any, opt Options) (toml.MetaData, error) {
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Pointer || rv.Elem().Kind() != reflect.Struct {
		panic(fmt.Sprintf("tomlx: Decode into %T: need a pointer to a struct", v))
	}
	s := schemaOf(rv.Elem().Type())
	md, err := toml.Decode(string(data), v)
	if err != nil && len(md.Keys()) == 0 {
		// The file did not parse at all: report the parser's position.
		return md, positioned(name, err)
	}
	// A type mismatch stops the decoder; report it in our words before
	// anything else, since later checks see a half-decoded value.
	if terr := checkTypes(name, data, &md, s); terr != nil {
		return md, terr
	}
	if terr := checkText(name, data, &md, s); terr != nil {
		return md, terr
	}
	if err != nil {
		return md, positioned(name, err)
	}
	if uerr := checkUnknown(name, &md, s, opt.Aliases); uerr != nil {
		return md, uerr
	}
	return md, nil
}

// positioned formats a toml error as "name: line L, column C: message".
func positioned(name string, err error) error {
	var perr toml.ParseError
	if errors.As(err, &perr) {
		msg := perr.Message
		if perr.LastKey != "" {
			msg = perr.LastKey + ": " + msg
		}
		return fmt.Errorf("%s: line %d, column %d: %s", name, perr.Position.Line, perr.Position.Col, msg)
	}
	msg := strings.TrimPrefix(err.Error(), "toml: ")
	// A decoding error reads `line 3 (last key "k"): message`.
	if m := lineKey.FindStringSubmatch(msg); m != nil {
		return fmt.Errorf("%s: line %s: %s: %s", name, m[1], m[2], m[3])
	}
	return fmt.Errorf("%s: %s", name, msg)
}

var lineKey = regexp.MustCompile(`^line (\d+) \(last key "([^"]*)"\): (.*)$`)

// checkTypes reports the first key, in file order, whose TOML type cannot be
// decoded into its field.
func checkTypes(name string, data []byte, md *toml.MetaData, s schema) error {
	for _, k := range md.Keys() {
		t, ok := s.types[k.String()]
		if !ok {
			continue
		}
		got := md.Type(k...)
		if typeFits(t, got) {
			continue
		}
		// Decoding into a map cannot fail on types, so it gives the value.
		var raw map[string]any
		toml.Decode(string(data), &raw)
		v := lookup(raw, k)
		if _, isTable := v.(map[string]any); isTable {
			return fmt.Errorf("%s: %s is a table: expected %s", name, k, expectedType(t))
		}
		val := Value(v)
		if got == "Float" && !strings.ContainsAny(val, ".eIN") {
			val += ".0" // show 16.0 as written, not as 16
		}
		return fmt.Errorf("%s: %s = %s: expected %s, not %s", name, k, val, expectedType(t), tomlTypeName(got))
	}
	return nil
}

// checkText reports the first string, in file order, that a typed option
// refuses (its UnmarshalText fails), as "key = value: expected ...".
func checkText(name string, data []byte, md *toml.MetaData, s schema) error {
	var raw map[string]any
	for _, k := range md.Keys() {
		t, ok := s.types[k.String()]
		if !ok || !isText(t) {
			continue
		}
		if raw == nil {
			toml.Decode(string(data), &raw)
		}
		str, _ := lookup(raw, k).(string)
		u := reflect.New(t).Interface().(encoding.TextUnmarshaler)
		err := u.UnmarshalText([]byte(str))
		if err == nil {
			continue
		}
		var exp interface{ Expected() string }
		if errors.As(err, &exp) {
			return fmt.Errorf("%s: %s = %s: expected %s", name, k, Value(str), exp.Expected())
		}
		return fmt.Errorf("%s: %s = %s: %v", name, k, Value(str), err)
	}
	return nil
}

func typeFits(t reflect.Type, tomlType string) bool {
	if isText(t) {
		return tomlType == "String"
	}
	switch t.Kind() {
	case reflect.Struct, reflect.Map:
		return tomlType == "Hash"
	case reflect.Slice, reflect.Array:
		if table(t.Elem()) {
			return tomlType == "ArrayHash"
		}
		return tomlType == "Array"
	case reflect.String:
		return tomlType == "String"
	case reflect.Bool:
		return tomlType == "Bool"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return tomlType == "Integer"
	case reflect.Float32, reflect.Float64:
		return tomlType == "Integer" || tomlType == "Float"
	}
	return false
}

func expectedType(t reflect.Type) string {
	if isText(t) {
		return "a string in double quotes"
	}
	switch t.Kind() {
	case reflect.Struct, reflect.Map:
		return "a table"
	case reflect.Slice, reflect.Array:
		if table(t.Elem()) {
			return "an array of tables"
		}
		return "an array"
	case reflect.String:
		return "a string in double quotes"
	case reflect.Bool:
		return "true or false"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "an integer"
	case reflect.Float32, reflect.Float64:
		return "a number"
	}
	return t.String()
}

func tomlTypeName(t string) string {
	switch t {
	case "String":
		return "a string"
	case "Integer":
		return "an integer"
	case "Float":
		return "a float"
	case "Bool":
		return "a boolean"
	case "Array":
		return "an array"
	case "ArrayHash":
		return "an array of tables"
	case "Hash":
		return "a table"
	}
	return "a date/time"
}

// lookup finds key k in a document decoded into a map; inside an array of
// tables it looks in the last element, the one the key was last set in.
func lookup(raw map[string]any, k toml.Key) any {
	var v any = raw
	for _, p := range k {
		if arr, ok := v.([]map[string]any); ok && len(arr) > 0 {
			v = arr[len(arr)-1]
		}
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[p]
	}
	return v
}

// checkUnknown reports the first key, in file order, that is not in the
// schema. The decoder matches field names case-insensitively, so a key like
// model.Hidden counts as decoded; comparing with the schema catches it too.
func checkUnknown(name string, md *toml.MetaData, s schema, aliases map[string]string) error {
	undecoded := make(map[string]bool)
	for _, k := range md.Undecoded() {
		undecoded[k.String()] = true
	}
	for _, k := range md.Keys() {
		if s.known(k) && !undecoded[k.String()] {
			continue
		}
		// Report the outermost unknown part: for modle.layers = 2 that is
		// the table modle.
		for i := range k {
			if _, known := s.types[k[:i+1].String()]; !known {
				k = k[:i+1]
				break
			}
		}
		table, leaf := strings.Join(k[:len(k)-1], "."), k[len(k)-1]
		if md.Type(k...) == "Hash" {
			return fmt.Errorf("%s: unknown table [%s]: %s", name, k, s.suggest(table, leaf, true, aliases))
		}
		return fmt.Errorf("%s: unknown key %s: %s", name, k, s.suggest(table, leaf, false, aliases))
	}
	return nil
}
