package kafkaadmin

import (
	"bytes"
	"context"
	"encoding/pem"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	keystore "github.com/pavlo-v-chernykh/keystore-go/v4"
)

// writeJKS turns a sandbox PEM keystore (key and chain) into a JKS
// keystore with a store password and its own key password, as keytool
// makes them.
func writeJKS(t *testing.T, pemFile, storePassword, keyPassword string) string {
	t.Helper()
	data, err := os.ReadFile(pemFile)
	if err != nil {
		t.Fatal(err)
	}
	var key []byte
	var chain []keystore.Certificate
	for rest := data; ; {
		var b *pem.Block
		if b, rest = pem.Decode(rest); b == nil {
			break
		}
		switch b.Type {
		case "PRIVATE KEY":
			key = b.Bytes
		case "CERTIFICATE":
			chain = append(chain, keystore.Certificate{Type: "X509", Content: b.Bytes})
		}
	}
	ks := keystore.New()
	if err := ks.SetPrivateKeyEntry("client", keystore.PrivateKeyEntry{CreationTime: time.Now(), PrivateKey: key, CertificateChain: chain}, []byte(keyPassword)); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := ks.Store(&buf, []byte(storePassword)); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "client.jks")
	if err := os.WriteFile(path, buf.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestSandboxClientProperties reads the clusters of the secure sandbox
// through its mTLS listener (client certificates as PKCS12, JKS with its
// own key password, and PEM) and its OAUTHBEARER listener (a client
// credentials token from the sandbox's token endpoint, and Kafka's
// unsecured JWS), each configured by a client properties file's keys as
// ConfigFromProperties reads them. Without a certificate, with a wrong
// client secret or with a certificate from another CA the first contact
// fails at once with ErrAuthentication or ErrTLS.
func TestSandboxClientProperties(t *testing.T) {
	sb, src := secureSource(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cert, err := sb.ClientCertificate("kafkaadmin-test")
	if err != nil {
		t.Fatal(err)
	}
	jks := writeJKS(t, cert.PEMFile, "store-"+cert.Password, "key-"+cert.Password)
	oauth, err := sb.OAuthClient("kafkaadmin-oauth")
	if err != nil {
		t.Fatal(err)
	}
	mtls := strings.Join(src.MTLSAddrs(), ",")
	ob := strings.Join(src.OAuthAddrs(), ",")
	ca := sb.CAFile()
	for _, tc := range []struct {
		name  string
		props map[string]string
		fail  error
	}{
		{"mTLS, PKCS12 keystore", map[string]string{"bootstrap.servers": mtls, "security.protocol": "SSL", "ssl.truststore.type": "PEM", "ssl.truststore.location": ca,
			"ssl.keystore.type": "PKCS12", "ssl.keystore.location": cert.PKCS12File, "ssl.keystore.password": cert.Password}, nil},
		{"mTLS, JKS keystore with a key password", map[string]string{"bootstrap.servers": mtls, "security.protocol": "SSL", "ssl.truststore.type": "PEM", "ssl.truststore.location": ca,
			"ssl.keystore.location": jks, "ssl.keystore.password": "store-" + cert.Password, "ssl.key.password": "key-" + cert.Password}, nil},
		{"mTLS, PEM keystore", map[string]string{"bootstrap.servers": mtls, "security.protocol": "SSL", "ssl.truststore.type": "PEM", "ssl.truststore.location": ca,
			"ssl.keystore.type": "PEM", "ssl.keystore.location": cert.PEMFile}, nil},
		{"mTLS without a certificate", map[string]string{"bootstrap.servers": mtls, "security.protocol": "SSL", "ssl.truststore.type": "PEM", "ssl.truststore.location": ca}, ErrTLS},
		{"OAUTHBEARER, client credentials", map[string]string{"bootstrap.servers": ob, "security.protocol": "SASL_SSL", "sasl.mechanism": "OAUTHBEARER",
			"sasl.oauthbearer.token.endpoint.url": oauth.TokenURL, "sasl.login.callback.handler.class": oauthLoginHandler,
			"sasl.jaas.config":    oauthLoginModule + ` required clientId="` + oauth.ID + `" clientSecret="` + oauth.Secret + `";`,
			"ssl.truststore.type": "PEM", "ssl.truststore.location": ca}, nil},
		{"OAUTHBEARER, unsecured JWS", map[string]string{"bootstrap.servers": ob, "security.protocol": "SASL_SSL", "sasl.mechanism": "OAUTHBEARER",
			"sasl.jaas.config":    oauthLoginModule + ` required unsecuredLoginStringClaim_sub="someone";`,
			"ssl.truststore.type": "PEM", "ssl.truststore.location": ca}, nil},
		{"OAUTHBEARER, wrong client secret", map[string]string{"bootstrap.servers": ob, "security.protocol": "SASL_SSL", "sasl.mechanism": "OAUTHBEARER",
			"sasl.oauthbearer.token.endpoint.url": oauth.TokenURL,
			"sasl.jaas.config":                    oauthLoginModule + ` required clientId="` + oauth.ID + `" clientSecret="wrong-secret-marker";`,
			"ssl.truststore.type":                 "PEM", "ssl.truststore.location": ca}, ErrAuthentication},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, _, err := ConfigFromProperties(tc.props)
			if err != nil {
				t.Fatal(err)
			}
			cfg.RetryTimeout, cfg.Logger = 5*time.Second, testLogger(t)
			c, err := NewClient(cfg)
			if err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			id, err := c.ClusterID(ctx)
			t.Logf("%v after %v", err, time.Since(start).Round(time.Millisecond))
			switch {
			case tc.fail == nil && (err != nil || id != src.ClusterID()):
				t.Fatalf("cluster ID %q, %v; want %s", id, err, src.ClusterID())
			case tc.fail != nil && !errors.Is(err, tc.fail):
				t.Fatalf("got %v, want %v", err, tc.fail)
			case err != nil && (strings.Contains(err.Error(), "wrong-secret-marker") || strings.Contains(err.Error(), oauth.Secret)):
				t.Errorf("the error shows a secret: %v", err)
			}
		})
	}
}
