//go:build linux || darwin

package term

import (
	"io"
	"os"
	"syscall"
	"unsafe"
)

// Terminal reports whether w is a terminal, and its width in columns: an
// *os.File the terminal's window-size request succeeds on (so not a file,
// a pipe or /dev/null), with TERM not "dumb".
func Terminal(w io.Writer) (width int, ok bool) {
	f, isFile := w.(*os.File)
	if !isFile || os.Getenv("TERM") == "dumb" {
		return 0, false
	}
	var ws struct{ rows, cols, x, y uint16 }
	if _, _, errno := syscall.Syscall(syscall.SYS_IOCTL, f.Fd(), uintptr(syscall.TIOCGWINSZ), uintptr(unsafe.Pointer(&ws))); errno != 0 {
		return 0, false
	}
	if ws.cols == 0 {
		return 80, true // a terminal that does not say: the classic width
	}
	return int(ws.cols), true
}
