package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"time"
)

var client = &http.Client{Timeout: 5 * time.Second}

// waitHTTP waits until GET u answers 2xx, the process serving it has exited (exited is closed;
// nil: no process to watch), or timeout has passed. The timeout is the bound of a process that
// lives but never answers: a server starting on a loaded machine may take long (influxd
// initialises Flux for tens of seconds of CPU before it listens), and one that failed says so
// at once by exiting.
func waitHTTP(ctx context.Context, u string, exited <-chan struct{}, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		resp, err := client.Get(u)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode < 300 {
				return nil
			}
			err = fmt.Errorf("%s", resp.Status)
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s not ready after %v: %v", u, timeout, err)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-exited:
			return fmt.Errorf("%s: the process exited before it answered (%v)", u, err)
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// startupTimeout bounds the wait for a child that lives but does not answer yet.
const startupTimeout = 5 * time.Minute

// waitVehiclesLive logs in to the dashboard's API as an inspector would and waits until it shows
// n vehicles online (readings received and judged), at most timeout. It reports whether they were.
func waitVehiclesLive(ctx context.Context, base, user, password string, n int, timeout time.Duration) bool {
	deadline := time.Now().Add(timeout)
	token := ""
	for time.Now().Before(deadline) && ctx.Err() == nil {
		if token == "" {
			token, _ = login(base, user, password)
		}
		if token != "" && vehiclesOnline(base, token) >= n {
			return true
		}
		select {
		case <-ctx.Done():
		case <-time.After(500 * time.Millisecond):
		}
	}
	return false
}

func login(base, user, password string) (string, error) {
	body, _ := json.Marshal(map[string]string{"user": user, "password": password})
	resp, err := client.Post(base+"/api/v1/login", "application/json", bytes.NewReader(body))
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("login: %s", resp.Status)
	}
	var r struct {
		Token string `json:"token"`
	}
	err = json.NewDecoder(resp.Body).Decode(&r)
	return r.Token, err
}

// vehiclesOnline returns how many vehicles the dashboard shows online.
func vehiclesOnline(base, token string) int {
	req, _ := http.NewRequest(http.MethodGet, base+"/api/v1/vehicles", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := client.Do(req)
	if err != nil {
		return 0
	}
	defer resp.Body.Close()
	var r struct {
		Items []struct {
			Online *bool `json:"online"`
		} `json:"items"`
	}
	if resp.StatusCode != http.StatusOK || json.NewDecoder(resp.Body).Decode(&r) != nil {
		return 0
	}
	online := 0
	for _, v := range r.Items {
		if v.Online != nil && *v.Online {
			online++
		}
	}
	return online
}
