// Package main is the sample app of the demo and the in-cluster specs: a
// program that, like most, reads its config once at start. It prints every
// value it read, from the environment and from files, one `source=value` line
// each, then waits to be stopped. Its log is how a spec sees which content a
// pod really got.
//
//	sampleapp -env GREETING -env PASSWORD -file /config/greeting -file /secret/password
//
// With -refuse NAME=VALUE it exits with status 2 at start when the
// environment variable NAME is VALUE, as a program does that cannot use the
// config it was given: the waves specs break a rollout that way.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
)

// list is a repeatable string flag.
type list []string

func (l *list) String() string     { return strings.Join(*l, ",") }
func (l *list) Set(v string) error { *l = append(*l, v); return nil }

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "sampleapp:", err)
		os.Exit(2)
	}
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGTERM, syscall.SIGINT)
	<-stop
}

func run(args []string, out io.Writer) error {
	var envs, files, refuse list
	fs := flag.NewFlagSet("sampleapp", flag.ContinueOnError)
	fs.Var(&envs, "env", "environment variable to print (repeatable)")
	fs.Var(&files, "file", "file whose content to print (repeatable)")
	fs.Var(&refuse, "refuse", "NAME=VALUE: exit at start when the environment variable NAME is VALUE (repeatable)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	for _, r := range refuse {
		name, value, _ := strings.Cut(r, "=")
		if os.Getenv(name) == value {
			return fmt.Errorf("refusing the config: %s", name)
		}
	}
	for _, e := range envs {
		fmt.Fprintf(out, "env:%s=%s\n", e, os.Getenv(e))
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			// Printed, not fatal: the log should show what the pod saw.
			fmt.Fprintf(out, "file:%s unreadable: %v\n", f, err)
			continue
		}
		fmt.Fprintf(out, "file:%s=%s\n", f, strings.TrimSpace(string(b)))
	}
	return nil
}
