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
// that lists at least one broker.
func brokerReady(ctx context.Context, addr string) error {
	cfg := sarama.NewConfig()
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
		if r.n == 0 {
			return fmt.Errorf("metadata lists no broker yet")
		}
		return nil
	}
}

// workerReady succeeds when the worker at url answers GET / and lists the
// MirrorSourceConnector plugin under GET /connector-plugins.
func workerReady(ctx context.Context, url string) error {
	if _, err := getJSON(ctx, url+"/"); err != nil {
		return err
	}
	body, err := getJSON(ctx, url+"/connector-plugins")
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

func getJSON(ctx context.Context, url string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
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
