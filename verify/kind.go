package verify

import (
	"strings"

	"github.com/mm2cutover/mm2cutover/errkind"
)

// ErrCheckFailed matches a check of this package that ran and did not pass
// where no more specific error says so (a group whose offsets read back
// other than committed). Its kind is errkind.CheckFailed.
var ErrCheckFailed = errkind.New(errkind.CheckFailed, "verify: check failed")

// words is the text of err without this package's prefix, for a typed error
// that writes it after its own "verify: ".
func words(err error) string { return strings.TrimPrefix(err.Error(), "verify: ") }
