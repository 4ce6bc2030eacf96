package kafkaadmin

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"log/slog"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/mm2cutover/mm2cutover/clientconf"
	"github.com/mm2cutover/mm2cutover/redact"

	"github.com/IBM/sarama"
)

// SecurityProtocol is Kafka's security.protocol: how a client connects to
// the brokers.
type SecurityProtocol string

// The security protocols Kafka clients support.
const (
	Plaintext     SecurityProtocol = "PLAINTEXT"
	SSL           SecurityProtocol = "SSL"
	SASLPlaintext SecurityProtocol = "SASL_PLAINTEXT"
	SASLSSL       SecurityProtocol = "SASL_SSL"
)

func (p SecurityProtocol) tls() bool  { return p == SSL || p == SASLSSL }
func (p SecurityProtocol) sasl() bool { return p == SASLPlaintext || p == SASLSSL }

// SASLMechanism is Kafka's sasl.mechanism.
type SASLMechanism string

// The SASL mechanisms this package supports.
const (
	Plain       SASLMechanism = "PLAIN"
	ScramSHA256 SASLMechanism = "SCRAM-SHA-256"
	ScramSHA512 SASLMechanism = "SCRAM-SHA-512"
	// OAuthBearer takes its token as Config.OAuth says, with no Username
	// or Password.
	OAuthBearer SASLMechanism = "OAUTHBEARER"
	// GSSAPI is Kerberos, Kafka's default mechanism: Username is the
	// client's principal, name[/instance][@REALM] (without a realm, the
	// default_realm of krb5.conf), and a keytab (Kerberos.KeytabFile) or
	// Password proves it; Kerberos.ServiceName names the brokers'
	// principal. The Kerberos client is sarama's
	// (github.com/jcmturner/gokrb5): on every connection it logs in at
	// the KDCs krb5.conf names and asks for a ticket to the broker.
	GSSAPI SASLMechanism = "GSSAPI"
)

// TLSConfig holds the TLS settings used with the SSL and SASL_SSL
// protocols. CAFile, CertFile and KeyFile are PEM files; Stores holds
// Kafka's own ssl.* settings instead (JKS, PKCS12 or PEM stores with their
// passwords, inline PEM, no hostname verification), as a client properties
// file sets them ([ConfigFromProperties]). Files are read by [NewClient].
type TLSConfig struct {
	// CAFile holds the certificates that sign the brokers' certificates
	// (ssl.truststore). Empty means the system roots.
	CAFile string
	// CertFile and KeyFile hold the client certificate and its key, for
	// brokers that require client authentication (ssl.keystore). Both or
	// neither.
	CertFile, KeyFile string
	// ServerName is the name to verify the brokers' certificates against.
	// Empty means the host of each broker's address.
	ServerName string
	// Stores are the ssl.* truststore and keystore settings of a Kafka
	// client. Its truststore excludes CAFile, its keystore CertFile and
	// KeyFile.
	Stores clientconf.TLS
}

// Config configures a [Client]. The zero value is not usable:
// BootstrapServers is required. Printing a Config never shows the
// password.
type Config struct {
	// BootstrapServers are "host:port" addresses of some brokers
	// (bootstrap.servers).
	BootstrapServers []string
	// ClientID is sent with every request (client.id). Empty means
	// "mm2cutover".
	ClientID string
	// SecurityProtocol is how to connect. Empty means PLAINTEXT.
	SecurityProtocol SecurityProtocol
	// SASLMechanism, Username and Password authenticate with SASL_PLAINTEXT
	// and SASL_SSL, and must be empty otherwise. With OAuthBearer, OAuth
	// says where the token comes from and Username and Password stay
	// empty. With GSSAPI, Username is the Kerberos principal and Kerberos
	// holds the rest: a keytab proves the principal, or Password does.
	SASLMechanism SASLMechanism
	Username      string
	Password      redact.Secret
	OAuth         OAuthConfig
	Kerberos      KerberosConfig
	// TLS is used with SSL and SASL_SSL, and must be empty otherwise.
	TLS TLSConfig
	// RequestTimeout bounds dialing and each request's round trip. Zero
	// means 30s.
	RequestTimeout time.Duration
	// RetryTimeout bounds how long a call retries transient errors, such as
	// a leader that moved or a broker that is restarting. Zero means 30s.
	RetryTimeout time.Duration
	// UnreachableTimeout bounds how long a call retries while no broker
	// has ever answered this Client (connections refused, timed out,
	// broken): then it fails with an *UnreachableError. Once a broker has
	// answered, a call that gets no answer meets a cluster restarting and
	// retries for RetryTimeout. Zero means 10s; never more than
	// RetryTimeout.
	UnreachableTimeout time.Duration
	// Logger receives retry notices and, at Info level, the progress of
	// long waits (ReadCommitWindow). Nil means discard.
	Logger *slog.Logger
	// UnknownProperties are the keys of the client properties file the
	// Config was read from (ConfigFromProperties) that are no Kafka client
	// setting this package knows — a typo such as sasl.jaas.confg, a newer
	// Kafka's setting, another tool's — sorted. They are not used: NewClient
	// warns about them once, through Logger, naming them. A key that looks
	// like key material (redact.IsKeyMaterial) is never listed:
	// redact.Redacted stands for all of them.
	UnknownProperties []string
	// Sarama, when not nil, completes the sarama configuration of every
	// call after this package has filled it from the fields above: bring
	// your own client settings, such as SASL OAUTHBEARER with a
	// TokenProvider, Kerberos from a ticket cache, a cloud provider's IAM
	// mechanism, or TLS set up in code. Leave SASLMechanism, Username and Password empty for a
	// mechanism set here. It is called once by NewClient, which reports
	// its error, then once per Client call (it must be safe for concurrent
	// use). Whatever it sets, the package keeps its own
	// dialer (cancellation and request counting), its retries (sarama's
	// are off) and no topic auto-creation; TLS enabled here (Net.TLS) is
	// done by that dialer with Net.TLS.Config, and a dialer set here
	// (Net.Proxy.Enable and Net.Proxy.Dialer: a SOCKS proxy, a tunnel) makes
	// the TCP connections under it. An error it returns is
	// reported as a [*ConfigError] for the field "Sarama". encoding/json
	// skips it (a function has no JSON form).
	Sarama func(*sarama.Config) error `json:"-"`
}

