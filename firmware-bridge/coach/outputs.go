package coach

import (
	"context"
	"log/slog"
	"time"
)

// Line is an output line of the Pi (firmware-bridge/gpio): the buzzer, the LED, the volume
// limiter's relay.
type Line interface {
	Set(on bool) error
}

// Pattern is how the buzzer and the LED say a kind of warning: on and off durations, in turn,
// starting with on.
type Pattern []time.Duration

// Patterns per kind (docs/bridge.md, "Driver's coach"): the more urgent, the faster.
var Patterns = map[Kind]Pattern{
	KindSpeedOver: repeatPattern(6, 100*time.Millisecond, 100*time.Millisecond), // six fast beeps
	KindSiteSound: repeatPattern(3, 400*time.Millisecond, 200*time.Millisecond), // three long
	KindItinerary: repeatPattern(2, 250*time.Millisecond, 250*time.Millisecond), // two medium
	KindSpeedNear: {150 * time.Millisecond},                                     // one short
	KindHoursEnd:  {800 * time.Millisecond},                                     // one long
	KindDocument:  {800 * time.Millisecond},
}

func repeatPattern(n int, on, off time.Duration) Pattern {
	p := make(Pattern, 0, 2*n)
	for range n {
		p = append(p, on, off)
	}
	return p[:len(p)-1]
}

// Outputs drive the buzzer and the LED for each warning, and the volume limiter's relay while
// the coach says so. Any line may be nil (not wired).
type Outputs struct {
	Buzzer, LED Line
	// Limiter is the volume limiter's relay: active (energised) lowers the sound system. It is
	// driven only when the bundle turns the limiter on (State.Limiter), and left inactive —
	// the sound system untouched — when the bridge stops or fails (docs/bridge.md).
	Limiter Line
	Logger  *slog.Logger

	warn chan Kind
}

// Warn queues the pattern of a warning without waiting; one already queued of the same
// moment is enough (a burst of warnings plays the first few).
func (o *Outputs) Warn(w Warning) {
	if o.warn == nil {
		return
	}
	select {
	case o.warn <- w.Kind:
	default:
	}
}

// Start makes Warn effective; Run plays what Warn queued.
func (o *Outputs) Start() {
	o.warn = make(chan Kind, 4)
}

// Run plays the warnings' patterns and follows the limiter state (polled every every) until ctx
// is done; it leaves every line inactive.
func (o *Outputs) Run(ctx context.Context, state func() State, every time.Duration) {
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.warn == nil {
		o.Start()
	}
	if every <= 0 {
		every = 250 * time.Millisecond
	}
	tick := time.NewTicker(every)
	defer tick.Stop()
	limiter := false
	defer func() {
		o.set(o.Buzzer, false)
		o.set(o.LED, false)
		o.set(o.Limiter, false)
	}()
	for {
		select {
		case <-ctx.Done():
			return
		case k := <-o.warn:
			o.play(ctx, Patterns[k])
		case <-tick.C:
			if o.Limiter == nil {
				continue
			}
			if on := state().Limiter; on != limiter {
				limiter = on
				o.set(o.Limiter, on)
				o.Logger.Info("volume limiter", "on", on)
			}
		}
	}
}

// play drives the buzzer and the LED through a pattern.
func (o *Outputs) play(ctx context.Context, p Pattern) {
	on := true
	for _, d := range p {
		o.set(o.Buzzer, on)
		o.set(o.LED, on)
		select {
		case <-ctx.Done():
			return
		case <-time.After(d):
		}
		on = !on
	}
	o.set(o.Buzzer, false)
	o.set(o.LED, false)
}

func (o *Outputs) set(l Line, on bool) {
	if l == nil {
		return
	}
	if err := l.Set(on); err != nil {
		o.Logger.Warn("coach output", "err", err)
	}
}
