package clientconf

import (
	"bytes"
	"crypto"
	"crypto/tls"
	"crypto/x509"
	"encoding/binary"
	"encoding/pem"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/mm2cutover/mm2cutover/errkind"
	"github.com/mm2cutover/mm2cutover/redact"

	keystore "github.com/pavlo-v-chernykh/keystore-go/v4"
	pkcs12 "software.sslmate.com/src/go-pkcs12"
)

// StoreType is ssl.truststore.type or ssl.keystore.type.
type StoreType string

// The store types Kafka clients read.
const (
	PEM    StoreType = "PEM"
	JKS    StoreType = "JKS"
	PKCS12 StoreType = "PKCS12"
)

// TLS is a Kafka client's ssl.* settings, with Kafka's meaning. The zero
// value verifies servers against the system roots and presents no
// certificate.
type TLS struct {
	// TruststoreLocation, TruststoreType and TruststorePassword are
	// ssl.truststore.location, .type and .password: the CAs that sign the
	// servers' certificates. An empty type means JKS, Kafka's default; a
	// JKS store may also be a PKCS12 file, as Java's JKS keystore type
	// reads both. A PEM file holds certificates and takes no password.
	TruststoreLocation string
	TruststoreType     StoreType
	TruststorePassword redact.Secret
	// TruststoreCertificates is ssl.truststore.certificates: the CAs as
	// PEM text (type PEM, no location).
	TruststoreCertificates string

	// KeystoreLocation, KeystoreType and KeystorePassword are
	// ssl.keystore.location, .type and .password: the client certificate
	// and its key, for servers that require one. A PEM file holds the
	// private key (PKCS#8, encrypted with KeyPassword or not) and the
	// certificate chain, and takes no store password; JKS and PKCS12
	// stores need their password.
	KeystoreLocation string
	KeystoreType     StoreType
	KeystorePassword redact.Secret
	// KeyPassword is ssl.key.password: the password of the private key in
	// a JKS store (default: KeystorePassword) or of an encrypted PEM key.
	KeyPassword redact.Secret
	// KeystoreKey and KeystoreCertificateChain are ssl.keystore.key and
	// ssl.keystore.certificate.chain: the key and chain as PEM text (type
	// PEM, no location).
	KeystoreKey              redact.Secret
	KeystoreCertificateChain string

	// SkipHostnameVerification is ssl.endpoint.identification.algorithm
	// set empty: the server's certificate must still verify against the
	// truststore, but may name another host.
	SkipHostnameVerification bool
}

// IsZero reports whether t sets nothing.
func (t TLS) IsZero() bool { return t == TLS{} }

// TLSKeys are the keys TLSFromProperties reads.
var TLSKeys = []string{
	"ssl.truststore.location", "ssl.truststore.type", "ssl.truststore.password", "ssl.truststore.certificates",
	"ssl.keystore.location", "ssl.keystore.type", "ssl.keystore.password", "ssl.key.password",
	"ssl.keystore.key", "ssl.keystore.certificate.chain", "ssl.endpoint.identification.algorithm",
}

// IgnoredTLSKeys are ssl.* keys of Kafka clients that this package accepts
// and does not apply: Go's TLS stack chooses protocols and cipher suites
// itself (TLS 1.2 and 1.3), and Java's provider and algorithm settings have
// no Go meaning.
var IgnoredTLSKeys = []string{
	"ssl.protocol", "ssl.enabled.protocols", "ssl.cipher.suites", "ssl.provider",
	"ssl.keymanager.algorithm", "ssl.trustmanager.algorithm", "ssl.secure.random.implementation",
}

// StoreError reports a store or setting that cannot be used. It never holds
// a password.
type StoreError struct {
	Setting string // the key at fault, such as ssl.keystore.location
	Reason  string
	Err     error
}

func (e *StoreError) Error() string {
	s := "clientconf: " + e.Setting + ": " + e.Reason
	if e.Err != nil {
		s += ": " + words(e.Err)
	}
	return s
}

// Unwrap returns the underlying error.
func (e *StoreError) Unwrap() error { return e.Err }