// String describes the config with the password redacted.
func (c Config) String() string {
	return fmt.Sprintf("kafkaadmin.Config{BootstrapServers:%v ClientID:%q SecurityProtocol:%s SASLMechanism:%s Username:%q Password:%q OAuth:%s Kerberos:%s TLS:%+v RequestTimeout:%v RetryTimeout:%v}",
		c.BootstrapServers, c.ClientID, c.protocol(), c.SASLMechanism, c.Username, c.Password.String(), c.OAuth, c.Kerberos, c.TLS, c.RequestTimeout, c.RetryTimeout)
}

// String describes the OAuth settings with the client secret redacted.
func (o OAuthConfig) String() string {
	return fmt.Sprintf("{TokenEndpointURL:%q ClientID:%q ClientSecret:%q Scope:%q UnsecuredSubject:%q Extensions:%v}",
		o.TokenEndpointURL, o.ClientID, o.ClientSecret.String(), o.Scope, o.UnsecuredSubject, extensionNames(o.Extensions))
}

// GoString is String, for the %#v verb.
func (o OAuthConfig) GoString() string { return o.String() }

// GoString is String, for the %#v verb.
func (c Config) GoString() string { return c.String() }

// LogValue describes the config for log/slog, with the password redacted.
func (c Config) LogValue() slog.Value {
	return slog.GroupValue(
		slog.Any("bootstrap_servers", c.BootstrapServers),
		slog.String("client_id", c.ClientID),
		slog.String("security_protocol", string(c.protocol())),
		slog.String("sasl_mechanism", string(c.SASLMechanism)),
		slog.String("username", c.Username),
		slog.String("password", c.Password.String()),
		slog.String("oauth", c.OAuth.String()),
		slog.String("kerberos", c.Kerberos.String()),
	)
}

func (c Config) protocol() SecurityProtocol {
	if c.SecurityProtocol == "" {
		return Plaintext
	}
	return c.SecurityProtocol
}

// Validate checks the config without reading files or contacting Kafka. It
// returns a [*ConfigError] naming the first bad field.
func (c Config) Validate() error {
	if len(c.BootstrapServers) == 0 {
		return &ConfigError{Field: "BootstrapServers", Reason: "at least one host:port is required"}
	}
	for _, addr := range c.BootstrapServers {
		host, port, err := net.SplitHostPort(addr)
		if err != nil || host == "" {
			return &ConfigError{Field: "BootstrapServers", Reason: fmt.Sprintf("%q is not host:port", addr)}
		}
		if n, err := strconv.Atoi(port); err != nil || n <= 0 || n > 65535 {
			return &ConfigError{Field: "BootstrapServers", Reason: fmt.Sprintf("%q has an invalid port", addr)}
		}
	}
	if strings.ContainsAny(c.ClientID, "\x00\n") {
		return &ConfigError{Field: "ClientID", Reason: "contains a control character"}
	}
	p := c.protocol()
	switch p {
	case Plaintext, SSL, SASLPlaintext, SASLSSL:
	default:
		return &ConfigError{Field: "SecurityProtocol", Reason: fmt.Sprintf("%q is not one of PLAINTEXT, SSL, SASL_PLAINTEXT, SASL_SSL", string(p))}
	}
	if p.sasl() {
		if c.SASLMechanism != GSSAPI && !c.Kerberos.IsZero() {
			return &ConfigError{Field: "Kerberos", Reason: "Kerberos settings given with " + string(c.SASLMechanism)}
		}
		switch c.SASLMechanism {
		case Plain, ScramSHA256, ScramSHA512:
			if !c.OAuth.IsZero() {
				return &ConfigError{Field: "OAuth", Reason: "OAuth settings given with " + string(c.SASLMechanism)}
			}
		case OAuthBearer:
			if c.Username != "" || c.Password != "" {
				return &ConfigError{Field: "Username", Reason: "OAUTHBEARER takes no Username or Password: see OAuth"}
			}
			return c.validateRest(p, c.OAuth.validate())
		case GSSAPI:
			if !c.OAuth.IsZero() {
				return &ConfigError{Field: "OAuth", Reason: "OAuth settings given with GSSAPI"}
			}
			return c.validateRest(p, c.validateKerberos())
		case "":
			return &ConfigError{Field: "SASLMechanism", Reason: "required with " + string(p)}
		default:
			return &ConfigError{Field: "SASLMechanism", Reason: fmt.Sprintf("%q is not one of PLAIN, SCRAM-SHA-256, SCRAM-SHA-512, OAUTHBEARER, GSSAPI", string(c.SASLMechanism))}
		}
		if c.Username == "" {
			return &ConfigError{Field: "Username", Reason: "required with " + string(p)}
		}
		if c.Password == "" {
			return &ConfigError{Field: "Password", Reason: "required with " + string(p)}
		}
	} else if c.SASLMechanism != "" || c.Username != "" || c.Password != "" || !c.OAuth.IsZero() || !c.Kerberos.IsZero() {
		return &ConfigError{Field: "SASLMechanism", Reason: "SASL settings given but " + string(p) + " does not use SASL"}
	}
	return c.validateRest(p, nil)
}

