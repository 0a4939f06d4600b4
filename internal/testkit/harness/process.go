package harness

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Command is what Start runs.
type Command struct {
	Name    string   // for messages
	LogFile string   // receives the output, appended to across restarts
	Argv    []string // Argv[0] is a path
	Env     []string // added to this process's environment
	// Pipes connects the child's standard input and output to Stdin and Stdout; its standard
	// error still goes to Log.
	Pipes bool
}

// Process is a child process in its own process group, killed with the process that started it
// (Pdeathsig). It can be stopped and started again with the same command line.
type Process struct {
	Command

	mu     sync.Mutex
	cmd    *exec.Cmd
	done   chan struct{}
	stdin  io.WriteCloser
	stdout io.Reader
}

// Start starts c.
func Start(c Command) (*Process, error) {
	p := &Process{Command: c}
	if err := p.Start(); err != nil {
		return nil, err
	}
	return p, nil
}

// Start starts the process (again, once it was stopped or killed).
func (p *Process) Start() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cmd != nil {
		return fmt.Errorf("%s already running", p.Name)
	}
	f, err := os.OpenFile(p.LogFile, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	cmd := exec.Command(p.Argv[0], p.Argv[1:]...)
	cmd.Env = append(os.Environ(), p.Env...)
	cmd.Stderr = f
	var stdin io.WriteCloser
	var stdout io.Reader
	if p.Pipes {
		if stdin, err = cmd.StdinPipe(); err == nil {
			stdout, err = cmd.StdoutPipe()
		}
		if err != nil {
			f.Close()
			return err
		}
	} else {
		cmd.Stdout = f
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		f.Close()
		return fmt.Errorf("start %s: %w", p.Name, err)
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); f.Close(); close(done) }()
	p.cmd, p.done, p.stdin, p.stdout = cmd, done, stdin, stdout
	return nil
}

// Pid is the process id of the running process (0 when it is not running).
func (p *Process) Pid() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cmd == nil {
		return 0
	}
	return p.cmd.Process.Pid
}

// Stdin and Stdout are the pipes of a Command with Pipes.
func (p *Process) Stdin() io.Writer { p.mu.Lock(); defer p.mu.Unlock(); return p.stdin }

// Stdout: see Stdin.
func (p *Process) Stdout() io.Reader { p.mu.Lock(); defer p.mu.Unlock(); return p.stdout }

// Done is closed when the running process exits (nil when it was never started or was stopped).
func (p *Process) Done() <-chan struct{} { p.mu.Lock(); defer p.mu.Unlock(); return p.done }

// Running reports whether the process was started and has not exited.
func (p *Process) Running() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cmd == nil {
		return false
	}
	select {
	case <-p.done:
		return false
	default:
		return true
	}
}

// Terminate asks the process to stop — SIGTERM to its group, or closing the standard input of a
// Command with Pipes — waits for it, and kills the group after wait.
func (p *Process) Terminate(wait time.Duration) {
	p.end(syscall.SIGTERM, wait)
}

// Stop sends SIGTERM and waits for the process to exit (SIGKILL after 30 s).
func (p *Process) Stop() { p.Terminate(30 * time.Second) }

// Kill sends SIGKILL to the process group and waits.
func (p *Process) Kill() { p.end(syscall.SIGKILL, 10*time.Second) }

func (p *Process) end(sig syscall.Signal, wait time.Duration) {
	p.mu.Lock()
	cmd, done, stdin := p.cmd, p.done, p.stdin
	p.cmd = nil
	p.mu.Unlock()
	if cmd == nil {
		return
	}
	if stdin != nil && sig == syscall.SIGTERM {
		stdin.Close()
	} else {
		syscall.Kill(-cmd.Process.Pid, sig)
	}
	select {
	case <-done:
	case <-time.After(wait):
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-done
	}
}

// Log returns what the process printed so far.
func (p *Process) Log() string {
	b, _ := os.ReadFile(p.LogFile)
	return string(b)
}

// Tail returns at most the last n bytes of the output, "…" first when it cut.
func (p *Process) Tail(n int) string {
	s := p.Log()
	if len(s) > n {
		return "…" + strings.TrimSpace(s[len(s)-n:])
	}
	return strings.TrimSpace(s)
}
