package clientconf

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
)

// The stores of testdata/ are made by testdata/gen.sh with openssl and
// keytool: the same client key and certificate (CN=cutover-test) as PEM,
// encrypted PEM, PKCS12 and JKS, and the CA as PEM, JKS and PKCS12.

// mtlsServer is an HTTPS server with testdata/server.pem that requires a
// client certificate signed by the test CA and answers with its CN.
func mtlsServer(t *testing.T) *httptest.Server {
	t.Helper()
	pemBytes, err := os.ReadFile("testdata/server.pem")
	if err != nil {
		t.Fatal(err)
	}
	cert, err := tls.X509KeyPair(pemBytes, pemBytes)
	if err != nil {
		t.Fatal(err)
	}
	ca, _ := os.ReadFile("testdata/ca.pem")
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(ca)
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, r.TLS.PeerCertificates[0].Subject.CommonName)
	}))
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{cert}, ClientAuth: tls.RequireAndVerifyClientCert, ClientCAs: pool}
	srv.StartTLS()
	t.Cleanup(srv.Close)
	return srv
}

func get(t *testing.T, cfg *tls.Config, url string) (string, error) {
	t.Helper()
	c := &http.Client{Transport: &http.Transport{TLSClientConfig: cfg}}
	resp, err := c.Get(url)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return string(b), err
}

func TestTLSStores(t *testing.T) {
	srv := mtlsServer(t)
	caPEM, _ := os.ReadFile("testdata/ca.pem")
	clientPEM, _ := os.ReadFile("testdata/client.pem")
	key, chain, _ := strings.Cut(string(clientPEM), "-----END PRIVATE KEY-----\n")
	key += "-----END PRIVATE KEY-----\n"
	for _, tc := range []struct {
		name  string
		props map[string]string
	}{
		{"PEM files", map[string]string{"ssl.truststore.type": "PEM", "ssl.truststore.location": "testdata/ca.pem",
			"ssl.keystore.type": "PEM", "ssl.keystore.location": "testdata/client.pem"}},
		{"encrypted PEM key", map[string]string{"ssl.truststore.type": "PEM", "ssl.truststore.location": "testdata/ca.pem",
			"ssl.keystore.type": "PEM", "ssl.keystore.location": "testdata/client-encrypted.pem", "ssl.key.password": "key-secret"}},
		{"inline PEM", map[string]string{"ssl.truststore.type": "PEM", "ssl.truststore.certificates": string(caPEM),
			"ssl.keystore.type": "PEM", "ssl.keystore.key": key, "ssl.keystore.certificate.chain": chain}},
		{"PKCS12", map[string]string{"ssl.truststore.type": "PKCS12", "ssl.truststore.location": "testdata/truststore.p12", "ssl.truststore.password": "trust-secret",
			"ssl.keystore.type": "PKCS12", "ssl.keystore.location": "testdata/client.p12", "ssl.keystore.password": "store-secret"}},
		{"JKS with a key password", map[string]string{"ssl.truststore.type": "JKS", "ssl.truststore.location": "testdata/truststore.jks", "ssl.truststore.password": "trust-secret",
			"ssl.keystore.type": "JKS", "ssl.keystore.location": "testdata/client.jks", "ssl.keystore.password": "store-secret", "ssl.key.password": "key-secret-jks"}},
		{"default type JKS reads PKCS12 too", map[string]string{"ssl.truststore.location": "testdata/truststore.p12", "ssl.truststore.password": "trust-secret",
			"ssl.keystore.location": "testdata/client.jks", "ssl.keystore.password": "store-secret", "ssl.key.password": "key-secret-jks"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ts, err := TLSFromProperties(tc.props, "")
			if err != nil {
				t.Fatal(err)
			}
			cfg, err := ts.Config()
			if err != nil {
				t.Fatal(err)
			}
			got, err := get(t, cfg, srv.URL)
			if err != nil || got != "cutover-test" {
				t.Fatalf("GET: %q, %v; want the client certificate's CN", got, err)
			}
		})
	}
}

