package main

import (
	"testing"

	"github.com/mm2cutover/mm2cutover/internal/sandbox/sandboxtest"
)

func TestMain(m *testing.M) { sandboxtest.Main(m) }
