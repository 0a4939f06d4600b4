package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// supervisor starts the child processes, each in its own process group (so that a Ctrl-C on
// the terminal reaches localrun alone, which stops them in order) and killed if localrun dies
// (childAttr), with its output in DATA/logs/NAME.log, and reports one that exits unexpectedly
// on failed.
type supervisor struct {
	data     string
	log      *slog.Logger
	failed   chan error
	stopping atomic.Bool

	mu    sync.Mutex
	procs []*proc

	// forkMu keeps a reservation's listeners (startOwned) and the start of a process apart: a
	// process forked while localrun holds a listener holds it too until it executes its
	// program, and the child the port was reserved for would find it taken.
	forkMu sync.Mutex
	// forks runs each cmd.Start on the forker's goroutine (start).
	forks chan func()
}

// proc is one child process.
type proc struct {
	name    string
	cmd     *exec.Cmd
	logPath string
	done    chan struct{} // closed when it has exited
	stopped bool
	// confirmed is set once the process is known to be this run's (startOwned): an exit
	// before is its starter's business (a port taken meanwhile), an exit after is a failure.
	confirmed atomic.Bool
}

func newSupervisor(data string, log *slog.Logger) *supervisor {
	s := &supervisor{data: data, log: log, failed: make(chan error, 16), forks: make(chan func())}
	// The forker: every child is forked from this goroutine, locked to its OS thread and never
	// unlocked, so that the thread lives as long as localrun. Linux sends a child's
	// parent-death signal (childAttr) when the thread that forked it exits, not the process;
	// os/exec forks from whatever thread runs the calling goroutine, and the Go runtime ends a
	// thread whose locked goroutine returns: a child forked from an ordinary goroutine could be
	// killed while localrun lives, or, from a thread that outlives no one, is never signalled
	// when it should. forks is never closed, so the goroutine never returns.
	go func() {
		runtime.LockOSThread()
		for start := range s.forks {
			start()
		}
	}()
	return s
}

// start starts cmd on the forker's thread (see newSupervisor), apart from any port
// reservation (forkMu). It returns once the child executes its program, or failed to.
func (s *supervisor) start(cmd *exec.Cmd) error {
	s.forkMu.Lock()
	defer s.forkMu.Unlock()
	done := make(chan error, 1)
	s.forks <- func() { done <- cmd.Start() }
	return <-done
}

// startOwned starts a process that listens on ports: it reserves them (replacing taken
// defaults), starts it with start, and waits until it listens on each. When another process
// took one of the ports meanwhile (a second `make run` starting at the same moment), the
// process cannot listen and exits, or another answers: it is stopped and started again on
// other ports, up to attempts times.
func (s *supervisor) startOwned(ctx context.Context, attempts int, ps []*port, start func() (*proc, error)) (*proc, error) {
	for attempt := 1; ; attempt++ {
		s.forkMu.Lock()
		release, err := reserveAll(ps)
		if err == nil {
			release()
		}
		s.forkMu.Unlock()
		if err != nil {
			return nil, err
		}
		p, err := start()
		if err != nil {
			return nil, err
		}
		for _, pt := range ps {
			if err = s.waitOwn(ctx, p, pt.port, pt.name); err != nil {
				break
			}
		}
		if err == nil {
			p.confirmed.Store(true)
			select {
			case <-p.done: // exited right after listening
				return nil, fmt.Errorf("%s exited; see %s", p.name, p.logPath)
			default:
			}
			return p, nil
		}
		s.stop([]*proc{p}, time.Second)
		if attempt >= attempts || ctx.Err() != nil {
			return nil, err
		}
		s.log.Warn("could not start on its ports; trying again", "process", p.name, "error", err)
	}
}

