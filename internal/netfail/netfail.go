// Package netfail tells apart the ways a request to a Google or Kubernetes API can fail before
// any answer, for the retry policies of internal/gke and internal/kube: a certificate that does
// not verify and a token that could not be obtained are no network hiccup, and retrying them
// never helps.
package netfail

import (
	"crypto/tls"
	"crypto/x509"
	"errors"

	"golang.org/x/oauth2"
)

// TLSVerification reports a failed verification of the server's certificate.
func TLSVerification(err error) bool {
	var (
		verr *tls.CertificateVerificationError
		uerr x509.UnknownAuthorityError
		herr x509.HostnameError
		cerr x509.CertificateInvalidError
	)
	return errors.As(err, &verr) || errors.As(err, &uerr) || errors.As(err, &herr) || errors.As(err, &cerr)
}

// TokenError is a failure to obtain the Google access token a request was to carry.
type TokenError struct{ Err error }

func (e *TokenError) Error() string { return "getting the Google access token: " + e.Err.Error() }
func (e *TokenError) Unwrap() error { return e.Err }

// Tokens returns ts with its failures marked as *TokenError, so that a failed request tells a
// token that could not be had from a request the server refused.
func Tokens(ts oauth2.TokenSource) oauth2.TokenSource { return tokens{ts} }

type tokens struct{ ts oauth2.TokenSource }

func (t tokens) Token() (*oauth2.Token, error) {
	tok, err := t.ts.Token()
	if err != nil {
		return nil, &TokenError{Err: err}
	}
	return tok, nil
}
