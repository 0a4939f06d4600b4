// Command healthcheck is the container health check of the trenzinho image: the image is
// distroless (no shell, no curl, no wget), so docker-compose.yml runs
//
//	/usr/local/bin/healthcheck http://127.0.0.1:8080/healthz
//
// which exits 0 when the URL answers 200 within the timeout and 1 otherwise, printing why.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"time"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stderr))
}

func run(args []string, stderr io.Writer) int {
	fs := flag.NewFlagSet("healthcheck", flag.ContinueOnError)
	fs.SetOutput(stderr)
	timeout := fs.Duration("timeout", 4*time.Second, "longest wait for the answer")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "Usage: healthcheck [--timeout 4s] URL\n\nExits 0 when URL answers 200 OK, 1 otherwise (2 on a usage error).")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() != 1 {
		fs.Usage()
		return 2
	}
	if err := check(fs.Arg(0), *timeout); err != nil {
		fmt.Fprintln(stderr, "healthcheck:", err)
		return 1
	}
	return 0
}

func check(url string, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<16))
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: %s", url, resp.Status)
	}
	return nil
}
