package kafkaadmin

import (
	"crypto/hmac"
	"crypto/pbkdf2"
	"crypto/rand"
	"crypto/sha256"
	"crypto/sha512"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"hash"
	"strconv"
	"strings"
)

// scramClient is the client side of SCRAM (RFC 5802) as Kafka uses it
// (KIP-84): no channel binding, passwords used as UTF-8 bytes. It
// implements sarama.SCRAMClient.
type scramClient struct {
	newHash func() hash.Hash
	nonce   func() (string, error)

	user, password, authzID string
	step                    int
	clientNonce             string
	gs2Header, firstBare    string
	serverSignature         []byte
	done                    bool
}

func newSCRAMClient(m SASLMechanism) *scramClient {
	c := &scramClient{nonce: randomNonce}
	if m == ScramSHA512 {
		c.newHash = sha512.New
	} else {
		c.newHash = sha256.New
	}
	return c
}

func randomNonce() (string, error) {
	b := make([]byte, 24)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return base64.RawStdEncoding.EncodeToString(b), nil
}

// saslName escapes a SCRAM user name (RFC 5802 section 5.1).
func saslName(s string) string {
	return strings.NewReplacer("=", "=3D", ",", "=2C").Replace(s)
}

func (c *scramClient) Begin(user, password, authzID string) error {
	c.user, c.password, c.authzID = user, password, authzID
	c.step, c.done = 0, false
	return nil
}

func (c *scramClient) Done() bool { return c.done }

var errSCRAM = errors.New("scram")

func (c *scramClient) Step(challenge string) (string, error) {
	c.step++
	switch c.step {
	case 1:
		nonce, err := c.nonce()
		if err != nil {
			return "", fmt.Errorf("%w: nonce: %v", errSCRAM, err)
		}
		c.clientNonce = nonce
		c.gs2Header = "n,,"
		if c.authzID != "" {
			c.gs2Header = "n,a=" + saslName(c.authzID) + ","
		}
		c.firstBare = "n=" + saslName(c.user) + ",r=" + nonce
		return c.gs2Header + c.firstBare, nil
	case 2:
		return c.final(challenge)
	case 3:
		attrs := scramAttrs(challenge)
		if e, ok := attrs["e"]; ok {
			return "", fmt.Errorf("%w: server rejected the authentication: %s", errSCRAM, e)
		}
		v, err := base64.StdEncoding.DecodeString(attrs["v"])
		if err != nil || subtle.ConstantTimeCompare(v, c.serverSignature) != 1 {
			return "", fmt.Errorf("%w: server signature does not verify", errSCRAM)
		}
		c.done = true
		return "", nil
	}
	return "", fmt.Errorf("%w: unexpected step %d", errSCRAM, c.step)
}

func (c *scramClient) final(serverFirst string) (string, error) {
	attrs := scramAttrs(serverFirst)
	if e, ok := attrs["e"]; ok {
		return "", fmt.Errorf("%w: server rejected the authentication: %s", errSCRAM, e)
	}
	nonce := attrs["r"]
	if !strings.HasPrefix(nonce, c.clientNonce) || len(nonce) == len(c.clientNonce) {
		return "", fmt.Errorf("%w: server nonce does not extend the client nonce", errSCRAM)
	}
	salt, err := base64.StdEncoding.DecodeString(attrs["s"])
	if err != nil || len(salt) == 0 {
		return "", fmt.Errorf("%w: bad salt", errSCRAM)
	}
	iter, err := strconv.Atoi(attrs["i"])
	if err != nil || iter < 1 {
		return "", fmt.Errorf("%w: bad iteration count", errSCRAM)
	}
	size := c.newHash().Size()
	salted, err := pbkdf2.Key(c.newHash, c.password, salt, iter, size)
	if err != nil {
		return "", fmt.Errorf("%w: %v", errSCRAM, err)
	}
	clientKey := c.hmac(salted, "Client Key")
	h := c.newHash()
	h.Write(clientKey)
	storedKey := h.Sum(nil)
	withoutProof := "c=" + base64.StdEncoding.EncodeToString([]byte(c.gs2Header)) + ",r=" + nonce
	authMessage := c.firstBare + "," + serverFirst + "," + withoutProof
	proof := c.hmac(storedKey, authMessage)
	for i := range proof {
		proof[i] ^= clientKey[i]
	}
	c.serverSignature = c.hmac(c.hmac(salted, "Server Key"), authMessage)
	return withoutProof + ",p=" + base64.StdEncoding.EncodeToString(proof), nil
}

func (c *scramClient) hmac(key []byte, msg string) []byte {
	m := hmac.New(c.newHash, key)
	m.Write([]byte(msg))
	return m.Sum(nil)
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
