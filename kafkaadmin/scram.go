package kafkaadmin

import (
	"github.com/xdg-go/scram"
)

// scramClient adapts github.com/xdg-go/scram to sarama.SCRAMClient, as
// sarama's own examples do. It uses the "unprepped" client: Kafka (KIP-84,
// ScramFormatter) uses user names and passwords as plain UTF-8 without
// SASLprep, so preparing them here would fail or change passwords that
// Kafka accepts.
type scramClient struct {
	hash  scram.HashGeneratorFcn
	nonce scram.NonceGeneratorFcn // nil means the library's random nonce
	conv  *scram.ClientConversation
}

func newSCRAMClient(m SASLMechanism) *scramClient {
	if m == ScramSHA512 {
		return &scramClient{hash: scram.SHA512}
	}
	return &scramClient{hash: scram.SHA256}
}

func (c *scramClient) Begin(user, password, authzID string) error {
	client, err := c.hash.NewClientUnprepped(user, password, authzID)
	if err != nil {
		return err
	}
	if c.nonce != nil {
		client = client.WithNonceGenerator(c.nonce)
	}
	c.conv = client.NewConversation()
	return nil
}

func (c *scramClient) Step(challenge string) (string, error) { return c.conv.Step(challenge) }

// Done reports whether the server proved it knows the password too. The
// library's own Done is also true after a failed step.
func (c *scramClient) Done() bool { return c.conv.Valid() }
