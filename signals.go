package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"
)

// interruptible returns the context every command runs under. The first SIGINT or SIGTERM
// cancels it, so the command stops cleanly: temp files removed, a failed receipt written,
// exit 130. A second one ends the process at once with exit 130, so that nothing a command
// waits on can keep it from being stopped; what it leaves are temp names, never a final path.
// stop undoes the signal handling.
func interruptible() (ctx context.Context, stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	done := make(chan struct{})
	go func() {
		select {
		case <-sigs:
			cancel()
		case <-done:
			return
		}
		select {
		case <-sigs:
			os.Exit(exitInterrupted)
		case <-done:
		}
	}()
	return ctx, func() {
		signal.Stop(sigs)
		close(done)
		cancel()
	}
}