// ErrorKind is errkind.Rejected: fix the setting.
func (e *StoreError) ErrorKind() errkind.Kind { return errkind.Rejected }

// TLSFromProperties reads the TLSKeys of props (prefix included: "" for a
// client file, "listeners.https." for Connect's REST settings). Other keys
// are left to the caller. It returns a *StoreError for a value Kafka would
// refuse: an unknown store type, a password beside a PEM store, inline PEM
// with a location, or an endpoint identification algorithm other than
// https or empty.
func TLSFromProperties(props map[string]string, prefix string) (TLS, error) {
	get := func(k string) string { return props[prefix+k] }
	t := TLS{
		TruststoreLocation:       get("ssl.truststore.location"),
		TruststoreType:           StoreType(strings.ToUpper(get("ssl.truststore.type"))),
		TruststorePassword:       redact.Secret(get("ssl.truststore.password")),
		TruststoreCertificates:   get("ssl.truststore.certificates"),
		KeystoreLocation:         get("ssl.keystore.location"),
		KeystoreType:             StoreType(strings.ToUpper(get("ssl.keystore.type"))),
		KeystorePassword:         redact.Secret(get("ssl.keystore.password")),
		KeyPassword:              redact.Secret(get("ssl.key.password")),
		KeystoreKey:              redact.Secret(get("ssl.keystore.key")),
		KeystoreCertificateChain: get("ssl.keystore.certificate.chain"),
	}
	if v, ok := props[prefix+"ssl.endpoint.identification.algorithm"]; ok {
		switch strings.ToLower(strings.TrimSpace(v)) {
		case "":
			t.SkipHostnameVerification = true
		case "https":
		default:
			return TLS{}, &StoreError{Setting: prefix + "ssl.endpoint.identification.algorithm", Reason: fmt.Sprintf("%q: want https or empty", v)}
		}
	}
	return t, t.Validate()
}

// Validate checks the settings as Kafka's DefaultSslEngineFactory does,
// without reading a file.
func (t TLS) Validate() error {
	for _, s := range []struct {
		key string
		typ StoreType
	}{{"ssl.truststore.type", t.TruststoreType}, {"ssl.keystore.type", t.KeystoreType}} {
		switch s.typ {
		case "", PEM, JKS, PKCS12:
		default:
			return &StoreError{Setting: s.key, Reason: fmt.Sprintf("%q: want PEM, JKS or PKCS12", string(s.typ))}
		}
	}
	switch {
	case t.TruststoreCertificates != "" && t.TruststoreLocation != "":
		return &StoreError{Setting: "ssl.truststore.certificates", Reason: "given with ssl.truststore.location: give one"}
	case t.TruststoreCertificates != "" && t.TruststoreType != PEM:
		return &StoreError{Setting: "ssl.truststore.certificates", Reason: "needs ssl.truststore.type=PEM"}
	case t.TruststoreType == PEM && t.TruststorePassword != "":
		return &StoreError{Setting: "ssl.truststore.password", Reason: "a PEM truststore takes no password"}
	case t.TruststorePassword != "" && t.TruststoreLocation == "":
		return &StoreError{Setting: "ssl.truststore.password", Reason: "given without ssl.truststore.location"}
	case t.KeystoreKey != "" && t.KeystoreLocation != "":
		return &StoreError{Setting: "ssl.keystore.key", Reason: "given with ssl.keystore.location: give one"}
	case (t.KeystoreKey != "") != (t.KeystoreCertificateChain != ""):
		return &StoreError{Setting: "ssl.keystore.key", Reason: "ssl.keystore.key and ssl.keystore.certificate.chain go together"}
	case t.KeystoreKey != "" && t.KeystoreType != PEM:
		return &StoreError{Setting: "ssl.keystore.key", Reason: "needs ssl.keystore.type=PEM"}
	case t.KeystoreType == PEM && t.KeystorePassword != "":
		return &StoreError{Setting: "ssl.keystore.password", Reason: "a PEM keystore takes no store password, only ssl.key.password for an encrypted key"}
	case t.KeystoreLocation != "" && t.KeystoreType != PEM && t.KeystorePassword == "":
		return &StoreError{Setting: "ssl.keystore.password", Reason: "required with a " + string(orJKS(t.KeystoreType)) + " keystore"}
	case t.KeystorePassword != "" && t.KeystoreLocation == "":
		return &StoreError{Setting: "ssl.keystore.password", Reason: "given without ssl.keystore.location"}
	}
	return nil
}

