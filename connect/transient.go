package connect

import (
	"errors"
	"net/http"
	"syscall"
)

// Repeat says how safe a request is to send again after a failure whose
// outcome is unknown or transient.
type Repeat int

const (
	// NeverRepeat marks a request that must not be sent twice (for example a
	// restart: a second one restarts the connector again).
	NeverRepeat Repeat = iota

	// RepeatOnRebalance marks POST /connectors: it is repeated only when the
	// worker refused it because of a rebalance. A repeated create that meets
	// "already exists" succeeds only if the existing configuration is the one
	// requested (see Client.Create).
	RepeatOnRebalance

	// RepeatSafe marks requests whose repetition has the same effect as one
	// success: reads, PUT config, stop, pause, resume, delete, and PATCH or
	// DELETE of offsets with the same body.
	RepeatSafe
)

// IsTransient reports whether err, returned by a request marked r, is worth
// retrying. It is a pure function of its inputs.
//
// Transient are: a 409 whose message is one of Connect's rebalance refusals
// ("Cannot complete request momentarily ...", "... conflicting operation
// ..."), a 500 whose message mentions a rebalance, a 503, a connection
// refused or reset, and a GET answered 500 "Failed to retrieve offsets for
// source connector ..." (ErrOffsetsUnavailable: the worker was still loading
// offsets just written; only a read, never a write with that message). Only a
// rebalance counts for RepeatOnRebalance, nothing for NeverRepeat. A 409
// "already exists", a 400, 401, 403, 404, other 500s, a timeout and a
// cancelled context are never transient.
func IsTransient(r Repeat, err error) bool {
	if err == nil || r == NeverRepeat {
		return false
	}
	var apiErr *APIError
	if errors.As(err, &apiErr) {
		if apiErr.isRebalance() {
			return true
		}
		if r != RepeatSafe {
			return false
		}
		return apiErr.StatusCode == http.StatusServiceUnavailable || apiErr.isOffsetsRead()
	}
	if r != RepeatSafe {
		return false
	}
	return errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET)
}
