package sandbox

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/IBM/sarama"
)

// brokerReady succeeds when the broker at addr answers a metadata request
// that lists at least want brokers. cfg says how to connect (TLS, SASL).
func brokerReady(ctx context.Context, addr string, cfg *sarama.Config, want int) error {
	cfg.Net.DialTimeout = 2 * time.Second
	cfg.Net.ReadTimeout = 5 * time.Second
	cfg.Metadata.Retry.Max = 0
	cfg.Metadata.Full = false
	b := sarama.NewBroker(addr)
	if err := b.Open(cfg); err != nil {
		return err
	}
	defer b.Close()
	type result struct {
		n   int
		err error
	}
	ch := make(chan result, 1)
	go func() {
		md, err := b.GetMetadata(&sarama.MetadataRequest{Version: 4})
		if err != nil {
			ch <- result{err: err}
			return
		}
		ch <- result{n: len(md.Brokers)}
	}()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case r := <-ch:
		if r.err != nil {
			return r.err
		}
		if r.n < want {
			return fmt.Errorf("metadata lists %d of %d brokers", r.n, want)
		}
		return nil
	}
}

// workerReady succeeds when the worker at url answers GET / and lists the
// MirrorSourceConnector plugin under GET /connector-plugins. A non-zero
// user is sent as basic auth.
func workerReady(ctx context.Context, hc *http.Client, url string, user User) error {
	if _, err := getJSON(ctx, hc, url+"/", user); err != nil {
		return err
	}
	body, err := getJSON(ctx, hc, url+"/connector-plugins", user)
	if err != nil {
		return err
	}
	var plugins []struct {
		Class string `json:"class"`
	}
	if err := json.Unmarshal(body, &plugins); err != nil {
		return fmt.Errorf("GET /connector-plugins: %w", err)
	}
	for _, p := range plugins {
		if p.Class == mirrorSource {
			return nil
		}
	}
	return fmt.Errorf("GET /connector-plugins does not list %s", mirrorSource)
}

func getJSON(ctx context.Context, hc *http.Client, url string, user User) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	if user.Name != "" {
		req.SetBasicAuth(user.Name, user.Password)
	}
	resp, err := hc.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: %s: %s", url, resp.Status, strings.TrimSpace(string(body)))
	}
	return body, nil
}
