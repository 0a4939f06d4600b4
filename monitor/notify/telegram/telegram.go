// Package telegram sends notifications through the Telegram Bot API
// (https://core.telegram.org/bots/api): sendMessage with the alert as HTML, then sendLocation
// with where it happened.
package telegram

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/trenzinho/trenzinho/monitor/notify"
)

// DefaultBaseURL is the Bot API's address.
const DefaultBaseURL = "https://api.telegram.org"

// maxText is the Bot API's limit on a message's text (after entity parsing), in characters.
const maxText = 4096

// maxResponse bounds what is read of a reply: the API's replies here are a few hundred bytes.
const maxResponse = 1 << 20

// Client is a bot. The address it sends to is a chat id: the user's numeric id (the user must
// have started a conversation with the bot) or a group's (negative) id.
type Client struct {
	// BaseURL is the Bot API's address; DefaultBaseURL when empty (a local Bot API server or
	// a proxy otherwise).
	BaseURL string
	Token   string
	// HTTP is the client; one with a 30 s timeout when nil.
	HTTP *http.Client
	// NoLocation leaves sendLocation out.
	NoLocation bool
}

var defaultHTTP = &http.Client{Timeout: 30 * time.Second}

// Send sends m to the chat: its subject in bold and its text, and then its place as a
// location (a map pin the inspector can navigate to).
func (c *Client) Send(ctx context.Context, chatID string, m notify.Message) error {
	chat, err := parseChat(chatID)
	if err != nil {
		return notify.Permanent(err)
	}
	text := "<b>" + html.EscapeString(m.Subject) + "</b>\n\n" + html.EscapeString(m.Text)
	if r := []rune(text); len(r) > maxText {
		text = string(r[:maxText-1]) + "…"
	}
	err = c.call(ctx, "sendMessage", map[string]any{
		"chat_id": chat, "text": text, "parse_mode": "HTML",
		"link_preview_options": map[string]any{"is_disabled": true},
	})
	if err != nil || !m.HasPlace || c.NoLocation {
		return err
	}
	// The message went: a failed pin is not worth sending the message again, so it is only
	// reported as permanent (the dispatcher would otherwise retry the whole message).
	if err := c.call(ctx, "sendLocation", map[string]any{"chat_id": chat, "latitude": m.Lat, "longitude": m.Lon}); err != nil {
		return notify.Permanent(fmt.Errorf("message sent, location not: %w", err))
	}
	return nil
}

// parseChat: a numeric id is sent as a number, "@channelusername" as a string.
func parseChat(s string) (any, error) {
	s = strings.TrimSpace(s)
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		return n, nil
	}
	if len(s) > 1 && s[0] == '@' {
		return s, nil
	}
	return nil, fmt.Errorf("telegram chat id %q: want a number or @username", s)
}

// reply is the Bot API's answer: {"ok":true,"result":…} or {"ok":false,"error_code":429,
// "description":"…","parameters":{"retry_after":7}}.
type reply struct {
	OK          bool   `json:"ok"`
	ErrorCode   int    `json:"error_code"`
	Description string `json:"description"`
	Parameters  *struct {
		RetryAfter int `json:"retry_after"`
	} `json:"parameters"`
}

// call posts one method. Errors never carry the URL: it holds the bot's token.
func (c *Client) call(ctx context.Context, method string, args map[string]any) error {
	body, err := json.Marshal(args)
	if err != nil {
		return notify.Permanent(err)
	}
	base := c.BaseURL
	if base == "" {
		base = DefaultBaseURL
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, strings.TrimRight(base, "/")+"/bot"+c.Token+"/"+method, bytes.NewReader(body))
	if err != nil {
		return notify.Permanent(fmt.Errorf("telegram %s: %w", method, c.redact(err)))
	}
	req.Header.Set("Content-Type", "application/json")
	hc := c.HTTP
	if hc == nil {
		hc = defaultHTTP
	}
	resp, err := hc.Do(req)
	if err != nil {
		err = fmt.Errorf("telegram %s: %w", method, c.redact(err))
		if ctx.Err() != nil && errors.Is(ctx.Err(), context.Canceled) {
			return err
		}
		return notify.Transient(err, 0)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxResponse))
	if err != nil {
		return notify.Transient(fmt.Errorf("telegram %s: reading the reply: %w", method, c.redact(err)), 0)
	}
	var r reply
	if err := json.Unmarshal(raw, &r); err != nil && resp.StatusCode == http.StatusOK {
		return notify.Transient(fmt.Errorf("telegram %s: reply is not JSON: %w", method, err), 0)
	}
	if resp.StatusCode == http.StatusOK && r.OK {
		return nil
	}
	code := r.ErrorCode
	if code == 0 {
		code = resp.StatusCode
	}
	err = fmt.Errorf("telegram %s: %d %s", method, code, r.Description)
	switch {
	case code == http.StatusTooManyRequests:
		var after time.Duration
		if r.Parameters != nil {
			after = time.Duration(r.Parameters.RetryAfter) * time.Second
		}
		return notify.Transient(err, after)
	case code >= 500:
		return notify.Transient(err, 0)
	}
	return notify.Permanent(err) // 400 chat not found, 401 bad token, 403 the user blocked the bot
}

// redact removes the token from an error's text (net/http puts the URL in its errors).
func (c *Client) redact(err error) error {
	if c.Token == "" || !strings.Contains(err.Error(), c.Token) {
		return err
	}
	return errors.New(strings.ReplaceAll(err.Error(), c.Token, "<token>"))
}
