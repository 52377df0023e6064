package kubeproc

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"
)

// PKI is the key material of one cluster's kube-apiserver: a CA (whose PEM GKE reports as
// masterAuth.clusterCaCertificate), a serving certificate for 127.0.0.1/localhost signed by it,
// and the service-account signing key pair.
type PKI struct {
	CACertPEM     []byte
	ServingPEM    []byte
	ServingKeyPEM []byte
	SAKeyPEM      []byte
	SAPubPEM      []byte
}

// CAFile is the CA certificate's file among the key material StartAPIServer writes (in the pki/
// folder of APIServerConfig.Dir).
const CAFile = "ca.crt"

const (
	pkiServingFile    = "apiserver.crt"
	pkiServingKeyFile = "apiserver.key"
	pkiSAKeyFile      = "sa.key"
	pkiSAPubFile      = "sa.pub"
)

// NewPKI generates fresh key material (ECDSA P-256: fast to generate, accepted by
// kube-apiserver for serving and for service-account tokens).
func NewPKI(clusterName string) (*PKI, error) {
	now := time.Now()
	caKey, caCert, caDER, err := NewSelfSignedCA(clusterName+"-ca", now)
	if err != nil {
		return nil, err
	}
	srvKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	srvTmpl := &x509.Certificate{
		SerialNumber: RandomSerial(),
		Subject:      pkix.Name{CommonName: "kube-apiserver"},
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.AddDate(10, 0, 0),
		KeyUsage:     x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		// Not localhost: that name is the cluster's DNS-based endpoint, served with another CA's
		// certificate when the cluster allows it (internal/emulator's endpoints.go).
		DNSNames:    []string{"kubernetes", "kubernetes.default", "kubernetes.default.svc"},
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1"), net.IPv6loopback},
	}
	srvDER, err := x509.CreateCertificate(rand.Reader, srvTmpl, caCert, &srvKey.PublicKey, caKey)
	if err != nil {
		return nil, err
	}
	saKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	p := &PKI{
		CACertPEM:  pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER}),
		ServingPEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srvDER}),
	}
	if p.ServingKeyPEM, err = ECKeyPEM(srvKey); err != nil {
		return nil, err
	}
	if p.SAKeyPEM, err = ECKeyPEM(saKey); err != nil {
		return nil, err
	}
	saPub, err := x509.MarshalPKIXPublicKey(&saKey.PublicKey)
	if err != nil {
		return nil, err
	}
	p.SAPubPEM = pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: saPub})
	return p, nil
}

// ECKeyPEM is k as an "EC PRIVATE KEY" PEM block.
func ECKeyPEM(k *ecdsa.PrivateKey) ([]byte, error) {
	der, err := x509.MarshalECPrivateKey(k)
	if err != nil {
		return nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: der}), nil
}

// RandomSerial is a random 120-bit certificate serial number.
func RandomSerial() *big.Int {
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 120))
	if err != nil {
		panic(err) // crypto/rand never fails on Linux
	}
	return n
}

func (p *PKI) files() map[string][]byte {
	return map[string][]byte{
		CAFile:            p.CACertPEM,
		pkiServingFile:    p.ServingPEM,
		pkiServingKeyFile: p.ServingKeyPEM,
		pkiSAKeyFile:      p.SAKeyPEM,
		pkiSAPubFile:      p.SAPubPEM,
	}
}

// write stores the key material in dir (0600 files).
func (p *PKI) write(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	for name, data := range p.files() {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o600); err != nil {
			return err
		}
	}
	return nil
}

// LoadPKI reads key material written by write (StartAPIServer writes it in the pki/ folder of
// APIServerConfig.Dir); a cluster keeps its CA across restarts of a stateful emulator.
func LoadPKI(dir string) (*PKI, error) {
	p := &PKI{}
	for name, dst := range map[string]*[]byte{
		CAFile: &p.CACertPEM, pkiServingFile: &p.ServingPEM, pkiServingKeyFile: &p.ServingKeyPEM,
		pkiSAKeyFile: &p.SAKeyPEM, pkiSAPubFile: &p.SAPubPEM,
	} {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			return nil, fmt.Errorf("reading cluster key material: %w", err)
		}
		*dst = b
	}
	return p, nil
}

// NewSelfSignedCA generates an ECDSA P-256 CA valid for ten years from an hour before now, and
// returns its key, its certificate and that certificate's DER.
func NewSelfSignedCA(commonName string, now time.Time) (*ecdsa.PrivateKey, *x509.Certificate, []byte, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber:          RandomSerial(),
		Subject:               pkix.Name{CommonName: commonName},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.AddDate(10, 0, 0),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature | x509.KeyUsageCRLSign,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, nil, nil, err
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, nil, nil, err
	}
	return key, cert, der, nil
}
