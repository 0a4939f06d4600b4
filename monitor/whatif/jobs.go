package whatif

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"
)

// Jobs runs replays in the background for the monitor's dashboard and portal: one at a time
// per installation, each in a directory of its own under Dir (its isolated stores and its
// report), never touching the live database. A run's status and report are kept, in memory
// and in its directory (job.json, report.json, the CSV files and the PDF), for download until
// the run is among the oldest beyond MaxKept; a monitor restarted finds them again.
type Jobs struct {
	cfg JobsConfig

	mu      sync.Mutex
	jobs    []*Job // by start
	running *Job
	wg      sync.WaitGroup
	closed  bool
}

// JobsConfig configures Jobs.
type JobsConfig struct {
	// Dir holds one directory per run (TRENZINHO_WHATIF_DIR).
	Dir     string
	Archive *Influx
	// Workers and Window are the replay's (Config.Workers, Config.Window).
	Workers int
	Window  time.Duration
	// MaxKept is how many finished runs are kept (default 20); the oldest beyond are removed
	// with their directories.
	MaxKept int
	Logger  *slog.Logger
	Now     func() time.Time // default time.Now
}

// JobSpec is what a run replays.
type JobSpec struct {
	From, To time.Time // [From, To)
	InForce  Side
	Proposed Side
	// Vehicles and Licensee scope the run (Config.Vehicles, Config.Licensee).
	Vehicles []string
	Licensee string
	// User is who started the run.
	User string
	// Proposal describes the proposal for the status (pt-BR; default: the proposed profile's
	// id and version).
	Proposal string
}

// Job states.
const (
	JobRunning  = "running"
	JobDone     = "done"
	JobFailed   = "failed"
	JobCanceled = "canceled"
)

// ErrBusy is Start's answer while another run is in progress.
var ErrBusy = errors.New("whatif: a replay is already running")

// ErrNotRunning is Cancel's answer for a run that has ended.
var ErrNotRunning = errors.New("whatif: the replay is not running")

// Job is one background replay.
type Job struct {
	dir    string
	cancel context.CancelFunc
	done   chan struct{}

	mu     sync.Mutex
	status JobStatus
}

// JobStatus is a run as the API states it.
type JobStatus struct {
	ID       string    `json:"id"`
	User     string    `json:"user"`
	Licensee string    `json:"licensee,omitempty"`
	From     string    `json:"from"` // AAAA-MM-DD, the first day
	To       string    `json:"to"`   // the last day, included
	State    string    `json:"state"`
	Started  time.Time `json:"started"`
	Finished time.Time `json:"finished,omitzero"`
	// Progress: windows (vehicle × day) replayed of Total, the readings judged, and the
	// expected end from the rate so far (zero until a window is done).
	Done     int       `json:"done"`
	Total    int       `json:"total"`
	Percent  float64   `json:"percent"`
	Readings int64     `json:"readings"`
	ETA      time.Time `json:"eta,omitzero"`
	// Error is why the run failed (pt-BR for the page, with the cause).
	Error string `json:"error,omitempty"`
	// InForce is the profile in force's id and version, Proposed what is proposed (JobSpec.
	// Proposal).
	InForce  string `json:"in_force"`
	Proposed string `json:"proposed"`
}

