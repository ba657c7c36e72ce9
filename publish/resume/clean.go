package resume

import (
	"reflect"

	"github.com/carryover/carryover/publish"
)

// cleanText removes terminal escapes, control characters but newline and
// tab, and invisible characters (publish.StripTerminal) from every string
// v points to — every field of a Session or a Handoff, present and
// future, whatever file or transcript it came from — so that RESUME.md,
// RESUME.yaml/.json and session.json carry no zero-width character before
// a '#' and no bidirectional override. Multi-line fields stay multi-line.
func cleanText(v any) { cleanValue(reflect.ValueOf(v)) }

func cleanValue(v reflect.Value) {
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			cleanValue(v.Elem())
		}
	case reflect.Struct:
		for i := 0; i < v.NumField(); i++ {
			if v.Type().Field(i).IsExported() {
				cleanValue(v.Field(i))
			}
		}
	case reflect.Slice, reflect.Array:
		for i := 0; i < v.Len(); i++ {
			cleanValue(v.Index(i))
		}
	case reflect.Map:
		cleanMap(v)
	case reflect.String:
		if v.CanSet() {
			if c := publish.StripTerminal(v.String()); c != v.String() {
				v.SetString(c)
			}
		}
	}
}

// cleanMap cleans the keys and values of a string → string map (the only
// maps carryover's types hold).
func cleanMap(v reflect.Value) {
	if v.Type().Key().Kind() != reflect.String || v.Type().Elem().Kind() != reflect.String {
		return
	}
	for _, k := range v.MapKeys() {
		ck, cv := publish.StripTerminal(k.String()), publish.StripTerminal(v.MapIndex(k).String())
		if ck != k.String() {
			v.SetMapIndex(k, reflect.Value{})
		}
		v.SetMapIndex(reflect.ValueOf(ck).Convert(v.Type().Key()), reflect.ValueOf(cv).Convert(v.Type().Elem()))
	}
}