func TestTLSRefuses(t *testing.T) {
	const secret = "wrong-secret-marker"
	for _, tc := range []struct {
		name    string
		props   map[string]string
		setting string
	}{
		{"unknown type", map[string]string{"ssl.truststore.type": "BKS"}, "ssl.truststore.type"},
		{"password with PEM truststore", map[string]string{"ssl.truststore.type": "PEM", "ssl.truststore.location": "testdata/ca.pem", "ssl.truststore.password": secret}, "ssl.truststore.password"},
		{"store password with PEM keystore", map[string]string{"ssl.keystore.type": "PEM", "ssl.keystore.location": "testdata/client.pem", "ssl.keystore.password": secret}, "ssl.keystore.password"},
		{"JKS keystore without password", map[string]string{"ssl.keystore.location": "testdata/client.jks"}, "ssl.keystore.password"},
		{"inline key without chain", map[string]string{"ssl.keystore.type": "PEM", "ssl.keystore.key": "x"}, "ssl.keystore.key"},
		{"endpoint algorithm", map[string]string{"ssl.endpoint.identification.algorithm": "http"}, "ssl.endpoint.identification.algorithm"},
		{"wrong JKS store password", map[string]string{"ssl.keystore.location": "testdata/client.jks", "ssl.keystore.password": secret}, "ssl.keystore.location"},
		{"wrong JKS key password", map[string]string{"ssl.keystore.location": "testdata/client.jks", "ssl.keystore.password": "store-secret", "ssl.key.password": secret}, "ssl.key.password"},
		{"wrong PKCS12 password", map[string]string{"ssl.keystore.type": "PKCS12", "ssl.keystore.location": "testdata/client.p12", "ssl.keystore.password": secret}, "ssl.keystore.location"},
		{"wrong PEM key password", map[string]string{"ssl.keystore.type": "PEM", "ssl.keystore.location": "testdata/client-encrypted.pem", "ssl.key.password": secret}, "ssl.keystore.location"},
		{"encrypted PEM key without password", map[string]string{"ssl.keystore.type": "PEM", "ssl.keystore.location": "testdata/client-encrypted.pem"}, "ssl.keystore.location"},
		{"PEM declared, JKS given", map[string]string{"ssl.truststore.type": "PEM", "ssl.truststore.location": "testdata/truststore.jks"}, "ssl.truststore.location"},
		{"truststore missing", map[string]string{"ssl.truststore.type": "PEM", "ssl.truststore.location": "testdata/nonexistent.pem"}, "ssl.truststore.location"},
		{"truststore is /dev/zero", map[string]string{"ssl.truststore.location": "/dev/zero", "ssl.truststore.password": secret}, "ssl.truststore.location"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ts, err := TLSFromProperties(tc.props, "")
			if err == nil {
				_, err = ts.Config()
			}
			var se *StoreError
			if !errors.As(err, &se) || se.Setting != tc.setting {
				t.Fatalf("got %v, want a *StoreError for %s", err, tc.setting)
			}
			if strings.Contains(err.Error(), secret) {
				t.Errorf("the error shows the password: %v", err)
			}
			t.Log(err)
		})
	}
}

// TestSkipHostnameVerification: with the endpoint identification algorithm
// empty, a certificate for another name verifies against the CA, and one
// from another CA still does not.
func TestSkipHostnameVerification(t *testing.T) {
	srv := mtlsServer(t)
	base := map[string]string{"ssl.truststore.type": "PEM", "ssl.truststore.location": "testdata/ca.pem",
		"ssl.keystore.type": "PEM", "ssl.keystore.location": "testdata/client.pem"}
	strict, _ := TLSFromProperties(base, "")
	cfg, err := strict.Config()
	if err != nil {
		t.Fatal(err)
	}
	// Dial the server under a name its certificate does not hold.
	dial := func(cfg *tls.Config) error {
		cfg.ServerName = "other.example"
		c, err := tls.Dial("tcp", strings.TrimPrefix(srv.URL, "https://"), cfg)
		if err == nil {
			c.Close()
		}
		return err
	}
	if err := dial(cfg); err == nil {
		t.Fatal("a certificate for another host verified with hostname verification on")
	}
	base["ssl.endpoint.identification.algorithm"] = ""
	loose, _ := TLSFromProperties(base, "")
	cfg, err = loose.Config()
	if err != nil {
		t.Fatal(err)
	}
	if err := dial(cfg); err != nil {
		t.Fatalf("without hostname verification: %v", err)
	}
	cfg.RootCAs = x509.NewCertPool() // no CA: the chain must still verify
	VerifyWithoutHostname(cfg)
	if err := dial(cfg); err == nil {
		t.Fatal("a chain that does not verify was accepted")
	}
}
