package gke

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"net/url"
	"strings"
	"time"

	"github.com/hashicorp/terraform-plugin-log/tflog"
	"golang.org/x/oauth2"
	"google.golang.org/grpc/codes"

	"github.com/raytpu/terraform-provider-raytpu/internal/netfail"
)

// Backoff spaces retries of failed calls, with jitter so that parallel callers spread out, and caps
// how many attempts a transient failure gets.
type Backoff struct {
	Initial time.Duration
	Max     time.Duration
	// Attempts is how many times a call that keeps failing transiently is made in all; 0 is
	// DefaultBackoff's. A cluster busy with other operations is waited for whatever it says: that
	// wait ends with the caller's deadline only.
	Attempts int
}

// DefaultBackoff starts at one second and doubles, five attempts in all: a failure that lasts
// through about twenty seconds of retries is reported, not waited out.
var DefaultBackoff = Backoff{Initial: time.Second, Max: 30 * time.Second, Attempts: 5}

func (b Backoff) next(prev time.Duration) time.Duration {
	next := prev*2 + time.Duration(rand.Int64N(int64(prev)/2+1))
	if next > b.Max {
		return b.Max
	}
	return next
}

func (b Backoff) attempts() int {
	if b.Attempts <= 0 {
		return DefaultBackoff.Attempts
	}
	return b.Attempts
}

// errorClass is what the retry policy does with a failed call (see the package doc's table).
type errorClass int

const (
	// permanent failures are returned at once: only a change of configuration fixes them.
	permanent errorClass = iota
	// transient failures are retried, Backoff.Attempts times at most.
	transient
	// busy is GKE refusing an operation while others run on the cluster: retried until the
	// caller's deadline, as GKE asks ("Please wait and try again once it is done").
	busy
)

// classify sorts a failed call into its class.
func classify(err error) errorClass {
	if Busy(err) {
		return busy
	}
	if accessProblem(err) != nil {
		return permanent
	}
	// A token endpoint down or unreachable may come back; refused credentials (an access
	// problem, above) do not. A RetrieveError comes from a token endpoint only; the client
	// library keeps it in the chain but drops the TokenError around it.
	var rerr *oauth2.RetrieveError
	if errors.As(err, &rerr) {
		return transient
	}
	var terr *netfail.TokenError
	if errors.As(err, &terr) {
		if networkFailure(terr.Err) {
			return transient
		}
		return permanent
	}
	switch code(err) {
	case codes.Unavailable, codes.Internal, codes.DeadlineExceeded, codes.Aborted:
		return transient
	case codes.ResourceExhausted:
		// 429 rate limits clear with time; quota exhaustion does not.
		if strings.Contains(strings.ToLower(message(err)), "quota") {
			return permanent
		}
		return transient
	}
	if networkFailure(err) {
		return transient
	}
	return permanent
}

// networkFailure reports a request that failed on its way, before an answer: a refused, reset or
// timed-out connection, or a DNS server that did not answer. (A name that does not exist and a
// certificate that does not verify are access problems, not network failures.)
func networkFailure(err error) bool {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return false
	}
	var nerr net.Error
	return errors.As(err, &nerr)
}

// AccessError is a call that could not reach GKE or authenticate to it, for a cause that no
// retry removes: the endpoint's host name does not exist, its certificate does not verify, or
// the credentials were refused when a token was asked for. Its message says what to fix.
type AccessError struct {
	// Cause is "dns", "tls" or "credentials".
	Cause string
	err   error
	fix   string
}

func (e *AccessError) Error() string { return e.fix }
func (e *AccessError) Unwrap() error { return e.err }

// IsAccessError reports a failure to reach or authenticate to GKE that no retry fixes.
func IsAccessError(err error) bool {
	var aerr *AccessError
	return errors.As(err, &aerr)
}

// accessProblem is err as an *AccessError when it is one of those causes, else nil.
func accessProblem(err error) *AccessError {
	var aerr *AccessError
	if errors.As(err, &aerr) {
		return aerr
	}
	var dnsErr *net.DNSError
	if errors.As(err, &dnsErr) && dnsErr.IsNotFound {
		return &AccessError{Cause: "dns", err: err, fix: fmt.Sprintf("the host name %q does not exist (%v): check the "+
			"endpoint (container_endpoint, compute_endpoint, or RAYTPU_CONTAINER_ENDPOINT and RAYTPU_COMPUTE_ENDPOINT) "+
			"and this machine's DNS", dnsErr.Name, dnsErr)}
	}
	if netfail.TLSVerification(err) {
		return &AccessError{Cause: "tls", err: err, fix: fmt.Sprintf("the server's certificate does not verify (%s): "+
			"raytpu verifies TLS on every call. Use the endpoint's own host name, or make its CA trusted (SSL_CERT_FILE)",
			tlsCause(err))}
	}
	var rerr *oauth2.RetrieveError
	if errors.As(err, &rerr) && (rerr.Response == nil || rerr.Response.StatusCode < 500) {
		why := rerr.ErrorCode
		if rerr.ErrorDescription != "" {
			why += ": " + rerr.ErrorDescription
		}
		if why == "" {
			why = rerr.Error()
		}
		return &AccessError{Cause: "credentials", err: err, fix: fmt.Sprintf("Google refused the credentials when "+
			"asked for an access token (%s). They have expired or been revoked, or are not valid for this "+
			"project: renew them (for Application Default Credentials, run `gcloud auth application-default login`), "+
			"or set credentials, access_token or GOOGLE_OAUTH_ACCESS_TOKEN", why)}
	}
	return nil
}

