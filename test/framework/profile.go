package framework

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
)

// FetchProfile saves into file what a /debug/pprof URL answers, asked with client (nil: http.DefaultClient).
// A CPU profile's URL answers once its seconds are over.
func FetchProfile(ctx context.Context, client *http.Client, url, file string) error {
	if client == nil {
		client = http.DefaultClient
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: %s: %s", url, resp.Status, body)
	}
	return os.WriteFile(file, body, 0o644)
}
