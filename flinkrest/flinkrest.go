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
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/mm2cutover/mm2cutover/errkind"
)

// Client reads Flink's REST API at one base URL.
type Client struct {
	base     *url.URL // without user info
	http     *http.Client
	timeout  time.Duration
	user     string
	password string
	auth     bool
}

// DefaultTimeout bounds each request of a Client made without WithTimeout:
// a JobManager that accepts the connection and never answers fails the
// request after it instead of stalling the caller.
const DefaultTimeout = 30 * time.Second

// Option configures a Client in New.
type Option func(*Client) error

// WithTimeout bounds each request: the connection, the answer and its body
// (DefaultTimeout without it). It must be positive.
func WithTimeout(d time.Duration) Option {
	return func(c *Client) error {
		if d <= 0 {
			return errors.New("flinkrest: the request timeout must be positive")
		}
		c.timeout = d
		return nil
	}
}

// New returns a client of the REST API at baseURL (http or https, e.g.
// http://flink-jobmanager:8081); hc nil means a client of
// http.DefaultTransport. A user:password part of the URL is sent as basic
// authentication and shown nowhere. The client follows no redirect: it
// uses a shallow copy of hc whose CheckRedirect stops at the first answer,
// which is then a *RedirectError (hc itself is not changed).
func New(baseURL string, hc *http.Client, opts ...Option) (*Client, error) {
	u, err := url.Parse(baseURL)
	if err != nil {
		return nil, errors.New("flinkrest: the REST URL does not parse")
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("flinkrest: %q is not an http(s) URL", u.Redacted())
	}
	u.Path = strings.TrimRight(u.Path, "/")
	c := &Client{base: u, timeout: DefaultTimeout}
	if u.User != nil {
		c.user = u.User.Username()
		c.password, _ = u.User.Password()
		c.auth = true
		u.User = nil
	}
	for _, o := range opts {
		if err := o(c); err != nil {
			return nil, err
		}
	}
	if hc == nil {
		hc = &http.Client{}
	} else {
		cp := *hc
		hc = &cp
	}
	hc.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	c.http = hc
	return c, nil
}

// String returns the base URL, without user info.
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
// unknown job), a *RedirectError, the transport's (one matching
// context.DeadlineExceeded when no answer came within the request
// timeout), or the context's.
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
	rctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(rctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return fmt.Errorf("flinkrest: %w", err)
	}
	req.Header.Set("Accept", "application/json")
	if c.auth {
		req.SetBasicAuth(c.user, c.password)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return c.transportError(ctx, rctx, path, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode >= 300 && resp.StatusCode <= 399 {
		return newRedirectError(http.MethodGet, u.String(), path, resp)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, 8<<20))
	if err != nil {
		return c.transportError(ctx, rctx, path, err)
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

// transportError wraps a failure to get an answer, or all of it: the
// caller's context error wins; the request timeout is said as such.
func (c *Client) transportError(ctx, rctx context.Context, path string, err error) error {
	if cerr := ctx.Err(); cerr != nil {
		return cerr
	}
	if rctx.Err() != nil {
		return fmt.Errorf("flinkrest: GET %s: no answer within %s: %w", path, c.timeout, context.DeadlineExceeded)
	}
	return fmt.Errorf("flinkrest: %w", err)
}

// ErrRedirect matches an answer that redirects (a 3xx status). The client
// follows none: the request, and any credential of the URL, went to the
// configured origin only. Configure the URL the answer points to, after
// checking that it is Flink's REST API. The concrete error is
// *RedirectError.
var ErrRedirect = errkind.New(errkind.Rejected, "flinkrest: redirected")

// RedirectError reports a 3xx answer. URL is the request's (without user
// info); Location where the answer pointed, resolved against it, without
// user info, query or fragment ("" when it named none); BaseURL the base
// URL that would have sent the same request there, or "" when Location
// does not end with the request's path.
//
// It matches ErrRedirect.
type RedirectError struct {
	Method, URL string
	StatusCode  int
	Location    string
	BaseURL     string
}

func (e *RedirectError) Error() string {
	s := fmt.Sprintf("flinkrest: %s %s: %d %s", e.Method, e.URL, e.StatusCode, http.StatusText(e.StatusCode))
	if e.Location != "" {
		s += " to " + e.Location
	}
	s += ": redirects are not followed"
	if e.BaseURL != "" {
		s += ": configure " + e.BaseURL + " as the Flink REST URL if it is Flink's REST API"
	}
	return s
}

// Is reports true for ErrRedirect.
func (e *RedirectError) Is(target error) bool { return target == ErrRedirect }

// ErrorKind is errkind.Rejected: configure the URL; nothing was sent where
// the answer points.
func (e *RedirectError) ErrorKind() errkind.Kind { return errkind.Rejected }

func newRedirectError(method, reqURL, path string, resp *http.Response) *RedirectError {
	e := &RedirectError{Method: method, URL: reqURL, StatusCode: resp.StatusCode}
	loc, err := resp.Location()
	if err != nil {
		return e
	}
	loc.User, loc.RawQuery, loc.ForceQuery, loc.Fragment, loc.RawFragment = nil, "", false, "", ""
	e.Location = loc.String()
	if (loc.Scheme == "http" || loc.Scheme == "https") && loc.Host != "" {
		if prefix, ok := strings.CutSuffix(loc.Path, path); ok {
			base := url.URL{Scheme: loc.Scheme, Host: loc.Host, Path: prefix}
			e.BaseURL = strings.TrimRight(base.String(), "/")
		}
	}
	return e
}