// NewJobs returns the runner, with the runs kept in Dir by an earlier monitor: a run that was
// in progress when that monitor stopped is failed as interrupted.
func NewJobs(cfg JobsConfig) (*Jobs, error) {
	if cfg.Dir == "" {
		return nil, errors.New("whatif: no directory for the runs")
	}
	if cfg.MaxKept <= 0 {
		cfg.MaxKept = 20
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if err := os.MkdirAll(cfg.Dir, 0o750); err != nil {
		return nil, fmt.Errorf("whatif: %w", err)
	}
	js := &Jobs{cfg: cfg}
	ents, err := os.ReadDir(cfg.Dir)
	if err != nil {
		return nil, fmt.Errorf("whatif: %w", err)
	}
	for _, e := range ents {
		if !e.IsDir() {
			continue
		}
		dir := filepath.Join(cfg.Dir, e.Name())
		b, err := os.ReadFile(filepath.Join(dir, jobFile))
		if err != nil {
			continue // not a run's directory
		}
		var st JobStatus
		if err := json.Unmarshal(b, &st); err != nil || st.ID != e.Name() {
			cfg.Logger.Warn("whatif: unreadable run, ignored", "dir", dir, "err", err)
			continue
		}
		j := &Job{dir: dir, done: make(chan struct{}), status: st}
		close(j.done)
		if st.State == JobRunning {
			j.status.State, j.status.Error = JobFailed, "interrompida: o monitor parou durante a simulação"
			j.save(cfg.Logger)
		}
		js.jobs = append(js.jobs, j)
	}
	slices.SortFunc(js.jobs, func(a, b *Job) int {
		return cmp.Or(a.status.Started.Compare(b.status.Started), cmp.Compare(a.status.ID, b.status.ID))
	})
	return js, nil
}

// Files a run keeps besides its CSV files and PDF.
const (
	jobFile    = "job.json"
	reportFile = "report.json"
)

// Start begins a run in the background. It fails with ErrBusy (wrapped, with the running
// run's status: BusyError) while another runs.
func (js *Jobs) Start(spec JobSpec) (*Job, error) {
	if !spec.From.Before(spec.To) {
		return nil, fmt.Errorf("whatif: empty period")
	}
	if spec.InForce.Profile == nil || spec.Proposed.Profile == nil {
		return nil, errors.New("whatif: both profiles are needed")
	}
	js.mu.Lock()
	defer js.mu.Unlock()
	if js.closed {
		return nil, errors.New("whatif: closed")
	}
	if js.running != nil {
		return nil, &BusyError{Running: js.running.Status()}
	}
	var b [12]byte
	_, _ = rand.Read(b[:])
	id := hex.EncodeToString(b[:])
	dir := filepath.Join(js.cfg.Dir, id)
	if err := os.Mkdir(dir, 0o750); err != nil {
		return nil, fmt.Errorf("whatif: %w", err)
	}
	loc := spec.InForce.Profile.Location()
	ctx, cancel := context.WithCancel(context.Background())
	j := &Job{dir: dir, cancel: cancel, done: make(chan struct{}), status: JobStatus{
		ID: id, User: spec.User, Licensee: spec.Licensee, State: JobRunning, Started: js.cfg.Now(),
		From: spec.From.In(loc).Format(time.DateOnly), To: spec.To.Add(-time.Nanosecond).In(loc).Format(time.DateOnly),
		InForce:  spec.InForce.Profile.ID + " " + spec.InForce.Profile.Version,
		Proposed: cmp.Or(spec.Proposal, spec.Proposed.Profile.ID+" "+spec.Proposed.Profile.Version),
	}}
	j.save(js.cfg.Logger)
	js.jobs = append(js.jobs, j)
	js.running = j
	js.wg.Add(1)
	go func() {
		defer js.wg.Done()
		js.run(ctx, j, spec)
	}()
	return j, nil
}

// BusyError is ErrBusy with the run in progress.
type BusyError struct{ Running JobStatus }

func (e *BusyError) Error() string { return ErrBusy.Error() + " (" + e.Running.ID + ")" }

// Unwrap makes errors.Is(err, ErrBusy) true.
func (e *BusyError) Unwrap() error { return ErrBusy }

func (js *Jobs) run(ctx context.Context, j *Job, spec JobSpec) {
	log := js.cfg.Logger.With("run", j.status.ID, "user", spec.User)
	log.Info("whatif: replay started", "from", j.status.From, "to", j.status.To, "licensee", spec.Licensee, "proposed", j.status.Proposed)
	cfg := Config{Archive: js.cfg.Archive, From: spec.From, To: spec.To, InForce: spec.InForce, Proposed: spec.Proposed,
		Dir: filepath.Join(j.dir, "stores"), Workers: js.cfg.Workers, Window: js.cfg.Window, Vehicles: spec.Vehicles,
		Licensee: spec.Licensee, Logger: log,
		Progress: func(p Progress) {
			j.mu.Lock()
			j.status.Done, j.status.Total, j.status.Readings, j.status.ETA = p.Done, p.Total, p.Readings, p.ETA
			j.status.Percent = 100 * float64(p.Done) / float64(max(1, p.Total))
			j.mu.Unlock()
		}}
	err := js.replay(ctx, cfg, j.dir)
	j.mu.Lock()
	j.status.Finished = js.cfg.Now()
	j.status.ETA = time.Time{}
	switch {
	case err == nil:
		j.status.State, j.status.Percent = JobDone, 100
	case ctx.Err() != nil:
		j.status.State = JobCanceled
	default:
		j.status.State, j.status.Error = JobFailed, "a simulação falhou: "+err.Error()
	}
	state := j.status.State
	j.mu.Unlock()
	if state != JobDone {
		// A partial replay is no report: its stores go.
		if rmErr := os.RemoveAll(filepath.Join(j.dir, "stores")); rmErr != nil {
			log.Warn("whatif: remove the stores of an unfinished run", "err", rmErr)
		}
	}
	j.save(log)
	log.Info("whatif: replay ended", "state", state, "err", err)
	js.mu.Lock()
	js.running = nil
	js.prune()
	js.mu.Unlock()
	close(j.done)
}

// replay runs the replay and writes its report into dir.
func (js *Jobs) replay(ctx context.Context, cfg Config, dir string) error {
	if cfg.Vehicles != nil && len(cfg.Vehicles) == 0 {
		return errors.New("nenhum veículo a simular")
	}
	res, err := Run(ctx, cfg)
	if err != nil {
		return err
	}
	if err := res.WriteCSV(dir); err != nil {
		return err
	}
	if err := res.WritePDF(filepath.Join(dir, PDFFile)); err != nil {
		return err
	}
	b, err := json.Marshal(res.Report())
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, reportFile), b, 0o640)
}