// tlsCause is what the TLS handshake refused, without the request's URL.
func tlsCause(err error) string {
	var verr *tls.CertificateVerificationError
	if errors.As(err, &verr) {
		return verr.Error()
	}
	var uerr *url.Error
	if errors.As(err, &uerr) {
		return uerr.Err.Error()
	}
	return err.Error()
}

// outcomeUnknown reports a failure after which the request may have taken effect in GKE: the
// connection broke or timed out, or a front end answered 5xx after passing the request on. A
// rejection GKE explains (429, 4xx, "busy") means it did not act; neither did a request that
// never left (no token, no such host, a refused certificate).
func outcomeUnknown(err error) bool {
	if Busy(err) || classify(err) == permanent {
		return false
	}
	var terr *netfail.TokenError
	var rerr *oauth2.RetrieveError
	if errors.As(err, &terr) || errors.As(err, &rerr) {
		return false
	}
	switch code(err) {
	case codes.Unavailable, codes.Internal, codes.DeadlineExceeded, codes.Unknown:
		return true
	}
	return networkFailure(err)
}

// call runs f, retrying transient failures with backoff up to the client's cap and a busy
// cluster until ctx ends; a retry that waits says so at INFO. A create that a retry finds already
// done, after an attempt whose outcome is unknown, fails with *AlreadyCreatedError. A failure no
// retry fixes comes back at once, as *AccessError when it is one.
func call[T any](ctx context.Context, c *Client, what string, f func(context.Context) (T, error)) (T, error) {
	var zero T
	delay := c.retry.Initial
	mayHaveTakenEffect := false
	for attempt := 1; ; attempt++ {
		result, err := f(ctx)
		if err != nil && IsAlreadyExists(err) && mayHaveTakenEffect {
			return result, &AlreadyCreatedError{err: err}
		}
		if err == nil {
			return result, nil
		}
		class := classify(err)
		if class == permanent {
			if aerr := accessProblem(err); aerr != nil {
				return zero, aerr
			}
			return result, err
		}
		if class == transient && attempt >= c.retry.attempts() {
			return zero, &retryError{err: err, note: fmt.Sprintf("gave up retrying %s after %d attempts", what, attempt)}
		}
		if deadline, ok := ctx.Deadline(); ok && time.Until(deadline) < delay {
			return zero, &retryError{err: err, cause: context.DeadlineExceeded,
				note: fmt.Sprintf("gave up retrying %s after %d attempts: the next one would come after its deadline", what, attempt)}
		}
		mayHaveTakenEffect = mayHaveTakenEffect || outcomeUnknown(err)
		fields := map[string]any{"call": what, "attempt": attempt, "delay": delay.String(), "error": describe(err)}
		if class == busy {
			// Operations not of this apply (another run, GKE's own upgrades, gcloud) hold the
			// cluster: say what the apply waits for, since it may be a while.
			tflog.Info(ctx, "GKE runs other operations on the cluster; waiting for them to finish", fields)
		} else {
			tflog.Info(ctx, "GKE API call failed transiently; retrying", fields)
		}
		select {
		case <-ctx.Done():
			return zero, &retryError{err: err, cause: ctx.Err(),
				note: fmt.Sprintf("gave up retrying %s after %d attempts: %v", what, attempt, ctx.Err())}
		case <-time.After(delay):
		}
		delay = c.retry.next(delay)
	}
}

// retryError is the last failure of a call the policy stopped retrying, and why it stopped.
type retryError struct {
	err   error
	cause error // the context's error, when it ended the retries
	note  string
}

func (e *retryError) Error() string { return fmt.Sprintf("%s (%s)", describe(e.err), e.note) }

func (e *retryError) Unwrap() []error {
	if e.cause == nil {
		return []error{e.err}
	}
	return []error{e.err, e.cause}
}

// describe is the API's message for err, or what kept the request from an answer.
func describe(err error) string {
	var uerr *url.Error
	if errors.As(err, &uerr) && code(err) == codes.Unknown {
		return fmt.Sprintf("%s %s: %v", uerr.Op, redactQuery(uerr.URL), uerr.Err)
	}
	return message(err)
}

// redactQuery drops the query of a request URL: the client library's encoding options say
// nothing to a user.
func redactQuery(raw string) string {
	before, _, _ := strings.Cut(raw, "?")
	return before
}
