package connect_test

import (
	"context"
	"encoding/base64"
	"html/template"
	"net/http"
	"strings"
	"testing"

	"github.com/mm2cutover/mm2cutover/connect"
)

// TestF8HTMLEscapedAuthorizationRedacted: a proxy's error page that quotes
// the request's Authorization header through Go's html/template writes
// '+' as &#43;, which no form of the credentials matched: the basic-auth
// base64 stayed readable in the error. Other escapes of '+', '/' and '='
// are redacted too.
func TestF8HTMLEscapedAuthorizationRedacted(t *testing.T) {
	const user, password = "operator", "pa>>word??"
	encoded := base64.StdEncoding.EncodeToString([]byte(user + ":" + password))
	if !strings.ContainsAny(encoded, "+/=") {
		t.Fatalf("%s: the test needs '+', '/' and '=' in the base64", encoded)
	}
	page := template.Must(template.New("page").Parse(`<html><body><h1>502</h1><p>request headers: Authorization: {{.}}</p></body></html>`))
	c, mux := setup(t, connect.WithBasicAuth(user, password))
	mux.HandleFunc("GET /connectors", func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusBadGateway)
		_ = page.Execute(w, r.Header.Get("Authorization"))
	})
	mux.HandleFunc("GET /connector-plugins", func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusBadGateway)
		auth := strings.NewReplacer("+", "&#x2B;", "/", "&#x2f;", "=", "&#61;").Replace(r.Header.Get("Authorization"))
		_, _ = w.Write([]byte("<p>Authorization: " + auth + "</p>"))
	})
	_, err1 := c.Connectors(context.Background())
	_, err2 := c.Plugins(context.Background())
	for i, err := range []error{err1, err2} {
		if err == nil {
			t.Fatalf("call %d: no error", i+1)
		}
		for _, part := range strings.FieldsFunc(encoded, func(r rune) bool { return r == '+' || r == '/' || r == '=' }) {
			if len(part) >= 4 && strings.Contains(err.Error(), part) {
				t.Errorf("call %d: the error shows %q of the credentials: %v", i+1, part, err)
			}
		}
		if !strings.Contains(err.Error(), "Authorization: Basic [redacted]") {
			t.Errorf("call %d: the page is not kept around the redaction: %v", i+1, err)
		}
	}
}