func orJKS(t StoreType) StoreType {
	if t == "" {
		return JKS
	}
	return t
}

// Config reads the stores and returns the TLS configuration of a client:
// RootCAs from the truststore (nil, the system roots, without one) and the
// client certificate from the keystore. It returns a *StoreError naming the
// setting at fault (a file that cannot be read, a wrong password, a store
// without a key).
func (t TLS) Config() (*tls.Config, error) {
	if err := t.Validate(); err != nil {
		return nil, err
	}
	cfg := &tls.Config{MinVersion: tls.VersionTLS12}
	roots, err := t.roots()
	if err != nil {
		return nil, err
	}
	cfg.RootCAs = roots
	cert, err := t.certificate()
	if err != nil {
		return nil, err
	}
	if cert != nil {
		cfg.Certificates = []tls.Certificate{*cert}
	}
	if t.SkipHostnameVerification {
		VerifyWithoutHostname(cfg)
	}
	return cfg, nil
}

// VerifyWithoutHostname makes cfg verify the server's chain against
// cfg.RootCAs (the system roots when nil) but not its host name, as Kafka
// clients do with ssl.endpoint.identification.algorithm empty.
func VerifyWithoutHostname(cfg *tls.Config) {
	roots := cfg.RootCAs
	cfg.InsecureSkipVerify = true // the chain is verified below, without the host name
	cfg.VerifyConnection = func(cs tls.ConnectionState) error {
		if len(cs.PeerCertificates) == 0 {
			return errors.New("the server sent no certificate")
		}
		inter := x509.NewCertPool()
		for _, c := range cs.PeerCertificates[1:] {
			inter.AddCert(c)
		}
		_, err := cs.PeerCertificates[0].Verify(x509.VerifyOptions{Roots: roots, Intermediates: inter})
		if err != nil {
			return &tls.CertificateVerificationError{UnverifiedCertificates: cs.PeerCertificates, Err: err}
		}
		return nil
	}
}

func (t TLS) roots() (*x509.CertPool, error) {
	const key = "ssl.truststore.location"
	if t.TruststoreCertificates != "" {
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM([]byte(t.TruststoreCertificates)) {
			return nil, &StoreError{Setting: "ssl.truststore.certificates", Reason: "no PEM certificate found"}
		}
		return pool, nil
	}
	if t.TruststoreLocation == "" {
		return nil, nil
	}
	data, err := ReadFile(t.TruststoreLocation)
	if err != nil {
		return nil, &StoreError{Setting: key, Reason: "cannot read", Err: err}
	}
	var certs []*x509.Certificate
	switch kind := detect(data, t.TruststoreType); kind {
	case PEM:
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(data) {
			return nil, &StoreError{Setting: key, Reason: "no PEM certificate found in " + t.TruststoreLocation}
		}
		return pool, nil
	case JKS:
		ks := keystore.New()
		if err := ks.Load(bytes.NewReader(data), []byte(t.TruststorePassword)); err != nil {
			return nil, &StoreError{Setting: key, Reason: "cannot load the JKS truststore (wrong ssl.truststore.password, or none given: this tool always checks the store's integrity)", Err: errors.New(scrub(err))}
		}
		for _, alias := range ks.Aliases() {
			if e, err := ks.GetTrustedCertificateEntry(alias); err == nil {
				c, err := x509.ParseCertificate(e.Certificate.Content)
				if err != nil {
					return nil, &StoreError{Setting: key, Reason: "entry " + alias + " is not an X.509 certificate", Err: err}
				}
				certs = append(certs, c)
			} else if chain, err := ks.GetPrivateKeyEntryCertificateChain(alias); err == nil && len(chain) > 0 {
				// Java trusts the first certificate of a key entry too.
				if c, err := x509.ParseCertificate(chain[0].Content); err == nil {
					certs = append(certs, c)
				}
			}
		}
	case PKCS12:
		certs, err = pkcs12.DecodeTrustStore(data, string(t.TruststorePassword))
		if err != nil {
			return nil, &StoreError{Setting: key, Reason: "cannot load the PKCS12 truststore (wrong ssl.truststore.password?)", Err: err}
		}
	default:
		return nil, &StoreError{Setting: key, Reason: fmt.Sprintf("%s is not a %s store", t.TruststoreLocation, orJKS(t.TruststoreType))}
	}
	if len(certs) == 0 {
		return nil, &StoreError{Setting: key, Reason: t.TruststoreLocation + " holds no certificate"}
	}
	pool := x509.NewCertPool()
	for _, c := range certs {
		pool.AddCert(c)
	}
	return pool, nil
}