// prune removes the oldest finished runs beyond MaxKept. Called with js.mu held.
func (js *Jobs) prune() {
	for len(js.jobs) > js.cfg.MaxKept {
		k := slices.IndexFunc(js.jobs, func(j *Job) bool { return j != js.running })
		if k < 0 {
			return
		}
		old := js.jobs[k]
		js.jobs = slices.Delete(js.jobs, k, k+1)
		if err := os.RemoveAll(old.dir); err != nil {
			js.cfg.Logger.Warn("whatif: remove an old run", "dir", old.dir, "err", err)
		}
	}
}

// Job returns the run of an id.
func (js *Jobs) Job(id string) (*Job, bool) {
	js.mu.Lock()
	defer js.mu.Unlock()
	for _, j := range js.jobs {
		if j.status.ID == id {
			return j, true
		}
	}
	return nil, false
}

// List returns the runs, the newest first.
func (js *Jobs) List() []*Job {
	js.mu.Lock()
	defer js.mu.Unlock()
	out := slices.Clone(js.jobs)
	slices.Reverse(out)
	return out
}

// Close cancels the run in progress and waits for it to end.
func (js *Jobs) Close() {
	js.mu.Lock()
	js.closed = true
	if js.running != nil {
		js.running.cancel()
	}
	js.mu.Unlock()
	js.wg.Wait()
}

// Status is the run's status now.
func (j *Job) Status() JobStatus {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.status
}

// Done is closed when the run has ended (done, failed or canceled).
func (j *Job) Done() <-chan struct{} { return j.done }

// Cancel stops the run; its record stays, canceled, without a report.
func (j *Job) Cancel() error {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.status.State != JobRunning || j.cancel == nil {
		return ErrNotRunning
	}
	j.cancel()
	return nil
}

// Report reads the finished run's report (report.json).
func (j *Job) Report() ([]byte, error) {
	if st := j.Status(); st.State != JobDone {
		return nil, fmt.Errorf("whatif: run %s is %s", st.ID, st.State)
	}
	return os.ReadFile(filepath.Join(j.dir, reportFile))
}

// File is the path of one of the finished run's downloads (CSVFiles, PDFFile); false for any
// other name or a run without a report.
func (j *Job) File(name string) (string, bool) {
	if j.Status().State != JobDone || (name != PDFFile && !slices.Contains(CSVFiles, name)) {
		return "", false
	}
	return filepath.Join(j.dir, name), true
}

func (j *Job) save(log *slog.Logger) {
	b, err := json.Marshal(j.Status())
	if err == nil {
		err = os.WriteFile(filepath.Join(j.dir, jobFile), b, 0o640)
	}
	if err != nil {
		log.Warn("whatif: save the run's status", "dir", j.dir, "err", err)
	}
}
