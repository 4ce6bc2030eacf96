package cutover

import (
	"fmt"
	"os"

	"github.com/mm2cutover/mm2cutover/connect"
	"github.com/mm2cutover/mm2cutover/kafkaadmin"
	"github.com/mm2cutover/mm2cutover/verify"
)

// Env holds the clients of the three systems a cutover talks to.
type Env struct {
	Source  *kafkaadmin.Reader // the source cluster, where the group and the data are
	Target  *kafkaadmin.Reader // the target cluster
	Connect *connect.Client    // the Connect cluster running MM2

	// observed is the last observation of the clusters (the precheck's, or
	// a re-check's), which a step moments later may use instead of reading
	// every fact again (see Recheck).
	observed *verify.Observation
}

// Open builds the clients from the settings; it contacts nothing.
func Open(s Settings) (*Env, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	s = s.WithDefaults()
	src, tgt := s.Source, s.Target
	src.Logger, tgt.Logger = s.Logger, s.Logger
	source, err := kafkaadmin.NewReader(src)
	if err != nil {
		return nil, fmt.Errorf("%w: source cluster: %w", ErrSettings, err)
	}
	target, err := kafkaadmin.NewReader(tgt)
	if err != nil {
		return nil, fmt.Errorf("%w: target cluster: %w", ErrSettings, err)
	}
	opts := []connect.Option{connect.WithLogger(s.Logger), connect.WithUserAgent("mm2cutover/" + s.ToolVersion)}
	if s.ConnectUser != "" {
		opts = append(opts, connect.WithBasicAuth(s.ConnectUser, string(s.ConnectPassword)))
	}
	if s.ConnectCAFile != "" {
		pem, err := os.ReadFile(s.ConnectCAFile)
		if err != nil {
			return nil, fmt.Errorf("%w: connect CA file: %w", ErrSettings, err)
		}
		opts = append(opts, connect.WithCACertPEM(pem))
	}
	c, err := connect.New(s.ConnectURL, opts...)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrSettings, err)
	}
	return &Env{Source: source, Target: target, Connect: c}, nil
}