// startWith is start; when stdout is not nil it receives the process's standard output
// instead of the log file.
func (s *supervisor) startWith(name string, env []string, stdout io.Writer, argv ...string) (*proc, error) {
	logPath := filepath.Join(s.data, "logs", name+".log")
	f, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdout, cmd.Stderr = f, f
	if stdout != nil {
		cmd.Stdout = stdout
	}
	cmd.SysProcAttr = childAttr()
	if err := s.start(cmd); err != nil {
		f.Close()
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	p := &proc{name: name, cmd: cmd, logPath: logPath, done: make(chan struct{})}
	s.mu.Lock()
	s.procs = append(s.procs, p)
	s.mu.Unlock()
	go func() {
		err := cmd.Wait()
		f.Close()
		close(p.done)
		if !s.stopping.Load() && p.confirmed.Load() {
			s.failed <- fmt.Errorf("%s exited (%v); see %s", name, err, logPath)
		}
	}()
	s.log.Info("started", "process", name, "pid", cmd.Process.Pid)
	return p, nil
}

// stop sends SIGTERM to the process groups of ps at once, waits for them up to timeout, then
// kills what is left.
func (s *supervisor) stop(ps []*proc, timeout time.Duration) {
	s.mu.Lock()
	var todo []*proc
	for _, p := range ps {
		if p != nil && !p.stopped {
			p.stopped = true
			todo = append(todo, p)
		}
	}
	s.mu.Unlock()
	for _, p := range todo {
		_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGTERM)
	}
	deadline := time.After(timeout)
	for _, p := range todo {
		select {
		case <-p.done:
		case <-deadline:
			s.log.Warn("did not stop in time; killed", "process", p.name, "timeout", timeout)
			_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
			<-p.done
		}
		s.log.Info("stopped", "process", p.name)
	}
}

// remaining returns the processes not stopped yet, newest first.
func (s *supervisor) remaining() []*proc {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []*proc
	for i := len(s.procs) - 1; i >= 0; i-- {
		if !s.procs[i].stopped {
			out = append(out, s.procs[i])
		}
	}
	return out
}

// waitOwn waits until p listens on port, and fails when another process does: a port that
// answers is not enough, it must be the process this run started (a second `make run`, or a
// service of the machine, may listen on a port that was free a moment ago).
func (s *supervisor) waitOwn(ctx context.Context, p *proc, port int, what string) error {
	deadline := time.Now().Add(60 * time.Second)
	for {
		owner, err := listenerPIDs(port)
		if err != nil {
			return err
		}
		mine, others := false, false
		for _, pid := range owner {
			if pid == p.cmd.Process.Pid {
				mine = true
			} else {
				others = true
			}
		}
		switch {
		case mine:
			return nil
		case others:
			return fmt.Errorf("%s: port %d is held by another process (pid %v), not by this run's %s", what, port, owner, p.name)
		}
		select {
		case <-p.done:
			return fmt.Errorf("%s exited before listening on port %d; see %s", p.name, port, p.logPath)
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s does not listen on port %d after 60 s; see %s", p.name, port, p.logPath)
		}
	}
}

// listenerPIDs returns the processes holding a TCP socket that listens on port (any address),
// from /proc/net/tcp{,6} and /proc/*/fd. Processes of other users may be hidden: when a socket
// listens but no visible process holds it, the result holds -1.
func listenerPIDs(port int) ([]int, error) {
	inodes := map[string]bool{}
	for _, f := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		fh, err := os.Open(f)
		if err != nil {
			continue
		}
		sc := bufio.NewScanner(fh)
		for sc.Scan() {
			fs := strings.Fields(sc.Text())
			// sl local_address rem_address st tx:rx tr:when retrnsmt uid timeout inode
			if len(fs) < 10 || fs[3] != "0A" { // 0A: LISTEN
				continue
			}
			_, hexPort, ok := strings.Cut(fs[1], ":")
			if !ok {
				continue
			}
			if n, err := strconv.ParseUint(hexPort, 16, 16); err == nil && int(n) == port {
				inodes["socket:["+fs[9]+"]"] = true
			}
		}
		fh.Close()
	}
	if len(inodes) == 0 {
		return nil, nil
	}
	dirs, err := os.ReadDir("/proc")
	if err != nil {
		return nil, err
	}
	var pids []int
	for _, d := range dirs {
		pid, err := strconv.Atoi(d.Name())
		if err != nil {
			continue
		}
		fds, err := os.ReadDir(filepath.Join("/proc", d.Name(), "fd"))
		if err != nil {
			continue
		}
		for _, fd := range fds {
			if l, err := os.Readlink(filepath.Join("/proc", d.Name(), "fd", fd.Name())); err == nil && inodes[l] {
				pids = append(pids, pid)
				break
			}
		}
	}
	if len(pids) == 0 {
		pids = []int{-1}
	}
	return pids, nil
}
