package sandbox

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"

	"github.com/IBM/sarama"
)

// A secure sandbox (Config.Secure) runs what production runs:
//
//   - Every broker has a SASL_SSL client listener accepting SCRAM-SHA-512,
//     SCRAM-SHA-256 and PLAIN, with a certificate signed by a CA generated
//     at start. Inter-broker and controller traffic stays PLAINTEXT on
//     loopback. The SCRAM users are created when the storage is formatted
//     (kafka-storage format --add-scram); PLAIN checks the same users'
//     passwords, which the broker reads from its environment through
//     EnvVarConfigProvider.
//   - Every broker also has an mTLS listener (SSL, client certificates
//     required, signed by the same CA): the principal is the certificate's
//     common name (ssl.principal.mapping.rules), so ACLs name it as User:<CN>
//     (ClientCertificate issues one). And an OAUTHBEARER listener (SASL_SSL)
//     whose validator is Kafka's unsecured one
//     (OAuthBearerUnsecuredValidatorCallbackHandler, the default): the
//     principal is a token's sub claim. A token endpoint on 127.0.0.1
//     (OAuthClient) hands out such tokens for the OAuth 2 client
//     credentials grant, so that a client logs in as production clients
//     do; Java clients may log in with unsecuredLoginStringClaim_sub
//     instead. Both listeners are ports of the same JVMs: they cost no
//     process, only two ports per broker.
//   - Connect workers serve REST over HTTPS with basic authentication
//     (BasicAuthSecurityRestExtension, JAAS PropertyFileLoginModule), and
//     their own Kafka clients use SASL_SSL with SCRAM-SHA-512 (GSSAPI with
//     Config.Kerberos: see kerberos.go), all set through the worker image's
//     environment variables.
//
// Credentials reach the processes only through their environment or files
// in the secrets directory, which Close always removes (also when
// Config.WorkDir is set). Nothing else written holds a credential.

// Users of every secure cluster. Each cluster has its own passwords.
const (
	// AdminUser is the user of the sandbox's own helpers and of tests.
	AdminUser = "admin"
	// MM2User is the user of the Connect workers' clients (target) and of
	// MirrorSourceConnector's clients (MirrorClientConfig).
	MM2User = "mm2"
	// RESTUser is the basic-auth user every Connect worker accepts.
	RESTUser = "operator"
)

// User is a user name and its password.
type User struct {
	Name     string
	Password string
}

// security is what a secure sandbox shares between its clusters and workers.
type security struct {
	certs  *certFiles
	rest   User // accepted by every worker
	tokens *tokenServer
	kdc    *kdc // nil without Config.Kerberos (kerberos.go)
}

func newSecurity(secretDir string, workers int) (*security, error) {
	hosts := []net.IP{net.IPv4(127, 0, 0, 1)}
	for i := range workers {
		hosts = append(hosts, net.IPv4(127, 0, 0, byte(firstWorkerIP4+i)))
	}
	certs, err := writeCerts(secretDir, hosts)
	if err != nil {
		return nil, err
	}
	tokens, err := newTokenServer()
	if err != nil {
		return nil, err
	}
	return &security{certs: certs, rest: User{RESTUser, newSecret("rest")}, tokens: tokens}, nil
}

func (sec *security) close() {
	if sec != nil && sec.tokens != nil {
		sec.tokens.close()
	}
	if sec != nil {
		sec.kdc.close()
	}
}

// ClientCertificate issues a client certificate with common name cn for
// the mTLS listeners; the brokers take cn as the principal (User:cn).
// Under Config.Authorizer only the admin and mm2 principals are super
// users: grant any other one what it needs (Broker.AllowPrefixed).
func (s *Sandbox) ClientCertificate(cn string) (ClientCert, error) {
	if s.sec == nil {
		return ClientCert{}, errors.New("sandbox: ClientCertificate needs a secure sandbox")
	}
	return s.sec.certs.clientCert(cn)
}

// OAuthClient registers a client of the sandbox's token endpoint under id
// with a new secret; the tokens it is given name id as their subject, the
// principal the OAUTHBEARER listeners see (User:id).
func (s *Sandbox) OAuthClient(id string) (OAuthClient, error) {
	if s.sec == nil {
		return OAuthClient{}, errors.New("sandbox: OAuthClient needs a secure sandbox")
	}
	return s.sec.tokens.add(id), nil
}

// newUsers returns a secure cluster's users with new passwords.
func newUsers(cluster string) []User {
	return []User{
		{AdminUser, newSecret(cluster + "-admin")},
		{MM2User, newSecret(cluster + "-mm2")},
	}
}

