// Package flinkrest reads, from Flink's REST API (the JobManager's, or a
// HistoryServer's, which serves the same paths for archived jobs), what a
// cutover needs to know of the old job: whether it ended, and which
// savepoint it completed last. Two GETs, nothing else: it never stops,
// cancels or triggers anything.
//
// GET /jobs/{id} gives the job's state (RUNNING, FINISHED, CANCELED, ...);
// GET /jobs/{id}/checkpoints the checkpoint statistics, whose
// latest.savepoint is the last savepoint the job triggered, with its status
// and external path, and latest.completed the last completed checkpoint.
// A session cluster keeps a finished job's details for
// jobstore.expiration-time (1 hour by default); an application cluster
// shuts down with its job, so ask its HistoryServer.
package flinkrest

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/mm2cutover/mm2cutover/errkind"
)

// Client reads Flink's REST API at one base URL.
type Client struct {
	base *url.URL
	http *http.Client
}

// New returns a client of the REST API at baseURL (http or https, e.g.
// http://flink-jobmanager:8081); hc nil means http.DefaultClient.
func New(baseURL string, hc *http.Client) (*Client, error) {
	u, err := url.Parse(baseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("flinkrest: %q is not an http(s) URL", baseURL)
	}
	u.Path = strings.TrimRight(u.Path, "/")
	if hc == nil {
		hc = http.DefaultClient
	}
	return &Client{base: u, http: hc}, nil
}

// String returns the base URL.
func (c *Client) String() string { return c.base.String() }

// The states of a job that has ended (JobStatus.isGloballyTerminalState).
const (
	StateFinished = "FINISHED"
	StateCanceled = "CANCELED"
	StateFailed   = "FAILED"
)

// Job is what GET /jobs/{id} says of a job.
type Job struct {
	ID    string `json:"jid"`
	Name  string `json:"name"`
	State string `json:"state"`
	// EndTime is when the job ended, in milliseconds since the epoch; -1
	// while it runs.
	EndTime int64 `json:"end-time"`
}

// Snapshot is one checkpoint or savepoint of the checkpoint statistics.
type Snapshot struct {
	ID          int64  `json:"id"`
	Status      string `json:"status"` // COMPLETED, IN_PROGRESS, FAILED
	IsSavepoint bool   `json:"is_savepoint"`
	// ExternalPath is where a completed savepoint (or externalized
	// checkpoint) lies, e.g. file:/sp/savepoint-1a2b-3c4d.
	ExternalPath     string `json:"external_path"`
	TriggerTimestamp int64  `json:"trigger_timestamp"`
}

// Checkpoints is the part of GET /jobs/{id}/checkpoints a cutover reads:
// the latest completed checkpoint and the latest savepoint; nil when the job
// has none.
type Checkpoints struct {
	Completed *Snapshot
	Savepoint *Snapshot
}

// ErrNotFound matches a *ResponseError of status 404: no such job (or it
// expired from the cluster's job store).
var ErrNotFound = errkind.New(errkind.Rejected, "flinkrest: not found")

// ResponseError is an answer other than 200, with Flink's error messages
// ({"errors": [...]}).
type ResponseError struct {
	Method, URL string
	StatusCode  int
	Errors      []string
}

func (e *ResponseError) Error() string {
	msg := strings.Join(e.Errors, "; ")
	if len(msg) > 300 {
		msg = msg[:300] + "..."
	}
	return fmt.Sprintf("flinkrest: %s %s: %d %s", e.Method, e.URL, e.StatusCode, msg)
}

// Is makes errors.Is(err, ErrNotFound) true for a 404.
func (e *ResponseError) Is(target error) bool {
	return target == ErrNotFound && e.StatusCode == http.StatusNotFound
}

// ErrorKind is errkind.Retry for a 5xx (the JobManager failing for the
// moment) and errkind.Rejected for any other answer (a job ID or URL that
// is not the job's, credentials refused).
func (e *ResponseError) ErrorKind() errkind.Kind {
	if e.StatusCode >= 500 {
		return errkind.Retry
	}
	return errkind.Rejected
}

// Job reads the job's state. Errors: a *ResponseError (ErrNotFound for an
// unknown job), the transport's, or the context's.
func (c *Client) Job(ctx context.Context, id string) (Job, error) {
	var j Job
	if err := c.get(ctx, "/jobs/"+url.PathEscape(id), &j); err != nil {
		return Job{}, err
	}
	if j.State == "" {
		return Job{}, fmt.Errorf("flinkrest: GET /jobs/%s: no state in the answer", id)
	}
	return j, nil
}

// Checkpoints reads the job's checkpoint statistics. Errors as for Job.
func (c *Client) Checkpoints(ctx context.Context, id string) (Checkpoints, error) {
	var w struct {
		Latest struct {
			Completed *Snapshot `json:"completed"`
			Savepoint *Snapshot `json:"savepoint"`
		} `json:"latest"`
	}
	if err := c.get(ctx, "/jobs/"+url.PathEscape(id)+"/checkpoints", &w); err != nil {
		return Checkpoints{}, err
	}
	return Checkpoints{Completed: w.Latest.Completed, Savepoint: w.Latest.Savepoint}, nil
}

func (c *Client) get(ctx context.Context, path string, v any) error {
	u := *c.base
	u.Path += path
	u.RawPath = ""
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return fmt.Errorf("flinkrest: %w", err)
	}
	req.Header.Set("Accept", "application/json")
	resp, err := c.http.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return fmt.Errorf("flinkrest: %w", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 8<<20))
	if err != nil {
		return fmt.Errorf("flinkrest: GET %s: %w", path, err)
	}
	if resp.StatusCode != http.StatusOK {
		re := &ResponseError{Method: http.MethodGet, URL: u.String(), StatusCode: resp.StatusCode}
		var e struct {
			Errors []string `json:"errors"`
		}
		if json.Unmarshal(body, &e) == nil {
			re.Errors = e.Errors
		}
		return re
	}
	if err := json.Unmarshal(body, v); err != nil {
		return fmt.Errorf("flinkrest: GET %s: %w", path, err)
	}
	return nil
}