// scrub keeps a library's error text but never a password: keystore-go's
// errors name no secret, but are cut short to be safe.
func scrub(err error) string {
	s := err.Error()
	if len(s) > 200 {
		s = s[:200]
	}
	return s
}

// detect returns the type of a store's bytes, given its declared type:
// PEM text, a JKS file (magic 0xFEEDFEED) or DER (PKCS12). A declared JKS
// store may be PKCS12, as Java reads both under that type; a declared PEM
// or PKCS12 store must be one. "" means it is none of them.
func detect(data []byte, declared StoreType) StoreType {
	var actual StoreType
	switch {
	case bytes.Contains(data, []byte("-----BEGIN ")):
		actual = PEM
	case len(data) >= 4 && binary.BigEndian.Uint32(data) == 0xFEEDFEED:
		actual = JKS
	case len(data) > 0 && data[0] == 0x30:
		actual = PKCS12
	}
	switch declared {
	case "", JKS:
		if actual == JKS || actual == PKCS12 {
			return actual
		}
		return ""
	case actual:
		return actual
	}
	return ""
}

func (t TLS) certificate() (*tls.Certificate, error) {
	const key = "ssl.keystore.location"
	if t.KeystoreKey != "" {
		c, err := pemKeyPair([]byte(t.KeystoreCertificateChain), []byte(t.KeystoreKey), t.KeyPassword)
		if err != nil {
			return nil, &StoreError{Setting: "ssl.keystore.key", Reason: "cannot use the key and ssl.keystore.certificate.chain", Err: err}
		}
		return c, nil
	}
	if t.KeystoreLocation == "" {
		return nil, nil
	}
	data, err := ReadFile(t.KeystoreLocation)
	if err != nil {
		return nil, &StoreError{Setting: key, Reason: "cannot read", Err: err}
	}
	switch detect(data, t.KeystoreType) {
	case PEM:
		c, err := pemKeyPair(data, data, t.KeyPassword)
		if err != nil {
			return nil, &StoreError{Setting: key, Reason: "cannot use the PEM keystore " + t.KeystoreLocation, Err: err}
		}
		return c, nil
	case JKS:
		ks := keystore.New()
		if err := ks.Load(bytes.NewReader(data), []byte(t.KeystorePassword)); err != nil {
			return nil, &StoreError{Setting: key, Reason: "cannot load the JKS keystore (wrong ssl.keystore.password?)", Err: errors.New(scrub(err))}
		}
		keyPassword := t.KeyPassword
		if keyPassword == "" {
			keyPassword = t.KeystorePassword
		}
		for _, alias := range ks.Aliases() {
			if !ks.IsPrivateKeyEntry(alias) {
				continue
			}
			e, err := ks.GetPrivateKeyEntry(alias, []byte(keyPassword))
			if err != nil {
				return nil, &StoreError{Setting: "ssl.key.password", Reason: "cannot decrypt the key of entry " + alias + " (wrong ssl.key.password?)", Err: errors.New(scrub(err))}
			}
			priv, err := x509.ParsePKCS8PrivateKey(e.PrivateKey)
			if err != nil {
				return nil, &StoreError{Setting: key, Reason: "the key of entry " + alias + " is not PKCS#8", Err: err}
			}
			var chain [][]byte
			for _, c := range e.CertificateChain {
				chain = append(chain, c.Content)
			}
			return keyPair(priv, chain, key)
		}
		return nil, &StoreError{Setting: key, Reason: t.KeystoreLocation + " holds no private key entry"}
	case PKCS12:
		priv, leaf, cas, err := pkcs12.DecodeChain(data, string(t.KeystorePassword))
		if err != nil {
			return nil, &StoreError{Setting: key, Reason: "cannot load the PKCS12 keystore (wrong ssl.keystore.password?)", Err: err}
		}
		chain := [][]byte{leaf.Raw}
		for _, c := range cas {
			chain = append(chain, c.Raw)
		}
		return keyPair(priv, chain, key)
	}
	return nil, &StoreError{Setting: key, Reason: fmt.Sprintf("%s is not a %s store", t.KeystoreLocation, orJKS(t.KeystoreType))}
}