// validateRest checks what follows the SASL settings, unless saslErr is
// already an error.
func (c Config) validateRest(p SecurityProtocol, saslErr error) error {
	if saslErr != nil {
		return saslErr
	}
	if p.tls() {
		if (c.TLS.CertFile == "") != (c.TLS.KeyFile == "") {
			return &ConfigError{Field: "TLS.CertFile", Reason: "CertFile and KeyFile go together"}
		}
		st := c.TLS.Stores
		if c.TLS.CAFile != "" && (st.TruststoreLocation != "" || st.TruststoreCertificates != "") {
			return &ConfigError{Field: "TLS.CAFile", Reason: "given with a truststore in TLS.Stores: give one"}
		}
		if c.TLS.CertFile != "" && (st.KeystoreLocation != "" || st.KeystoreKey != "") {
			return &ConfigError{Field: "TLS.CertFile", Reason: "given with a keystore in TLS.Stores: give one"}
		}
		if err := st.Validate(); err != nil {
			return &ConfigError{Field: "TLS.Stores", Reason: "rejected", Err: err}
		}
	} else if c.TLS != (TLSConfig{}) {
		return &ConfigError{Field: "TLS", Reason: "TLS settings given but " + string(p) + " does not use TLS"}
	}
	if c.RequestTimeout < 0 {
		return &ConfigError{Field: "RequestTimeout", Reason: "negative"}
	}
	if c.UnreachableTimeout < 0 {
		return &ConfigError{Field: "UnreachableTimeout", Reason: "negative"}
	}
	if c.RetryTimeout < 0 {
		return &ConfigError{Field: "RetryTimeout", Reason: "negative"}
	}
	return nil
}

// tlsConfig reads the TLS files. It returns nil for protocols without TLS.
func (c Config) tlsConfig() (*tls.Config, error) {
	if !c.protocol().tls() {
		return nil, nil
	}
	tc, err := c.TLS.Stores.Config()
	if err != nil {
		return nil, &ConfigError{Field: "TLS.Stores", Reason: "cannot load", Err: err}
	}
	tc.ServerName = c.TLS.ServerName
	if c.TLS.CAFile != "" {
		pem, err := clientconf.ReadFile(c.TLS.CAFile) // bounded: /dev/zero is not read whole
		if err != nil {
			return nil, &ConfigError{Field: "TLS.CAFile", Reason: "cannot read", Err: err}
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, &ConfigError{Field: "TLS.CAFile", Reason: "no PEM certificate found in " + c.TLS.CAFile}
		}
		tc.RootCAs = pool
		if c.TLS.Stores.SkipHostnameVerification {
			clientconf.VerifyWithoutHostname(tc)
		}
	}
	if c.TLS.CertFile != "" {
		cert, err := loadKeyPair(c.TLS.CertFile, c.TLS.KeyFile)
		if err != nil {
			return nil, &ConfigError{Field: "TLS.CertFile", Reason: "cannot load the client certificate and key", Err: err}
		}
		tc.Certificates = []tls.Certificate{cert}
	}
	return tc, nil
}

// loadKeyPair is tls.LoadX509KeyPair with the files read through
// clientconf.ReadFile, bounded.
func loadKeyPair(certFile, keyFile string) (tls.Certificate, error) {
	certPEM, err := clientconf.ReadFile(certFile)
	if err != nil {
		return tls.Certificate{}, err
	}
	keyPEM, err := clientconf.ReadFile(keyFile)
	if err != nil {
		return tls.Certificate{}, err
	}
	return tls.X509KeyPair(certPEM, keyPEM)
}
