package main

// The dispatch shared by the simulated cluster's multi-call programs (sim/build.sh copies it beside each main.go).

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// dispatch picks the component from the name the program was run as, or else from its first argument, and
// returns the argv that component's own main() expects (argv[0] its name).
func dispatch(argv []string, known func(string) bool) (string, []string) {
	if len(argv) == 0 {
		return "", argv
	}
	base := strings.TrimSuffix(filepath.Base(argv[0]), ".exe")
	if known(base) {
		return base, argv
	}
	if len(argv) > 1 && known(argv[1]) {
		return argv[1], append([]string{argv[1]}, argv[2:]...)
	}
	return "", argv
}

func usage[T any](argv []string, commands map[string]T) {
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	run := "?"
	if len(argv) > 0 {
		run = filepath.Base(argv[0])
	}
	fmt.Fprintf(os.Stderr, "%s: run as one of %s (a symlink of that name), or with it as the first argument\n",
		run, strings.Join(names, ", "))
	os.Exit(127)
}