func keyPair(priv any, chain [][]byte, key string) (*tls.Certificate, error) {
	signer, ok := priv.(crypto.Signer)
	if !ok || len(chain) == 0 {
		return nil, &StoreError{Setting: key, Reason: "the key entry has no usable key or certificate"}
	}
	leaf, err := x509.ParseCertificate(chain[0])
	if err != nil {
		return nil, &StoreError{Setting: key, Reason: "the key entry's certificate does not parse", Err: err}
	}
	return &tls.Certificate{Certificate: chain, PrivateKey: signer, Leaf: leaf}, nil
}

// pemKeyPair reads the certificates of certPEM and the private key of
// keyPEM: PKCS#8 ("PRIVATE KEY"), encrypted PKCS#8 ("ENCRYPTED PRIVATE
// KEY", PBES2, with password), or for convenience PKCS#1 and SEC 1 keys.
func pemKeyPair(certPEM, keyPEM []byte, password redact.Secret) (*tls.Certificate, error) {
	var chain [][]byte
	var keyDER []byte
	var encrypted bool
	for rest := certPEM; ; {
		var b *pem.Block
		if b, rest = pem.Decode(rest); b == nil {
			break
		}
		if b.Type == "CERTIFICATE" {
			chain = append(chain, b.Bytes)
		}
	}
	for rest := keyPEM; ; {
		var b *pem.Block
		if b, rest = pem.Decode(rest); b == nil {
			break
		}
		if strings.HasSuffix(b.Type, "PRIVATE KEY") && keyDER == nil {
			keyDER, encrypted = b.Bytes, b.Type == "ENCRYPTED PRIVATE KEY"
			if !encrypted && b.Type != "PRIVATE KEY" {
				if k, err := x509.ParsePKCS1PrivateKey(b.Bytes); err == nil {
					return finish(chain, k)
				}
				if k, err := x509.ParseECPrivateKey(b.Bytes); err == nil {
					return finish(chain, k)
				}
				return nil, fmt.Errorf("a %s block that does not parse", b.Type)
			}
		}
	}
	if keyDER == nil {
		return nil, errors.New("no private key found")
	}
	switch {
	case encrypted && password == "":
		return nil, errors.New("the key is encrypted: give ssl.key.password")
	case encrypted:
		der, err := decryptPKCS8(keyDER, []byte(password))
		if err != nil {
			return nil, err
		}
		keyDER = der
	case password != "":
		return nil, errors.New("ssl.key.password is given but the key is not encrypted")
	}
	k, err := x509.ParsePKCS8PrivateKey(keyDER)
	if err != nil {
		return nil, fmt.Errorf("the private key is not PKCS#8: %w", err)
	}
	return finish(chain, k)
}

func finish(chain [][]byte, k any) (*tls.Certificate, error) {
	if len(chain) == 0 {
		return nil, errors.New("no certificate found")
	}
	c, err := keyPair(k, chain, "")
	if err != nil {
		return nil, err
	}
	// The key must belong to the first certificate.
	if pub, ok := c.PrivateKey.(crypto.Signer); ok {
		type equaler interface{ Equal(crypto.PublicKey) bool }
		if e, ok := pub.Public().(equaler); ok && !e.Equal(c.Leaf.PublicKey) {
			return nil, errors.New("the private key does not match the first certificate")
		}
	}
	return c, nil
}

// SortedKeys returns the keys of m in order, for messages.
func SortedKeys(m map[string]bool) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
