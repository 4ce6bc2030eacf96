package connect

// RequireCutoverVersion returns nil when a worker that reports version in
// GET / supports every REST call of the cutover: reading, altering and
// resetting offsets, and creating a connector STOPPED (Kafka 3.7). Otherwise
// it returns a *VersionError (matching ErrUnsupportedVersion) naming the
// missing feature, or the error of a version that does not parse.
func RequireCutoverVersion(version string) error {
	v, err := parseKafkaVersion(version)
	if err != nil {
		return err
	}
	if !v.atLeast(versionInitialState) {
		return &VersionError{Feature: "creating a connector STOPPED (initial_state)", Need: versionInitialState.String(), Have: version}
	}
	return nil
}
