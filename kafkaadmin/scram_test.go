package kafkaadmin

import (
	"crypto/hmac"
	"crypto/pbkdf2"
	"crypto/sha512"
	"encoding/base64"
	"strings"
	"testing"
)

// RFC 7677 section 3: the SCRAM-SHA-256 example exchange.
func TestSCRAMSHA256RFC7677(t *testing.T) {
	c := newSCRAMClient(ScramSHA256)
	c.nonce = func() string { return "rOprNGfwEbeRWgbNEkqO" }
	if err := c.Begin("user", "pencil", ""); err != nil {
		t.Fatal(err)
	}
	steps := []struct{ challenge, want string }{
		{"", "n,,n=user,r=rOprNGfwEbeRWgbNEkqO"},
		{"r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096",
			"c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ="},
		{"v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4=", ""},
	}
	for i, s := range steps {
		if c.Done() {
			t.Fatalf("Done before step %d", i+1)
		}
		got, err := c.Step(s.challenge)
		if err != nil {
			t.Fatalf("step %d: %v", i+1, err)
		}
		if got != s.want {
			t.Fatalf("step %d = %q, want %q", i+1, got, s.want)
		}
	}
	if !c.Done() {
		t.Fatal("not Done after the server's final message")
	}
}

// scramAttrs parses "k=v,k=v" SCRAM attributes. Values may contain '='.
func scramAttrs(s string) map[string]string {
	out := make(map[string]string)
	for _, kv := range strings.Split(s, ",") {
		k, v, ok := strings.Cut(kv, "=")
		if ok && len(k) == 1 {
			out[k] = v
		}
	}
	return out
}

// SCRAM-SHA-512 against a server computed here, plus the failure cases. The
// password has a no-break space, which SASLprep would map to a space:
// Kafka uses passwords as plain UTF-8, and so must the client.
func TestSCRAMSHA512(t *testing.T) {
	const user, password = "us=er,x", "sec\u00a0ret"
	salt := []byte("0123456789abcdef")
	const iter = 4096
	server := func(clientFirst string) (serverFirst string, verify func(clientFinal string) (string, bool)) {
		bare := strings.TrimPrefix(clientFirst, "n,,")
		nonce := scramAttrs(bare)["r"] + "srv"
		serverFirst = "r=" + nonce + ",s=" + base64.StdEncoding.EncodeToString(salt) + ",i=4096"
		return serverFirst, func(clientFinal string) (string, bool) {
			salted, _ := pbkdf2.Key(sha512.New, password, salt, iter, 64)
			mac := func(k []byte, m string) []byte { h := hmac.New(sha512.New, k); h.Write([]byte(m)); return h.Sum(nil) }
			clientKey := mac(salted, "Client Key")
			stored := sha512.Sum512(clientKey)
			noProof := clientFinal[:strings.Index(clientFinal, ",p=")]
			auth := bare + "," + serverFirst + "," + noProof
			sig := mac(stored[:], auth)
			proof, _ := base64.StdEncoding.DecodeString(scramAttrs(clientFinal)["p"])
			for i := range proof {
				proof[i] ^= sig[i]
			}
			if !hmac.Equal(proof, clientKey) {
				return "e=invalid-proof", false
			}
			return "v=" + base64.StdEncoding.EncodeToString(mac(mac(salted, "Server Key"), auth)), true
		}
	}

	c := newSCRAMClient(ScramSHA512)
	_ = c.Begin(user, password, "")
	first, _ := c.Step("")
	if !strings.Contains(first, "n=us=3Der=2Cx,") {
		t.Fatalf("client-first %q does not escape the user name", first)
	}
	sf, verify := server(first)
	final, err := c.Step(sf)
	if err != nil {
		t.Fatal(err)
	}
	v, ok := verify(final)
	if !ok {
		t.Fatal("server rejected the client proof")
	}
	if _, err := c.Step(v); err != nil || !c.Done() {
		t.Fatalf("final step: %v, done %v", err, c.Done())
	}

	t.Run("bad server signature", func(t *testing.T) {
		c := newSCRAMClient(ScramSHA512)
		_ = c.Begin(user, password, "")
		first, _ := c.Step("")
		sf, _ := server(first)
		_, _ = c.Step(sf)
		if _, err := c.Step("v=" + base64.StdEncoding.EncodeToString(make([]byte, 64))); err == nil || c.Done() {
			t.Fatal("accepted a wrong server signature")
		}
	})
	t.Run("server error", func(t *testing.T) {
		c := newSCRAMClient(ScramSHA512)
		_ = c.Begin(user, password, "")
		first, _ := c.Step("")
		sf, _ := server(first)
		_, _ = c.Step(sf)
		if _, err := c.Step("e=invalid-proof"); err == nil || strings.Contains(err.Error(), password) {
			t.Fatalf("Step(e=...) = %v, want an error without the password", err)
		}
	})
	t.Run("nonce not extended", func(t *testing.T) {
		c := newSCRAMClient(ScramSHA512)
		_ = c.Begin(user, password, "")
		_, _ = c.Step("")
		if _, err := c.Step("r=other,s=c2FsdA==,i=4096"); err == nil {
			t.Fatal("accepted a server nonce that does not extend ours")
		}
	})
}
