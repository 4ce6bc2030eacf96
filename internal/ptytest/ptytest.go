//go:build linux

// Package ptytest opens pseudo-terminals for tests: what a program writes
// to a terminal (a status line rewritten in place) is tested on a real one,
// as an operator's shell gives it, rather than on a writer that pretends.
package ptytest

import (
	"bytes"
	"fmt"

	"os"
	"sync"
	"syscall"
	"unsafe"
)

// PTY is a pseudo-terminal: a program writes to Terminal, which is a
// terminal as isatty sees it; Output is what the terminal received.
type PTY struct {
	Terminal *os.File
	master   *os.File
	mu       sync.Mutex
	out      bytes.Buffer
	done     chan struct{}
}

// Open opens a pseudo-terminal of cols columns and starts reading what is
// written to it. Close it to read the rest.
func Open(cols int) (*PTY, error) {
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		return nil, err
	}
	var unlock int32
	if err := ioctl(m, syscall.TIOCSPTLCK, unsafe.Pointer(&unlock)); err != nil {
		m.Close()
		return nil, fmt.Errorf("unlockpt: %w", err)
	}
	var n uint32
	if err := ioctl(m, syscall.TIOCGPTN, unsafe.Pointer(&n)); err != nil {
		m.Close()
		return nil, fmt.Errorf("ptsname: %w", err)
	}
	s, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		m.Close()
		return nil, err
	}
	ws := struct{ rows, cols, x, y uint16 }{24, uint16(cols), 0, 0}
	if err := ioctl(s, syscall.TIOCSWINSZ, unsafe.Pointer(&ws)); err != nil {
		m.Close()
		s.Close()
		return nil, fmt.Errorf("set the window size: %w", err)
	}
	p := &PTY{Terminal: s, master: m, done: make(chan struct{})}
	go func() {
		defer close(p.done)
		buf := make([]byte, 4096)
		for {
			n, err := m.Read(buf)
			p.mu.Lock()
			p.out.Write(buf[:n])
			p.mu.Unlock()
			if err != nil { // EIO once the terminal side is closed
				return
			}
		}
	}()
	return p, nil
}

// Close closes the terminal, waits until everything written to it has
// been read, and returns it. The terminal turns each "\n" into "\r\n".
func (p *PTY) Close() string {
	p.Terminal.Close()
	<-p.done
	p.master.Close()
	return p.Output()
}

// Output is what the terminal received so far.
func (p *PTY) Output() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.out.String()
}

func ioctl(f *os.File, req uintptr, arg unsafe.Pointer) error {
	if _, _, errno := syscall.Syscall(syscall.SYS_IOCTL, f.Fd(), req, uintptr(arg)); errno != 0 {
		return errno
	}
	return nil
}
