package connect

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
)

// TestOptionsFromProperties: a REST client configured by a properties file
// presents its client certificate (JKS, with its own key password) to an
// endpoint that requires one, and trusts the endpoint's CA from a PKCS12
// truststore; the stores are those of package clientconf's tests.
func TestOptionsFromProperties(t *testing.T) {
	const td = "../clientconf/testdata/"
	serverPEM, err := os.ReadFile(td + "server.pem")
	if err != nil {
		t.Fatal(err)
	}
	cert, err := tls.X509KeyPair(serverPEM, serverPEM)
	if err != nil {
		t.Fatal(err)
	}
	caPEM, _ := os.ReadFile(td + "ca.pem")
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(caPEM)
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"version":"4.3.1","commit":"c","kafka_cluster_id":"` + r.TLS.PeerCertificates[0].Subject.CommonName + `"}`))
	}))
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{cert}, ClientAuth: tls.RequireAndVerifyClientCert, ClientCAs: pool}
	srv.StartTLS()
	defer srv.Close()

	for _, prefix := range []string{"", "listeners.https."} {
		props := map[string]string{
			"ssl.truststore.type": "PKCS12", "ssl.truststore.location": td + "truststore.p12", "ssl.truststore.password": "trust-secret",
			"ssl.keystore.type": "JKS", "ssl.keystore.location": td + "client.jks", "ssl.keystore.password": "store-secret",
			"ssl.key.password": "key-secret-jks", "ssl.enabled.protocols": "TLSv1.3",
		}
		for k, v := range props {
			delete(props, k)
			props[prefix+k] = v
		}
		opts, err := OptionsFromProperties(props)
		if err != nil {
			t.Fatal(err)
		}
		c, err := New(srv.URL, append(opts, WithRetry(Retry{Attempts: 1}))...)
		if err != nil {
			t.Fatal(err)
		}
		info, err := c.ServerInfo(context.Background())
		if err != nil || info.KafkaClusterID != "cutover-test" {
			t.Fatalf("prefix %q: %+v, %v; want the server to see the client certificate", prefix, info, err)
		}
	}

	noCert, err := OptionsFromProperties(map[string]string{"ssl.truststore.type": "PEM", "ssl.truststore.location": td + "ca.pem"})
	if err != nil {
		t.Fatal(err)
	}
	c, _ := New(srv.URL, append(noCert, WithRetry(Retry{Attempts: 1}))...)
	if _, err := c.ServerInfo(context.Background()); err == nil {
		t.Fatal("an endpoint that requires a client certificate answered a client without one")
	}

	for _, bad := range []map[string]string{
		{"ssl.keystore.location": td + "client.jks", "ssl.keystore.password": "s3cr3t-marker"},
	} {
		_, err := OptionsFromProperties(bad)
		if err == nil || strings.Contains(err.Error(), "s3cr3t-marker") {
			t.Errorf("%v: %v, want an error without the password", bad, err)
		}
	}
}

// TestUnknownConnectPropertiesWarnedOnce: a key OptionsFromProperties does
// not use (a typo, a Kafka client's setting in a shared client.properties)
// does not refuse the file: New warns once, through its logger, naming the
// key, never its value, and never a key that looks like key material.
func TestUnknownConnectPropertiesWarnedOnce(t *testing.T) {
	const keyLine = "MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgPGvl2"
	opts, err := OptionsFromProperties(map[string]string{
		"ssl.truststore.type":     "PEM",
		"ssl.truststore.location": "../clientconf/testdata/ca.pem",
		"ssl.keystore.locaton":    "x",
		"basic.auth.password":     "s3cr3t-marker",
		keyLine:                   "",
	})
	if err != nil {
		t.Fatal(err)
	}
	var logs bytes.Buffer
	if _, err := New("https://connect:8443", append(opts, WithLogger(slog.New(slog.NewTextHandler(&logs, nil))))...); err != nil {
		t.Fatal(err)
	}
	out := logs.String()
	if n := strings.Count(out, "level=WARN"); n != 1 || !strings.Contains(out, "basic.auth.password, ssl.keystore.locaton, [redacted]") {
		t.Errorf("%d warnings, want one naming the keys:\n%s", n, out)
	}
	for _, s := range []string{"s3cr3t-marker", keyLine[:16]} {
		if strings.Contains(out, s) {
			t.Errorf("%q shown:\n%s", s, out)
		}
	}
}
