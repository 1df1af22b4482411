package tests

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// testPKI is a throw-away certificate authority for TLS tests, with its
// certificate in CAFile.
type testPKI struct {
	t      testing.TB
	dir    string
	ca     *x509.Certificate
	caKey  *ecdsa.PrivateKey
	CAFile string
	serial int64
}

func newTestPKI(t testing.TB) *testPKI {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "Gregor test CA", Organization: []string{"Gregor"}},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	ca, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	p := &testPKI{t: t, dir: t.TempDir(), ca: ca, caKey: key, serial: 1}
	p.CAFile = filepath.Join(p.dir, "ca.pem")
	p.write(p.CAFile, "CERTIFICATE", der)
	return p
}

func (p *testPKI) write(path, typ string, der []byte) {
	p.t.Helper()
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
		p.t.Fatal(err)
	}
}

// issue signs a certificate for subject and writes it and its key as
// name.pem and name-key.pem. A server certificate names 127.0.0.1 and
// localhost and serves as a client certificate too.
func (p *testPKI) issue(name string, subject pkix.Name, server bool) (certFile, keyFile string, serial *big.Int) {
	p.t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		p.t.Fatal(err)
	}
	p.serial++
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(p.serial),
		Subject:      subject,
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	if server {
		// A broker's certificate also authenticates it to its peers
		// (the controller listener requires client certificates).
		tmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth}
		tmpl.IPAddresses = []net.IP{net.ParseIP("127.0.0.1")}
		tmpl.DNSNames = []string{"localhost"}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, p.ca, &key.PublicKey, p.caKey)
	if err != nil {
		p.t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		p.t.Fatal(err)
	}
	certFile, keyFile = filepath.Join(p.dir, name+".pem"), filepath.Join(p.dir, name+"-key.pem")
	// Written to temporary names and renamed, so a reloading broker never
	// sees a certificate without its key.
	p.write(certFile+".tmp", "CERTIFICATE", der)
	p.write(keyFile+".tmp", "EC PRIVATE KEY", keyDER)
	for _, f := range []string{keyFile, certFile} {
		if err := os.Rename(f+".tmp", f); err != nil {
			p.t.Fatal(err)
		}
	}
	return certFile, keyFile, tmpl.SerialNumber
}

// clientTLS trusts the CA and, when name is not empty, presents the client
// certificate issued under that name.
func (p *testPKI) clientTLS(name string) *tls.Config {
	p.t.Helper()
	pool := x509.NewCertPool()
	pool.AddCert(p.ca)
	cfg := &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	if name != "" {
		pair, err := tls.LoadX509KeyPair(filepath.Join(p.dir, name+".pem"), filepath.Join(p.dir, name+"-key.pem"))
		if err != nil {
			p.t.Fatal(err)
		}
		cfg.Certificates = []tls.Certificate{pair}
	}
	return cfg
}
