package sandbox

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"

	pkcs12 "software.sslmate.com/src/go-pkcs12"
)

// certFiles are the TLS files of a secure sandbox, all in its secrets
// directory: a throwaway CA and one server certificate for every loopback
// address the sandbox uses (brokers on 127.0.0.1, workers on 127.0.0.2 and
// up). The CA's private key is never written; it stays in memory to sign
// the client certificates of the mTLS listeners (ClientCertificate).
type certFiles struct {
	dir            string
	ca             *x509.Certificate
	caKey          *ecdsa.PrivateKey
	caPEM          string // the CA certificate (PEM): the truststore of every client
	serverPEM      string // the server's private key (PKCS#8, unencrypted) and certificate chain (PEM): the brokers' keystore
	restKeystore   string // the same key and chain as PKCS#12: Jetty (Connect REST) reads no PEM
	restTruststore string // the CA as a PKCS#12 truststore, for workers forwarding to each other
	storePassword  string // password of both PKCS#12 files
}

// writeCerts generates the CA and the server certificate and writes the
// files of certFiles into dir. hosts are the IP addresses the server
// certificate is valid for (as IP SANs), besides "localhost".
//
// Kafka reads PEM keystores and truststores (ssl.keystore.type=PEM); Kafka
// Connect's REST server and the client it forwards requests with go through
// Jetty, which reads only Java keystore types, hence the PKCS#12 copies
// (encoded as Java 12 and later read them).
func writeCerts(dir string, hosts []net.IP) (*certFiles, error) {
	now := time.Now()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	caTmpl := &x509.Certificate{
		SerialNumber:          serial(),
		Subject:               pkix.Name{CommonName: "mm2cutover sandbox CA " + hex.EncodeToString(serial().Bytes()[:4])},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(7 * 24 * time.Hour),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign,
		BasicConstraintsValid: true,
		IsCA:                  true,
		MaxPathLenZero:        true,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		return nil, fmt.Errorf("sandbox ca: %w", err)
	}
	ca, err := x509.ParseCertificate(caDER)
	if err != nil {
		return nil, err
	}

	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial(),
		Subject:      pkix.Name{CommonName: "localhost"},
		DNSNames:     []string{"localhost"},
		IPAddresses:  hosts,
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.Add(7 * 24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		return nil, fmt.Errorf("sandbox server certificate: %w", err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return nil, err
	}

	f := &certFiles{
		dir:            dir,
		ca:             ca,
		caKey:          caKey,
		caPEM:          filepath.Join(dir, "ca.pem"),
		serverPEM:      filepath.Join(dir, "server.pem"),
		restKeystore:   filepath.Join(dir, "rest-keystore.p12"),
		restTruststore: filepath.Join(dir, "rest-truststore.p12"),
		storePassword:  newSecret("store"),
	}
	caBlock := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER})
	server := append(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER}),
		pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})...)
	server = append(server, caBlock...)
	ks, err := pkcs12.Modern2023.Encode(key, cert, []*x509.Certificate{ca}, f.storePassword)
	if err != nil {
		return nil, fmt.Errorf("sandbox rest keystore: %w", err)
	}
	ts, err := pkcs12.Modern2023.EncodeTrustStore([]*x509.Certificate{ca}, f.storePassword)
	if err != nil {
		return nil, fmt.Errorf("sandbox rest truststore: %w", err)
	}
	for path, data := range map[string][]byte{f.caPEM: caBlock, f.serverPEM: server, f.restKeystore: ks, f.restTruststore: ts} {
		if err := os.WriteFile(path, data, 0o600); err != nil {
			return nil, err
		}
	}
	return f, nil
}

// ClientCert is a client certificate the sandbox CA signed, for the mTLS
// listeners (Broker.MTLSAddrs): the principal the brokers see is its common
// name (ssl.principal.mapping.rules). Its files are in the secrets
// directory, which Close removes.
type ClientCert struct {
	CommonName string
	// PEMFile holds the private key (PKCS#8, unencrypted) and the
	// certificate chain: ssl.keystore.type=PEM, for Java clients.
	PEMFile string
	// PKCS12File is the same key and chain as a PKCS12 keystore with
	// Password: ssl.keystore.type=PKCS12.
	PKCS12File, Password string
}

// clientCert issues a client certificate for cn and writes its files.
func (f *certFiles) clientCert(cn string) (ClientCert, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return ClientCert{}, err
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber: serial(),
		Subject:      pkix.Name{CommonName: cn},
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.Add(7 * 24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, f.ca, &key.PublicKey, f.caKey)
	if err != nil {
		return ClientCert{}, fmt.Errorf("sandbox client certificate: %w", err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return ClientCert{}, err
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return ClientCert{}, err
	}
	c := ClientCert{CommonName: cn, PEMFile: filepath.Join(f.dir, "client-"+cn+".pem"),
		PKCS12File: filepath.Join(f.dir, "client-"+cn+".p12"), Password: newSecret("keystore-" + cn)}
	pemData := append(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER}), pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})...)
	pemData = append(pemData, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: f.ca.Raw})...)
	p12, err := pkcs12.Modern2023.Encode(key, cert, []*x509.Certificate{f.ca}, c.Password)
	if err != nil {
		return ClientCert{}, err
	}
	if err := os.WriteFile(c.PEMFile, pemData, 0o600); err != nil {
		return ClientCert{}, err
	}
	return c, os.WriteFile(c.PKCS12File, p12, 0o600)
}

func serial() *big.Int {
	n, _ := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 120)) // crypto/rand does not fail
	return n.Add(n, big.NewInt(1<<32))
}

// newSecret returns a random password, prefixed so that a leak is easy to
// recognise in a log: "sandbox-<what>-" and 24 hex digits. Only letters,
// digits and '-': it goes unquoted into JAAS options and kafka-storage's
// --add-scram argument.
func newSecret(what string) string {
	b := make([]byte, 12)
	rand.Read(b) // never fails
	return "sandbox-" + what + "-" + hex.EncodeToString(b)
}
