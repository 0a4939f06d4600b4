// Package notify tells people about alerts where they are: it builds the Portuguese message of
// an alert (Compose), routes it to the users whose preferences match or who are on duty
// (Dispatcher), groups bursts, retries transient failures and keeps what could not be delivered
// (DeadLetter). Each channel (e-mail, Telegram, Web Push) is a subpackage behind Channel.
//
// A message names the rule, the vehicle, the place and the time, and links to the episode on
// the dashboard: never a driver, a CPF, a card or any other personal data, which stays in the
// dashboard behind a login (LGPD; docs/operations.md §11).
package notify

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// Channel delivers a message to one address of its own kind: an e-mail address, a Telegram
// chat id, a Web Push subscription. Send returns an error classified with Transient or
// Permanent; an unclassified error counts as transient (a network failure is the usual cause).
type Channel interface {
	Send(ctx context.Context, to string, m Message) error
}

// Message is what a channel sends: one alert, or the first of a burst with the others listed.
type Message struct {
	Subject string // one line, for an e-mail subject or a notification title
	Text    string // plain text, for e-mail and Telegram
	HTML    string // the same as HTML, for e-mail
	Link    string // the episode on the dashboard
	// Lat and Lon are where the first alert happened (HasPlace false when unknown), for a
	// Telegram location.
	Lat, Lon float64
	HasPlace bool
	// Tag identifies the episode, so that a push for the same episode replaces the earlier one.
	Tag string
	// Count is the number of alerts the message covers (1 + the ones grouped with it).
	Count int
}

// Error is a classified delivery failure.
type Error struct {
	Err       error
	Transient bool
	// RetryAfter is the wait the remote side asked for (Telegram's retry_after, HTTP
	// Retry-After); zero when it asked for none.
	RetryAfter time.Duration
}

func (e *Error) Error() string {
	kind := "permanent"
	if e.Transient {
		kind = "transient"
	}
	return fmt.Sprintf("%s: %v", kind, e.Err)
}

func (e *Error) Unwrap() error { return e.Err }

// Transient marks err as worth retrying, after at least retryAfter when it is not zero.
func Transient(err error, retryAfter time.Duration) error {
	return &Error{Err: err, Transient: true, RetryAfter: retryAfter}
}

// Permanent marks err as not worth retrying: a refused address, bad credentials, a gone
// subscription.
func Permanent(err error) error { return &Error{Err: err} }

// Classify reports whether err is worth retrying and how long the remote side asked to wait.
// A context cancellation is not transient: the monitor is stopping.
func Classify(err error) (transient bool, retryAfter time.Duration) {
	var e *Error
	if errors.As(err, &e) {
		return e.Transient, e.RetryAfter
	}
	if errors.Is(err, context.Canceled) {
		return false, 0
	}
	return true, 0
}

func jsonUnmarshal(s string, v any) error { return json.Unmarshal([]byte(s), v) }
