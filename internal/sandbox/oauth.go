package sandbox

import (
	"encoding/base64"
	"encoding/json"
	"net"
	"net/http"
	"sync"
	"time"
)

// OAuthClient is a client of the sandbox's token endpoint: the OAuth 2
// client credentials grant (HTTP basic authentication with ID and Secret,
// grant_type=client_credentials) at TokenURL gives a token whose subject,
// the OAUTHBEARER listeners' principal, is ID.
type OAuthClient struct {
	ID, Secret, TokenURL string
}

// tokenServer is the token endpoint of a secure sandbox, on 127.0.0.1: it
// issues Kafka's unsecured JWS tokens ({"alg":"none"}, which the brokers'
// unsecured validator accepts) to registered clients.
type tokenServer struct {
	srv *http.Server
	url string

	mu      sync.Mutex
	clients map[string]string // ID -> secret
}

func newTokenServer() (*tokenServer, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	ts := &tokenServer{url: "http://" + l.Addr().String() + "/token", clients: map[string]string{}}
	ts.srv = &http.Server{Handler: http.HandlerFunc(ts.serve), ReadHeaderTimeout: 10 * time.Second}
	go ts.srv.Serve(l)
	return ts, nil
}

func (ts *tokenServer) add(id string) OAuthClient {
	c := OAuthClient{ID: id, Secret: newSecret("oauth-" + id), TokenURL: ts.url}
	ts.mu.Lock()
	ts.clients[id] = c.Secret
	ts.mu.Unlock()
	return c
}

func (ts *tokenServer) serve(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	id, secret, ok := r.BasicAuth()
	ts.mu.Lock()
	want, known := ts.clients[id]
	ts.mu.Unlock()
	switch {
	case r.Method != http.MethodPost || r.URL.Path != "/token" || r.FormValue("grant_type") != "client_credentials":
		w.WriteHeader(http.StatusBadRequest)
		w.Write([]byte(`{"error":"unsupported_grant_type"}`))
		return
	case !ok || !known || secret != want:
		w.WriteHeader(http.StatusUnauthorized)
		w.Write([]byte(`{"error":"invalid_client","error_description":"unknown client or wrong secret"}`))
		return
	}
	now := time.Now()
	const life = time.Hour
	enc := base64.RawURLEncoding
	c := map[string]any{"sub": id, "iat": now.Unix(), "exp": now.Add(life).Unix()}
	if sc := r.FormValue("scope"); sc != "" {
		c["scope"] = sc
	}
	claims, _ := json.Marshal(c)
	token := enc.EncodeToString([]byte(`{"alg":"none"}`)) + "." + enc.EncodeToString(claims) + "."
	json.NewEncoder(w).Encode(map[string]any{"access_token": token, "token_type": "bearer", "expires_in": int(life.Seconds())})
}

func (ts *tokenServer) close() { ts.srv.Close() }
