package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sync"
	"time"

	"github.com/IBM/sarama"
)

// rawFloor does the least a correct change needs, with sarama and net/http
// directly and no checks beyond the offsets' bounds: Metadata and
// FindCoordinator (to know the leaders and the coordinator), one
// OffsetFetch, ListOffsets earliest and latest to each leader (in
// parallel), one PATCH of C-1 per partition, and GET polled every 100 ms
// until Connect lists exactly what was written.
func rawFloor(ctx context.Context, j job) childResult {
	tr := newTracer()
	err := rawRun(ctx, j, tr)
	return tr.result(err)
}

type tp struct {
	topic string
	part  int32
}

func rawRun(ctx context.Context, j job, tr *tracer) error {
	conf := sarama.NewConfig()
	conf.ClientID = "scalebench-raw"
	conf.Version = sarama.V2_8_0_0
	meter := &countingDialer{}
	conf.Net.Proxy.Enable, conf.Net.Proxy.Dialer = true, meter
	if err := j.rawSecurity(conf, meter); err != nil {
		return err
	}
	hc, err := j.httpClient()
	if err != nil {
		return err
	}
	defer func() { tr.addRawCost(meter.cost()) }()
	brokers := map[string]*sarama.Broker{}
	defer func() {
		for _, b := range brokers {
			_ = b.Close()
		}
	}()
	open := func(addr string) (*sarama.Broker, error) {
		if b, ok := brokers[addr]; ok {
			return b, nil
		}
		b := sarama.NewBroker(addr)
		if err := b.Open(conf); err != nil {
			return nil, err
		}
		brokers[addr] = b
		return b, nil
	}
	boot, err := open(j.Source)
	if err != nil {
		return err
	}
	md, err := boot.GetMetadata(sarama.NewMetadataRequest(conf.Version, j.Topics))
	if err != nil {
		return fmt.Errorf("metadata: %w", err)
	}
	tr.mark("Metadata")
	addrs := map[int32]string{}
	for _, b := range md.Brokers {
		addrs[b.ID()] = b.Addr()
	}
	byLeader := map[int32][]tp{}
	parts := map[string][]int32{}
	for _, t := range md.Topics {
		if !errors.Is(t.Err, sarama.ErrNoError) {
			return fmt.Errorf("topic %s: %w", t.Name, t.Err)
		}
		for _, p := range t.Partitions {
			byLeader[p.Leader] = append(byLeader[p.Leader], tp{t.Name, p.ID})
			parts[t.Name] = append(parts[t.Name], p.ID)
		}
	}
	fc, err := boot.FindCoordinator(&sarama.FindCoordinatorRequest{Version: 2, CoordinatorKey: j.Group, CoordinatorType: sarama.CoordinatorGroup})
	if err != nil {
		return fmt.Errorf("find coordinator: %w", err)
	}
	tr.mark("FindCoordinator")
	coord, err := open(fc.Coordinator.Addr())
	if err != nil {
		return err
	}
	ofs, err := coord.FetchOffset(sarama.NewOffsetFetchRequest(conf.Version, j.Group, parts))
	if err != nil {
		return fmt.Errorf("offset fetch: %w", err)
	}
	tr.mark("OffsetFetch")

	type bounds struct{ start, end int64 }
	got := map[tp]bounds{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	errs := make(chan error, 2*len(byLeader))
	for leader, tps := range byLeader {
		b, err := open(addrs[leader])
		if err != nil {
			return err
		}
		for _, newest := range []bool{false, true} {
			wg.Go(func() {
				req := sarama.NewOffsetRequest(conf.Version)
				at := sarama.OffsetOldest
				if newest {
					at = sarama.OffsetNewest
				}
				for _, x := range tps {
					req.AddBlock(x.topic, x.part, at, 1)
				}
				resp, err := b.GetAvailableOffsets(req)
				if err != nil {
					errs <- err
					return
				}
				mu.Lock()
				defer mu.Unlock()
				for _, x := range tps {
					blk := resp.GetBlock(x.topic, x.part)
					if blk == nil || !errors.Is(blk.Err, sarama.ErrNoError) {
						errs <- fmt.Errorf("list offsets %s-%d: %v", x.topic, x.part, blk)
						return
					}
					bd := got[x]
					if newest {
						bd.end = blk.Offset
					} else {
						bd.start = blk.Offset
					}
					got[x] = bd
				}
			})
		}
	}
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		return err
	}
	tr.mark(fmt.Sprintf("ListOffsets earliest and latest, %d leader(s)", len(byLeader)))

	// C-1 per partition; C = 0 clears the partition's offset.
	type partition struct {
		Cluster   string `json:"cluster"`
		Topic     string `json:"topic"`
		Partition int32  `json:"partition"`
	}
	type offset struct {
		Offset int64 `json:"offset"`
	}
	type entry struct {
		Partition partition `json:"partition"`
		Offset    *offset   `json:"offset"`
	}
	var body struct {
		Offsets []entry `json:"offsets"`
	}
	want := map[partition]int64{}
	for x, bd := range got {
		blk := ofs.GetBlock(x.topic, x.part)
		if blk == nil || !errors.Is(blk.Err, sarama.ErrNoError) || blk.Offset < 0 {
			return fmt.Errorf("%s-%d: no committed offset", x.topic, x.part)
		}
		c := blk.Offset
		if c < bd.start || c > bd.end {
			return fmt.Errorf("%s-%d: committed offset %d outside [%d, %d]", x.topic, x.part, c, bd.start, bd.end)
		}
		p := partition{"source", x.topic, x.part}
		e := entry{Partition: p}
		if c > 0 {
			e.Offset = &offset{c - 1}
			want[p] = c - 1
		}
		body.Offsets = append(body.Offsets, e)
	}
	data, err := json.Marshal(body)
	if err != nil {
		return err
	}
	u := j.ConnectURL + "/connectors/" + url.PathEscape(j.Connector) + "/offsets"
	if _, err := call(ctx, hc, http.MethodPatch, u, data); err != nil {
		return err
	}
	tr.mark(fmt.Sprintf("PATCH %d offsets", len(body.Offsets)))

	for n := 1; ; n++ {
		b, err := call(ctx, hc, http.MethodGet, u, nil)
		if err == nil {
			var read struct {
				Offsets []struct {
					Partition partition `json:"partition"`
					Offset    offset    `json:"offset"`
				} `json:"offsets"`
			}
			if err := json.Unmarshal(b, &read); err != nil {
				return err
			}
			equal := len(read.Offsets) == len(want)
			for _, o := range read.Offsets {
				if m, ok := want[o.Partition]; !ok || m != o.Offset.Offset {
					equal = false
					break
				}
			}
			tr.mark(fmt.Sprintf("GET %d: %d offsets, equal %v", n, len(read.Offsets), equal))
			if equal {
				return nil
			}
		} else {
			tr.mark(fmt.Sprintf("GET %d: %v", n, err))
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// call sends one request and returns the body of a 2xx answer.
func call(ctx context.Context, hc *http.Client, method, u string, body []byte) ([]byte, error) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, u, rd)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := hc.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode/100 != 2 {
		return nil, fmt.Errorf("%s: %s: %.300s", method, resp.Status, b)
	}
	return b, nil
}
