//go:build !windows

package cmd

import (
	"os"
	"path/filepath"
	"testing"
)

// TestSystemClipboard: the first clipboard program in PATH's absolute entries gets the text on stdin; a relative
// entry (a repository's own xclip) never does, and wl-copy only under Wayland.
func TestSystemClipboard(t *testing.T) {
	dir, rel := t.TempDir(), t.TempDir()
	out := filepath.Join(dir, "got")
	for _, p := range []string{filepath.Join(dir, "xsel"), filepath.Join(dir, "wl-copy"), filepath.Join(rel, "xclip")} {
		script := "#!/bin/sh\necho \"$0 $*\" > " + out + "\ncat >> " + out + "\n"
		if err := os.WriteFile(p, []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	t.Chdir(rel)
	vars := map[string]string{"PATH": ".:" + dir}
	e := &Env{Getenv: func(k string) string { return vars[k] }}
	if err := systemClipboard(e, "héllo → there"); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(out); string(b) != filepath.Join(dir, "xsel")+" --input --clipboard\nhéllo → there" {
		t.Fatalf("got %q", b)
	}
	vars["WAYLAND_DISPLAY"] = "wayland-0"
	if err := systemClipboard(e, "x"); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(out); string(b) != filepath.Join(dir, "wl-copy")+" \nx" {
		t.Fatalf("got %q", b)
	}
	vars["PATH"] = "."
	if err := systemClipboard(e, "x"); err == nil {
		t.Fatal("a relative PATH entry's xclip was run")
	}
}
