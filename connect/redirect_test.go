package connect_test

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/mm2cutover/mm2cutover/connect"
)

// recorder is a real HTTP listener that records every request it gets: the
// origin a redirect points to, which must never see one.
type recorder struct {
	srv  *httptest.Server
	mu   sync.Mutex
	seen []string
}

func (r *recorder) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	r.mu.Lock()
	r.seen = append(r.seen, fmt.Sprintf("%s %s (Authorization %q)", req.Method, req.URL.Path, req.Header.Get("Authorization")))
	r.mu.Unlock()
	writeJSON(w, 200, map[string]any{"name": "c", "config": map[string]string{}, "tasks": []any{}, "type": "source"})
}

func (r *recorder) requests() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.seen...)
}

// listen starts a recorder on addr ("127.0.0.1:0" or another loopback
// address: another host).
func listen(t *testing.T, addr string) *recorder {
	t.Helper()
	l, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	r := &recorder{}
	r.srv = httptest.NewUnstartedServer(r)
	r.srv.Listener.Close()
	r.srv.Listener = l
	r.srv.Start()
	t.Cleanup(r.srv.Close)
	return r
}

func TestF1RedirectNotFollowed(t *testing.T) {
	const user, password = "operator", "s3cret-Pa55"
	pair := base64.StdEncoding.EncodeToString([]byte(user + ":" + password))
	otherPort := listen(t, "127.0.0.1:0")
	otherHost := listen(t, "127.0.0.2:0") // all of 127/8 is loopback on Linux
	ctx := context.Background()
	offsetsBody := []connect.Offset{{Partition: map[string]any{"cluster": "source", "topic": "t", "partition": 0}, Offset: map[string]any{"offset": 5}}}
	calls := []struct {
		method, path string
		call         func(*connect.Client) error
	}{
		{"GET", "/connectors/c", func(c *connect.Client) error { _, err := c.Connector(ctx, "c"); return err }},
		{"POST", "/connectors", func(c *connect.Client) error {
			_, err := c.Create(ctx, "c", map[string]string{"sasl.jaas.config": "x password=\"" + password + "\";"}, connect.InitialStopped)
			return err
		}},
		{"PUT", "/connectors/c/config", func(c *connect.Client) error {
			_, _, err := c.PutConfig(ctx, "c", map[string]string{"source.cluster.ssl.key.password": password})
			return err
		}},
		{"PUT", "/connectors/c/stop", func(c *connect.Client) error { return c.Stop(ctx, "c") }},
		{"PATCH", "/connectors/c/offsets", func(c *connect.Client) error { _, err := c.AlterOffsets(ctx, "c", offsetsBody); return err }},
		{"DELETE", "/connectors/c/offsets", func(c *connect.Client) error { _, err := c.ResetOffsets(ctx, "c"); return err }},
		{"DELETE", "/connectors/c", func(c *connect.Client) error { return c.Delete(ctx, "c") }},
	}
	for _, code := range []int{301, 302, 307, 308} {
		for _, target := range []struct {
			name string
			rec  *recorder
		}{{"other-port", otherPort}, {"other-host", otherHost}} {
			for _, own := range []bool{false, true} {
				name := fmt.Sprintf("%d/%s/own-client=%v", code, target.name, own)
				t.Run(name, func(t *testing.T) {
					var mu sync.Mutex
					got := map[string]int{}
					mux := http.NewServeMux()
					serverInfo(mux, "3.9.1")
					stoppedStatus(mux, "c")
					mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
						mu.Lock()
						got[r.Method+" "+r.URL.Path]++
						mu.Unlock()
						// A Location with user info: it must not come back in the error.
						loc, _ := url.Parse(target.rec.srv.URL + basePath + r.URL.Path)
						loc.User = url.UserPassword("lb", "lb-secret")
						loc.RawQuery = "token=query-secret"
						w.Header().Set("Location", loc.String())
						w.WriteHeader(code)
					})
					outer := http.NewServeMux()
					outer.Handle(basePath+"/", http.StripPrefix(basePath, mux))
					origin := httptest.NewServer(outer)
					defer origin.Close()

					opts := []connect.Option{connect.WithRetry(fastRetry), connect.WithBasicAuth(user, password)}
					var mine *http.Client
					if own {
						mine = &http.Client{}
						opts = append(opts, connect.WithHTTPClient(mine))
					}
					c, err := connect.New(origin.URL+basePath, opts...)
					if err != nil {
						t.Fatal(err)
					}
					for _, call := range calls {
						err := call.call(c)
						var re *connect.RedirectError
						if !errors.Is(err, connect.ErrRedirect) || !errors.As(err, &re) {
							t.Errorf("%s %s: %v, want a *connect.RedirectError", call.method, call.path, err)
							continue
						}
						if re.StatusCode != code || re.Method != call.method {
							t.Errorf("%s %s: %+v", call.method, call.path, re)
						}
						if want := target.rec.srv.URL + basePath; re.BaseURL != want {
							t.Errorf("%s %s: BaseURL %q, want %q", call.method, call.path, re.BaseURL, want)
						}
						if !strings.Contains(err.Error(), target.rec.srv.URL+basePath) {
							t.Errorf("%s %s: %q does not name the base URL to configure", call.method, call.path, err)
						}
						for _, s := range []string{password, pair, "lb-secret", "query-secret"} {
							if strings.Contains(err.Error(), s) || strings.Contains(adviceOf(err), s) {
								t.Errorf("%s %s: %q shows %q", call.method, call.path, err, s)
							}
						}
						mu.Lock()
						n := got[call.method+" "+call.path]
						mu.Unlock()
						if n != 1 {
							t.Errorf("%s %s sent %d times to the origin, want once (a redirect is not retried)", call.method, call.path, n)
						}
					}
					if seen := target.rec.requests(); len(seen) > 0 {
						t.Errorf("the redirect target got requests: %q", seen)
					}
					if own && mine.CheckRedirect != nil {
						t.Error("the caller's http.Client was changed")
					}
				})
			}
		}
	}
}

// A Location that does not end with the request's path (a login page)
// suggests no base URL; one without a Location is still a redirect.
func TestF1RedirectElsewhere(t *testing.T) {
	c, mux := setup(t)
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "https://sso.example/login?next=x", http.StatusFound)
	})
	mux.HandleFunc("GET /connectors", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusFound) })
	_, err := c.ServerInfo(context.Background())
	var re *connect.RedirectError
	if !errors.As(err, &re) || re.Location != "https://sso.example/login" || re.BaseURL != "" {
		t.Errorf("login page: %v (%+v)", err, re)
	}
	_, err = c.Connectors(context.Background())
	if !errors.As(err, &re) || re.Location != "" || !errors.Is(err, connect.ErrRedirect) {
		t.Errorf("no Location: %v (%+v)", err, re)
	}
}

func adviceOf(err error) string {
	var a interface{ Advice() string }
	if errors.As(err, &a) {
		return a.Advice()
	}
	return ""
}
