package main

// The monitor's clock. Everything the monitor dates by the wall clock — receipt times, drafts,
// issue and notification dates, deadlines, sessions, the audit — reads the one clock that
// serve passes down, never time.Now directly, so that a test can run the whole monitor at
// another hour of another day (Sunday 23:30 in Piúma, a holiday, New Year's Eve) and see
// every date agree.
//
// A production build has only the real clock (clock_real.go). The fake one (clock_fake.go) is
// compiled in only with the build tag fakeclock, which the end-to-end tests use: a monitor that
// signs autos must never be able to date them by a setting.

// fakeNowEnv names the variable that sets a fakeclock build's clock: an RFC 3339 instant, the
// monitor's time at its start, from which its clock advances as the real one does.
const fakeNowEnv = "TRENZINHO_FAKE_NOW"
