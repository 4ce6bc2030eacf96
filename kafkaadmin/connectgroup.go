package kafkaadmin

import (
	"encoding/binary"
	"fmt"
	"unicode/utf8"
)

// ConnectWorkerURL decodes a Kafka Connect worker's member metadata (a
// [Member]'s Metadata in the workers' group, protocol type "connect") and
// returns the REST URL the worker advertises: what the leader forwards
// requests to. Every version of Connect's protocol (ConnectProtocol
// "default", IncrementalCooperativeConnectProtocol "compatible" and
// "sessioned") starts with the version (int16), the URL (a string: int16
// length, UTF-8) and the config topic offset (int64). The error is an
// [*ArgumentError] (matching [ErrInvalidArgument]) for metadata too short,
// a negative version or length, or a URL that is not UTF-8. It never
// panics.
func ConnectWorkerURL(metadata []byte) (string, error) {
	bad := func(why string) (string, error) {
		return "", &ArgumentError{Op: "ConnectWorkerURL", Reason: "connect worker metadata " + why}
	}
	if len(metadata) < 4 {
		return bad(fmt.Sprintf("of %d bytes", len(metadata)))
	}
	if v := int16(binary.BigEndian.Uint16(metadata)); v < 0 {
		return bad(fmt.Sprintf("with version %d", v))
	}
	n := int16(binary.BigEndian.Uint16(metadata[2:]))
	if n < 0 || len(metadata) < 4+int(n)+8 {
		return bad(fmt.Sprintf("with a url of %d bytes in %d", n, len(metadata)))
	}
	url := metadata[4 : 4+int(n)]
	if !utf8.Valid(url) {
		return bad("with a url that is not UTF-8")
	}
	return string(url), nil
}
