package kube

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"golang.org/x/oauth2"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/raytpu/terraform-provider-raytpu/internal/netfail"
)

// explain adds what a user can act on to the errors that have a known cause (an untrusted
// certificate, a rejected token), keeping err in the chain.
func (c *Client) explain(err error) error {
	switch {
	case err == nil:
		return nil
	case netfail.TLSVerification(err):
		return fmt.Errorf("the API server at %s presented a certificate that the cluster CA certificate "+
			"(masterAuth.clusterCaCertificate) does not trust: %w", c.host, err)
	case apierrors.IsUnauthorized(err):
		return fmt.Errorf("the API server at %s rejected the access token (401 Unauthorized): %w", c.host, err)
	case apierrors.IsForbidden(err):
		return fmt.Errorf("the API server at %s refused the request (403 Forbidden): %w", c.host, err)
	}
	return err
}

// ErrNotObserved marks a wait for hosts that never listed them: nothing is known of the hosts.
var ErrNotObserved = errors.New("the nodes could not be listed")

// notObserved is a wait's error that never listed what it waited for.
type notObserved struct{ err error }

func (e *notObserved) Error() string        { return e.err.Error() }
func (e *notObserved) Unwrap() error        { return e.err }
func (e *notObserved) Is(target error) bool { return target == ErrNotObserved }

// CannotObserve reports an error that says nothing of the cluster's state, only that this client
// cannot see it: the API server unreachable (network, DNS, a private endpoint), its certificate
// untrusted, the credentials refused (401, 403) or unobtainable, or a wait that never reached it.
func CannotObserve(err error) bool {
	if err == nil {
		return false
	}
	if errors.Is(err, ErrNotObserved) || netfail.TLSVerification(err) || apierrors.IsUnauthorized(err) || apierrors.IsForbidden(err) {
		return true
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return false // a wait cut short after it had observed what it waited for
	}
	var terr *netfail.TokenError
	if errors.As(err, &terr) {
		return true
	}
	var status apierrors.APIStatus
	if errors.As(err, &status) {
		return false // the API server answered
	}
	var nerr net.Error
	return errors.As(err, &nerr)
}

// retryable tells whether a wait should try again after err: network trouble, timeouts, 429 and
// 5xx answers are passing; a certificate, a token or a request the API server refuses is not.
func retryable(err error) bool {
	if err == nil || netfail.TLSVerification(err) {
		return false
	}
	var status apierrors.APIStatus
	if errors.As(err, &status) {
		code := status.Status().Code
		return code == http.StatusRequestTimeout || code == http.StatusTooManyRequests || code >= 500
	}
	var terr *netfail.TokenError
	if errors.As(err, &terr) {
		// Only a token endpoint that is down or unreachable may be back; a refused or missing
		// credential stays so.
		var rerr *oauth2.RetrieveError
		if errors.As(terr.Err, &rerr) {
			return rerr.Response != nil && rerr.Response.StatusCode >= 500
		}
		var nerr net.Error
		return errors.As(terr.Err, &nerr)
	}
	var nerr net.Error
	if errors.As(err, &nerr) {
		return true
	}
	// Connection resets, EOFs and the like surface as plain errors from the transport.
	return !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded)
}

// isExpired tells a watch resumed from a resource version the API server no longer has (410):
// the informer lists again.
func isExpired(err error) bool {
	return apierrors.IsGone(err) || apierrors.IsResourceExpired(err)
}

// roundWait makes a waited duration readable: milliseconds under a second, tenths under a
// minute, seconds beyond.
func roundWait(d time.Duration) time.Duration {
	switch {
	case d < time.Second:
		return d.Round(time.Millisecond)
	case d < time.Minute:
		return d.Round(100 * time.Millisecond)
	default:
		return d.Round(time.Second)
	}
}
