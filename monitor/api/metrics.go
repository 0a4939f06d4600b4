package api

import (
	"errors"
	"net/http"
	"strconv"

	"github.com/prometheus/client_golang/prometheus"
)

// metrics are the API's own Prometheus metrics.
type metrics struct {
	requests *prometheus.CounterVec
	logins   *prometheus.CounterVec
}

func newMetrics(reg prometheus.Registerer, hub *Hub) *metrics {
	m := &metrics{
		requests: register(reg, prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "trenzinho_monitor_http_requests_total",
			Help: "HTTP requests answered, by route pattern and status code.",
		}, []string{"route", "code"})),
		logins: register(reg, prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "trenzinho_monitor_logins_total",
			Help: "Login attempts, by result (ok, failed, throttled).",
		}, []string{"result"})),
	}
	register(reg, prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "trenzinho_monitor_stream_clients",
		Help: "Open event streams.",
	}, func() float64 { return float64(hub.Clients()) }))
	register(reg, prometheus.NewCounterFunc(prometheus.CounterOpts{
		Name: "trenzinho_monitor_stream_dropped_total",
		Help: "Event stream clients dropped for falling behind.",
	}, func() float64 { return float64(hub.Dropped()) }))
	return m
}

// register registers c with reg, or returns the collector already registered in its place (a
// second Server on the same registry shares the counters).
func register[C prometheus.Collector](reg prometheus.Registerer, c C) C {
	if err := reg.Register(c); err != nil {
		var are prometheus.AlreadyRegisteredError
		if errors.As(err, &are) {
			if existing, ok := are.ExistingCollector.(C); ok {
				return existing
			}
		}
		panic("api: register metric: " + err.Error())
	}
	return c
}

// instrument counts the requests next answers, by the route pattern that matched.
func (m *metrics) instrument(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sw := &statusWriter{ResponseWriter: w}
		next.ServeHTTP(sw, r)
		// The muxes set r.Pattern on this very request as they route it.
		route := r.Pattern
		if route == "" {
			route = "unmatched"
		}
		code := sw.status
		if code == 0 {
			code = http.StatusOK
		}
		m.requests.WithLabelValues(route, strconv.Itoa(code)).Inc()
	})
}

// statusWriter records the status of a response. Unwrap lets http.ResponseController reach the
// connection's Flush and SetWriteDeadline.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