// plainJAASEnv names the broker's environment variable holding the PLAIN
// login module's user list.
const plainJAASEnv = "SANDBOX_BROKER_PLAIN_JAAS"

// brokerProps returns the listener and security lines of a secure node's
// server.properties. They hold no credential: the PLAIN users come from
// the environment (${env:...}).
func (sec *security) brokerProps(nd *Node, controller int) []string {
	const scram = "org.apache.kafka.common.security.scram.ScramLoginModule required;"
	others := fmt.Sprintf("INTERNAL://%s,MTLS://%s,OAUTH://%s", nd.internal, nd.mtls, nd.oauth)
	protocols := "SASL_SSL:SASL_SSL,INTERNAL:PLAINTEXT,MTLS:SSL,OAUTH:SASL_SSL,CONTROLLER:PLAINTEXT"
	var kerberos []string
	if sec.kdc != nil {
		others += ",KERBEROS://" + nd.kerberos
		protocols += ",KERBEROS:SASL_SSL"
		kerberos = sec.kdc.brokerProps()
	}
	// The SASL_SSL listener binds nd.listen and advertises nd.addr: the
	// same address, or Config.Latency's proxy in front of it.
	return append([]string{
		fmt.Sprintf("listeners=SASL_SSL://%s,%s,CONTROLLER://127.0.0.1:%d", nd.listen, others, controller),
		fmt.Sprintf("advertised.listeners=SASL_SSL://%s,%s", nd.addr, others),
		"controller.listener.names=CONTROLLER",
		"inter.broker.listener.name=INTERNAL",
		"listener.security.protocol.map=" + protocols,
		"sasl.enabled.mechanisms=SCRAM-SHA-512,SCRAM-SHA-256,PLAIN",
		// mTLS: client certificates signed by the sandbox CA, the
		// principal is the certificate's CN.
		"listener.name.mtls.ssl.client.auth=required",
		"listener.name.mtls.ssl.truststore.type=PEM",
		"listener.name.mtls.ssl.truststore.location=" + sec.certs.caPEM,
		"listener.name.mtls.ssl.principal.mapping.rules=RULE:^CN=([a-zA-Z0-9._-]+)$/$1/,DEFAULT",
		// OAUTHBEARER with Kafka's unsecured validator (the default
		// server callback handler): the principal is the token's sub.
		"listener.name.oauth.sasl.enabled.mechanisms=OAUTHBEARER",
		"listener.name.oauth.oauthbearer.sasl.jaas.config=org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required;",
		"ssl.keystore.type=PEM",
		"ssl.keystore.location=" + sec.certs.serverPEM,
		"config.providers=env",
		"config.providers.env.class=org.apache.kafka.common.config.provider.EnvVarConfigProvider",
		"listener.name.sasl_ssl.plain.sasl.jaas.config=${env:" + plainJAASEnv + "}",
		"listener.name.sasl_ssl.scram-sha-256.sasl.jaas.config=" + scram,
		"listener.name.sasl_ssl.scram-sha-512.sasl.jaas.config=" + scram,
	}, kerberos...)
}

// brokerEnv returns the environment that carries a cluster's PLAIN users.
func brokerEnv(users []User) []string {
	var b strings.Builder
	b.WriteString("org.apache.kafka.common.security.plain.PlainLoginModule required")
	for _, u := range users {
		fmt.Fprintf(&b, " user_%s=%q", u.Name, u.Password)
	}
	b.WriteString(";")
	return []string{plainJAASEnv + "=" + b.String()}
}

// formatArgs moves kafka-storage's main class and arguments, with an
// --add-scram for each user and SCRAM mechanism, into a java @argfile at
// path, so that no password is on a command line.
func formatArgs(args []string, users []User, path string) ([]string, error) {
	main := len(args) - 6 // kafka.tools.StorageTool format -t ID -c FILE
	var lines []string
	for _, a := range args[main:] {
		lines = append(lines, argfileQuote(a))
	}
	for _, u := range users {
		for _, m := range []string{"SCRAM-SHA-256", "SCRAM-SHA-512"} {
			lines = append(lines, "--add-scram", argfileQuote(fmt.Sprintf("%s=[name=%s,password=%s]", m, u.Name, u.Password)))
		}
	}
	if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
		return nil, err
	}
	return append(append([]string{}, args[:main]...), "@"+path), nil
}

// argfileQuote quotes an argument for a java @argfile.
func argfileQuote(a string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(a) + `"`
}

// jaas returns a client's sasl.jaas.config for user with SCRAM.
func scramJAAS(u User) string {
	return fmt.Sprintf(`org.apache.kafka.common.security.scram.ScramLoginModule required username=%q password=%q;`, u.Name, u.Password)
}

