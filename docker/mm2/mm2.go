// Package mm2 carries the files of the Kafka Connect worker image (Dockerfile,
// worker properties, entrypoint, logging and JMX exporter configuration) so
// that the sandbox in internal/sandbox starts its workers through exactly the
// files the image ships: every test run exercises the worker configuration we
// deploy.
package mm2

import "embed"

// Files holds the image's runtime files: docker-entrypoint.sh,
// connect-mm2.properties, connect-log4j2.properties (Kafka 4.x),
// connect-log4j.properties (Kafka 3.x) and jmx-exporter.yaml.
//
//go:embed docker-entrypoint.sh connect-mm2.properties connect-log4j2.properties connect-log4j.properties jmx-exporter.yaml
var Files embed.FS
