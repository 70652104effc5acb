package tomlx

import (
	"encoding"
	"reflect"
	"sync"
)

// schema maps each dotted key of a file to its Go type, and each table
// ("" for the top level) to its keys in declaration order.
type schema struct {
	types  map[string]reflect.Type
	tables map[string][]string
	order  []string // tables in declaration order, for deterministic suggestions
}

var schemas sync.Map // reflect.Type → schema

func schemaOf(t reflect.Type) schema {
	if s, ok := schemas.Load(t); ok {
		return s.(schema)
	}
	s := buildSchema(t)
	schemas.Store(t, s)
	return s
}

var textUnmarshaler = reflect.TypeOf((*encoding.TextUnmarshaler)(nil)).Elem()

// isText reports whether values of t decode from a TOML string through
// encoding.TextUnmarshaler.
func isText(t reflect.Type) bool {
	return t.Implements(textUnmarshaler) || reflect.PointerTo(t).Implements(textUnmarshaler)
}

// table reports whether t is decoded from a TOML table whose keys the
// schema lists (a struct that is not a text value).
func table(t reflect.Type) bool { return t.Kind() == reflect.Struct && !isText(t) }

func buildSchema(t reflect.Type) schema {
	s := schema{types: make(map[string]reflect.Type), tables: make(map[string][]string)}
	var walk func(prefix string, t reflect.Type)
	walk = func(prefix string, t reflect.Type) {
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			name, _, _ := cutTag(f.Tag.Get("toml"))
			if name == "" || name == "-" || !f.IsExported() {
				continue
			}
			key := name
			if prefix != "" {
				key = prefix + "." + name
			}
			s.types[key] = f.Type
			s.tables[prefix] = append(s.tables[prefix], name)
			switch {
			case table(f.Type):
				s.order = append(s.order, key)
				walk(key, f.Type)
			case f.Type.Kind() == reflect.Slice && table(f.Type.Elem()):
				// An array of tables: its elements' keys are key.leaf.
				s.order = append(s.order, key)
				walk(key, f.Type.Elem())
			}
		}
	}
	s.order = append(s.order, "")
	walk("", t)
	return s
}

// cutTag splits a toml tag into its name and options.
func cutTag(tag string) (name, opts string, ok bool) {
	for i := 0; i < len(tag); i++ {
		if tag[i] == ',' {
			return tag[:i], tag[i+1:], true
		}
	}
	return tag, "", false
}

// known reports whether key is declared, or lies inside a map field (a
// table with free keys, such as a machine profile's [fit]).
func (s schema) known(key []string) bool {
	for i := range key {
		t, ok := s.types[join(key[:i+1])]
		if !ok {
			return false
		}
		if t.Kind() == reflect.Map {
			return true
		}
	}
	return true
}

func join(k []string) string {
	out := ""
	for i, p := range k {
		if i > 0 {
			out += "."
		}
		out += p
	}
	return out
}