// Secure reports whether the sandbox was started with Config.Secure.
func (s *Sandbox) Secure() bool { return s.sec != nil }

// CAFile returns the path of the PEM file of the CA that signed every
// broker's and worker's certificate ("" in a plain sandbox). Close removes it.
func (s *Sandbox) CAFile() string {
	if s.sec == nil {
		return ""
	}
	return s.sec.certs.caPEM
}

// CAPEM returns the CA certificate of CAFile (nil in a plain sandbox).
func (s *Sandbox) CAPEM() []byte {
	if s.sec == nil {
		return nil
	}
	b, _ := os.ReadFile(s.sec.certs.caPEM)
	return b
}

// ConnectUser returns the basic-auth user every Connect worker accepts (the
// zero User in a plain sandbox).
func (s *Sandbox) ConnectUser() User {
	if s.sec == nil {
		return User{}
	}
	return s.sec.rest
}

// HTTPClient returns a client for the workers' REST API: trusting the
// sandbox CA when secure, http.DefaultClient's settings otherwise. It
// sends no credentials: add ConnectUser's with SetBasicAuth.
func (s *Sandbox) HTTPClient() *http.Client {
	if s.sec == nil {
		return &http.Client{}
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.TLSClientConfig = s.sec.tlsConfig()
	return &http.Client{Transport: tr}
}

func (sec *security) tlsConfig() *tls.Config {
	pool := x509.NewCertPool()
	if b, err := os.ReadFile(sec.certs.caPEM); err == nil {
		pool.AppendCertsFromPEM(b)
	}
	return &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
}

// SecurityProtocol returns the client listener's security.protocol:
// "PLAINTEXT", or "SASL_SSL" in a secure sandbox.
func (b *Broker) SecurityProtocol() string {
	if b.sec == nil {
		return "PLAINTEXT"
	}
	return "SASL_SSL"
}

// MTLSAddrs returns the mTLS listener of every node (SSL, client
// certificates required; "" entries in a plain sandbox).
func (b *Broker) MTLSAddrs() []string {
	var out []string
	for _, nd := range b.nodes {
		out = append(out, nd.mtls)
	}
	return out
}

// OAuthAddrs returns the OAUTHBEARER listener of every node (SASL_SSL).
func (b *Broker) OAuthAddrs() []string {
	var out []string
	for _, nd := range b.nodes {
		out = append(out, nd.oauth)
	}
	return out
}

// AllowPrefixed grants principal (such as "User:cutover-tool") every
// operation on the topics and groups whose names start with prefix, and
// DESCRIBE on the cluster, through the admin user: what a cutover tool or
// MM2 needs on a cluster with Config.Authorizer. ACLs reach every broker
// through the metadata log shortly after.
func (b *Broker) AllowPrefixed(ctx context.Context, principal, prefix string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	admin, err := sarama.NewClusterAdmin(b.Addrs(), b.SaramaConfig())
	if err != nil {
		return err
	}
	defer admin.Close()
	acl := func(op sarama.AclOperation) []*sarama.Acl {
		return []*sarama.Acl{{Principal: principal, Host: "*", Operation: op, PermissionType: sarama.AclPermissionAllow}}
	}
	for _, r := range []*sarama.ResourceAcls{
		{Resource: sarama.Resource{ResourceType: sarama.AclResourceTopic, ResourceName: prefix, ResourcePatternType: sarama.AclPatternPrefixed}, Acls: acl(sarama.AclOperationAll)},
		{Resource: sarama.Resource{ResourceType: sarama.AclResourceGroup, ResourceName: prefix, ResourcePatternType: sarama.AclPatternPrefixed}, Acls: acl(sarama.AclOperationAll)},
		{Resource: sarama.Resource{ResourceType: sarama.AclResourceCluster, ResourceName: "kafka-cluster", ResourcePatternType: sarama.AclPatternLiteral}, Acls: acl(sarama.AclOperationDescribe)},
	} {
		if err := admin.CreateACLs([]*sarama.ResourceAcls{r}); err != nil {
			return fmt.Errorf("sandbox: allow %s on %s: %w", principal, prefix, err)
		}
	}
	return nil
}

// Admin returns the cluster's admin user (the zero User for a plain
// cluster). It authenticates with SCRAM-SHA-512, SCRAM-SHA-256 or PLAIN.
func (b *Broker) Admin() User { return b.user(AdminUser) }

// MM2 returns the user of the Connect workers' and the connectors' clients.
func (b *Broker) MM2() User { return b.user(MM2User) }

func (b *Broker) user(name string) User {
	for _, u := range b.users {
		if u.Name == name {
			return u
		}
	}
	return User{}
}

// SaramaConfig returns NewSaramaConfig completed to reach the cluster's
// client listener: TLS trusting the sandbox CA and SASL PLAIN as the admin
// user when secure.
func (b *Broker) SaramaConfig() *sarama.Config {
	cfg := NewSaramaConfig()
	if b.sec == nil {
		return cfg
	}
	cfg.Net.TLS.Enable = true
	cfg.Net.TLS.Config = b.sec.tlsConfig()
	cfg.Net.SASL.Enable = true
	cfg.Net.SASL.Mechanism = sarama.SASLTypePlaintext
	cfg.Net.SASL.User = AdminUser
	cfg.Net.SASL.Password = b.Admin().Password
	return cfg
}

// Environment variables of every secure worker holding the JAAS
// configurations of MirrorSourceConnector's clients (see MirrorClientConfig).
const (
	sourceJAASEnv = "MM2_SOURCE_SASL_JAAS_CONFIG"
	targetJAASEnv = "MM2_TARGET_SASL_JAAS_CONFIG"
)

// MirrorClientConfig returns the MirrorSourceConnector settings that reach
// the source and target clusters (source.cluster.* and target.cluster.*:
// security protocol, SCRAM-SHA-512, the CA): empty in a plain sandbox. The
// JAAS configurations are references to the workers' environment
// (${env:MM2_SOURCE_SASL_JAAS_CONFIG}), resolved by the worker, so the
// connector's stored configuration holds no password.
func (s *Sandbox) MirrorClientConfig() map[string]string {
	out := map[string]string{}
	if s.sec == nil {
		return out
	}
	for prefix, env := range map[string]string{"source.cluster.": sourceJAASEnv, "target.cluster.": targetJAASEnv} {
		out[prefix+"security.protocol"] = "SASL_SSL"
		out[prefix+"sasl.mechanism"] = "SCRAM-SHA-512"
		out[prefix+"sasl.jaas.config"] = "${env:" + env + "}"
		out[prefix+"ssl.truststore.type"] = "PEM"
		out[prefix+"ssl.truststore.location"] = s.sec.certs.caPEM
	}
	return out
}

// workerEnv returns the environment of a secure worker: the image's
// variables for SASL_SSL clients, HTTPS REST and basic auth (see
// docker/mm2/README.md), and the connectors' JAAS configurations.
func (s *Sandbox) workerEnv(dir string, i int) ([]string, User, error) {
	c := s.sec.certs
	local := User{fmt.Sprintf("worker-%d", i), newSecret(fmt.Sprintf("worker%d", i))}
	users := filepath.Join(s.secretDir, fmt.Sprintf("worker-%d-users.properties", i))
	// PropertyFileLoginModule reads user=password lines. Each worker knows
	// the shared user and one of its own: a request authenticated by one
	// worker and forwarded is authenticated again by the leader.
	content := fmt.Sprintf("%s=%s\n%s=%s\n", s.sec.rest.Name, s.sec.rest.Password, local.Name, local.Password)
	if err := os.WriteFile(users, []byte(content), 0o600); err != nil {
		return nil, User{}, err
	}
	env := []string{
		"TMPDIR=" + dir, // the entrypoint writes the effective configuration there
		"CONNECT_SECURITY_PROTOCOL=SASL_SSL",
		"CONNECT_SASL_MECHANISM=SCRAM-SHA-512",
		"CONNECT_SASL_JAAS_CONFIG=" + scramJAAS(s.target.MM2()),
		"CONNECT_SSL_TRUSTSTORE_TYPE=PEM",
		"CONNECT_SSL_TRUSTSTORE_LOCATION=" + c.caPEM,
		"CONNECT_REST_SSL_KEYSTORE_TYPE=PKCS12",
		"CONNECT_REST_SSL_KEYSTORE_LOCATION=" + c.restKeystore,
		"CONNECT_REST_SSL_KEYSTORE_PASSWORD=" + c.storePassword,
		"CONNECT_REST_SSL_TRUSTSTORE_TYPE=PKCS12",
		"CONNECT_REST_SSL_TRUSTSTORE_LOCATION=" + c.restTruststore,
		"CONNECT_REST_SSL_TRUSTSTORE_PASSWORD=" + c.storePassword,
		"CONNECT_REST_BASIC_AUTH_FILE=" + users,
		sourceJAASEnv + "=" + scramJAAS(s.source.MM2()),
		targetJAASEnv + "=" + scramJAAS(s.target.MM2()),
	}
	if s.sec.kdc != nil {
		env = append(env, s.sec.kdc.workerEnv(s.target)...)
	}
	return env, local, nil
}
