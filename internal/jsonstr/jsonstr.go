// Package jsonstr appends JSON strings escaped exactly as encoding/json
// escapes them, for the hand-written encoders of the plan file and the
// Connect PATCH body (offsets and plan), whose bytes must equal what
// encoding/json would write. It is internal: a helper of those encoders,
// not an API.
package jsonstr

import "encoding/json"

// Append appends s to buf as a JSON string, escaped as encoding/json does
// (HTML characters included): plain ASCII is copied, anything else goes
// through json.Marshal.
func Append(buf []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			b, _ := json.Marshal(s) // a string always marshals
			return append(buf, b...)
		}
	}
	buf = append(buf, '"')
	buf = append(buf, s...)
	return append(buf, '"')
}
