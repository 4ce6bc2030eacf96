package sandbox

import (
	"context"
	"crypto/rand"
	"fmt"

	"github.com/IBM/sarama"
)

// With Config.Authorizer a secure sandbox's brokers enforce ACLs with
// KRaft's StandardAuthorizer. The super users are the admin user (the
// sandbox's helpers and tests), the mm2 user (the Connect workers and the
// connectors), and ANONYMOUS: the principal of the PLAINTEXT inter-broker
// and controller listeners, which only the brokers use. Every other
// principal — a user added with AddUser — may do only what ACLs allow:
// allow.everyone.if.no.acl.found stays false.

// authorizerProps returns the lines of a node's server.properties that
// enable the authorizer. With Kerberos the workers' principal
// (ConnectPrincipal) is a super user too, as MM2User is without it.
func authorizerProps(kerberos bool) []string {
	supers := "User:" + AdminUser + ";User:" + MM2User + ";User:ANONYMOUS"
	if kerberos {
		supers += ";User:" + ConnectPrincipal
	}
	return []string{
		"authorizer.class.name=org.apache.kafka.metadata.authorizer.StandardAuthorizer",
		"super.users=" + supers,
	}
}

// Authorizer reports whether the sandbox was started with Config.Authorizer.
func (s *Sandbox) Authorizer() bool { return s.authz }

// AddUser creates a SCRAM-SHA-512 user with a new random password on a
// secure cluster (AlterUserScramCredentials, as the admin user). Under
// Config.Authorizer it is not a super user: it may do only what ACLs
// allow. The password lives in the broker's metadata only.
func (b *Broker) AddUser(ctx context.Context, name string) (User, error) {
	if b.sec == nil {
		return User{}, fmt.Errorf("sandbox: AddUser needs a secure cluster")
	}
	if err := ctx.Err(); err != nil {
		return User{}, err
	}
	salt := make([]byte, 16)
	rand.Read(salt) // never fails
	u := User{Name: name, Password: newSecret(b.name + "-" + name)}
	admin, err := sarama.NewClusterAdmin(b.Addrs(), b.SaramaConfig())
	if err != nil {
		return User{}, err
	}
	defer admin.Close()
	res, err := admin.UpsertUserScramCredentials([]sarama.AlterUserScramCredentialsUpsert{{
		Name: name, Mechanism: sarama.SCRAM_MECHANISM_SHA_512, Iterations: 4096, Salt: salt, Password: []byte(u.Password),
	}})
	if err != nil {
		return User{}, fmt.Errorf("sandbox: add user %s: %w", name, err)
	}
	for _, r := range res {
		if r.ErrorCode != sarama.ErrNoError {
			return User{}, fmt.Errorf("sandbox: add user %s: %w", name, r.ErrorCode)
		}
	}
	return u, nil
}
