//go:build !(linux || darwin)

package term

import "io"

// Terminal reports false: this system's terminals are not detected.
func Terminal(io.Writer) (width int, ok bool) { return 0, false }
