package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/trenzinho/trenzinho/config"
	"github.com/trenzinho/trenzinho/firmware-bridge/coach"
	"github.com/trenzinho/trenzinho/firmware-bridge/gpio"
)

// coachFlags configure the driver's coach (docs/bridge.md, "Driver's coach").
type coachFlags struct {
	on                      bool
	listen, token           string
	buzzer, led, limiter    string
	buzzerLow, ledLow, relL bool
}

func (f *coachFlags) bind(b *config.Binder) {
	b.Bool(&f.on, "TRENZINHO_COACH", true, "run the driver's coach (it warns once a configuration bundle is in force)")
	b.String(&f.listen, "TRENZINHO_COACH_LISTEN", "127.0.0.1:8088", "address of the coach's local status page (empty: off); any address but loopback needs TRENZINHO_COACH_TOKEN")
	b.String(&f.token, "TRENZINHO_COACH_TOKEN", "", "token a browser that is not on the Pi gives once as ?token= to see the status page")
	b.String(&f.buzzer, "TRENZINHO_BUZZER_GPIO", "", "the buzzer's output: /dev/gpiochipN:LINE, or a value file such as /sys/class/gpio/gpio22/value (empty: none)")
	b.String(&f.led, "TRENZINHO_LED_GPIO", "", "the warning LED's output, as TRENZINHO_BUZZER_GPIO (empty: none)")
	b.String(&f.limiter, "TRENZINHO_LIMITER_GPIO", "", "the volume limiter's relay, as TRENZINHO_BUZZER_GPIO (empty: none; it acts only when the configuration bundle turns it on)")
	b.Bool(&f.buzzerLow, "TRENZINHO_BUZZER_ACTIVE_LOW", false, "the buzzer sounds when its line is low")
	b.Bool(&f.ledLow, "TRENZINHO_LED_ACTIVE_LOW", false, "the LED lights when its line is low")
	b.Bool(&f.relL, "TRENZINHO_LIMITER_ACTIVE_LOW", false, "the relay is energised when its line is low")
}

// check refuses a status page open beyond the Pi without a token.
func (f *coachFlags) check() error {
	if !f.on || f.listen == "" || f.token != "" {
		return nil
	}
	host, _, err := net.SplitHostPort(f.listen)
	if err != nil {
		return fmt.Errorf("TRENZINHO_COACH_LISTEN %q: %w", f.listen, err)
	}
	if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return fmt.Errorf("TRENZINHO_COACH_LISTEN %q is not loopback: set TRENZINHO_COACH_TOKEN", f.listen)
	}
	return nil
}

// startCoach builds the coach and starts its goroutines (evaluation, outputs, status page);
// emit receives every warning besides the outputs. The returned stop waits for them after ctx
// is done. A nil coach: the coach is off.
func (f *coachFlags) start(ctx context.Context, log *slog.Logger, vehicle string, emit func(coach.Warning)) (*coach.Coach, func(), error) {
	if !f.on {
		return nil, func() {}, nil
	}
	if err := f.check(); err != nil {
		return nil, nil, err
	}
	out := &coach.Outputs{Logger: log}
	var opened []gpio.Line
	for _, l := range []struct {
		spec string
		low  bool
		dst  *coach.Line
		name string
	}{{f.buzzer, f.buzzerLow, &out.Buzzer, "buzzer"}, {f.led, f.ledLow, &out.LED, "led"}, {f.limiter, f.relL, &out.Limiter, "limiter"}} {
		if l.spec == "" {
			continue
		}
		line, err := gpio.Open(l.spec, l.low, "trenzinho-"+l.name)
		if err != nil {
			for _, o := range opened {
				o.Close()
			}
			return nil, nil, fmt.Errorf("coach %s: %w", l.name, err)
		}
		opened = append(opened, line)
		*l.dst = line
	}
	out.Start()
	co := coach.New(coach.Options{Vehicle: vehicle, Logger: log.With("component", "coach"), Emit: func(w coach.Warning) {
		out.Warn(w)
		log.Info("driver warned", "kind", w.Kind, "rule", w.Rule, "site", w.Site, "distance_m", w.DistanceM, "value", w.Value, "limit", w.Limit)
		if emit != nil {
			emit(w)
		}
	}})
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); co.Run(ctx.Done()) }()
	go func() {
		defer wg.Done()
		out.Run(ctx, co.State, 0)
		for _, o := range opened {
			o.Close() // released: inactive, the sound system untouched
		}
	}()
	if f.listen != "" {
		// A page that cannot listen (the port taken) never stops the telemetry: the bridge
		// runs on without it.
		ln, err := net.Listen("tcp", f.listen)
		if err != nil {
			log.Error("coach status page not served", "err", err)
			return co, wg.Wait, nil
		}
		srv := &http.Server{Handler: coach.Page(co, f.token), ReadHeaderTimeout: 5 * time.Second,
			ReadTimeout: 10 * time.Second, WriteTimeout: 10 * time.Second, MaxHeaderBytes: 8 << 10}
		log.Info("coach status page", "url", "http://"+ln.Addr().String()+"/")
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
				log.Error("coach status page", "err", err)
			}
		}()
		context.AfterFunc(ctx, func() { srv.Close() })
	}
	return co, wg.Wait, nil
}
