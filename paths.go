package main

import (
	"fmt"

	"github.com/spf13/pflag"
)

// refuseEmpty refuses the empty string as the value of the path-valued flags given and of
// the arguments, named by argNames in order (the last name also names any further
// arguments): an unset variable in a script (backup create "$SRC") must fail, not mean the
// current folder.
func refuseEmpty(flags *pflag.FlagSet, names, args []string, argNames ...string) error {
	for _, name := range names {
		f := flags.Lookup(name)
		if !f.Changed || !hasEmpty(f.Value) {
			continue
		}
		if f.Shorthand != "" {
			return fmt.Errorf("-%s/--%s is empty", f.Shorthand, f.Name)
		}
		return fmt.Errorf("--%s is empty", f.Name)
	}
	for i, arg := range args {
		if arg == "" {
			return fmt.Errorf("%s is empty", argNames[min(i, len(argNames)-1)])
		}
	}
	return nil
}

func hasEmpty(v pflag.Value) bool {
	list, ok := v.(pflag.SliceValue)
	if !ok {
		return v.String() == ""
	}
	for _, s := range list.GetSlice() {
		if s == "" {
			return true
		}
	}
	return false
}
