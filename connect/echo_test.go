package connect

import (
	"context"
	"errors"
	"html"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestErrorRedactsEchoedCredentials: a proxy that echoes the basic-auth
// credentials into its error page, HTML-escaped, or into a JSON message,
// JSON-escaped, does not get them into the error (they survived both
// before redact.Forms).
func TestErrorRedactsEchoedCredentials(t *testing.T) {
	const user, pw = "operator", `p<a>ss&"w\rd-marker`
	for _, echo := range []func(string) string{
		func(s string) string { return "<html><body>denied for " + html.EscapeString(s) + "</body></html>" },
		func(s string) string {
			return `{"error_code":403,"message":"denied for ` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(s) + `"}`
		},
	} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			u, p, _ := r.BasicAuth()
			w.WriteHeader(http.StatusForbidden)
			w.Write([]byte(echo(u + ":" + p)))
		}))
		c, err := New(srv.URL, WithBasicAuth(user, pw), WithRetry(Retry{Attempts: 1}))
		if err != nil {
			t.Fatal(err)
		}
		_, err = c.ServerInfo(context.Background())
		srv.Close()
		var api *APIError
		if !errors.As(err, &api) || api.StatusCode != http.StatusForbidden {
			t.Fatalf("got %v", err)
		}
		for _, form := range []string{pw, html.EscapeString(pw), `p<a>ss&\"w\\rd-marker`, "marker"} {
			if strings.Contains(err.Error(), form) {
				t.Errorf("the error shows the password (%q): %v", form, err)
			}
		}
	}
}
