package auth

import (
	"crypto/hmac"
	"crypto/pbkdf2"
	"crypto/sha256"
	"crypto/sha512"
	"fmt"
	"hash"
)

// ScramMechanism is a SCRAM hash, with Kafka's codes (as in
// DescribeUserScramCredentials).
type ScramMechanism int8

// The SCRAM mechanisms Kafka supports.
const (
	ScramUnknown ScramMechanism = 0
	ScramSHA256  ScramMechanism = 1
	ScramSHA512  ScramMechanism = 2
)

// Kafka's bounds on SCRAM iterations.
const (
	MinScramIterations = 4096
	MaxScramIterations = 16384
)

// ParseScramMechanism parses "SCRAM-SHA-256" or "SCRAM-SHA-512".
func ParseScramMechanism(name string) (ScramMechanism, error) {
	switch name {
	case "SCRAM-SHA-256":
		return ScramSHA256, nil
	case "SCRAM-SHA-512":
		return ScramSHA512, nil
	}
	return ScramUnknown, fmt.Errorf("auth: %w: %q is not a SCRAM mechanism", ErrUnsupportedMechanism, name)
}

// String is the mechanism's SASL name.
func (m ScramMechanism) String() string {
	switch m {
	case ScramSHA256:
		return "SCRAM-SHA-256"
	case ScramSHA512:
		return "SCRAM-SHA-512"
	}
	return fmt.Sprintf("ScramMechanism(%d)", int8(m))
}

// Valid reports whether m is SHA-256 or SHA-512.
func (m ScramMechanism) Valid() bool { return m == ScramSHA256 || m == ScramSHA512 }

func (m ScramMechanism) newHash() func() hash.Hash {
	if m == ScramSHA512 {
		return sha512.New
	}
	return sha256.New
}

func (m ScramMechanism) size() int {
	if m == ScramSHA512 {
		return sha512.Size
	}
	return sha256.Size
}

func (m ScramMechanism) hash(b []byte) []byte {
	h := m.newHash()()
	h.Write(b)
	return h.Sum(nil)
}

func (m ScramMechanism) hmac(key, msg []byte) []byte {
	h := hmac.New(m.newHash(), key)
	h.Write(msg)
	return h.Sum(nil)
}

// ScramCredential is a user's stored SCRAM credential (RFC 5802): never the
// password, only what verifies a proof and signs the server's answer.
type ScramCredential struct {
	Mechanism  ScramMechanism
	Salt       []byte
	StoredKey  []byte
	ServerKey  []byte
	Iterations int32
}

// CredentialStore finds a user's SCRAM credential. The broker's store reads
// the metadata image.
type CredentialStore interface {
	ScramCredential(user string, mech ScramMechanism) (ScramCredential, bool)
}

// CredentialMap is an in-memory CredentialStore keyed by user name.
type CredentialMap map[string][]ScramCredential

// ScramCredential implements CredentialStore.
func (m CredentialMap) ScramCredential(user string, mech ScramMechanism) (ScramCredential, bool) {
	for _, c := range m[user] {
		if c.Mechanism == mech {
			return c, true
		}
	}
	return ScramCredential{}, false
}

// SaltedPassword is Hi(password, salt, iterations) of RFC 5802, what a
// client sends in AlterUserScramCredentials.
func SaltedPassword(mech ScramMechanism, password string, salt []byte, iterations int32) ([]byte, error) {
	if err := checkScramParams(mech, salt, iterations); err != nil {
		return nil, err
	}
	if mech == ScramSHA512 {
		return pbkdf2.Key(sha512.New, password, salt, int(iterations), sha512.Size)
	}
	return pbkdf2.Key(sha256.New, password, salt, int(iterations), sha256.Size)
}

// NewScramCredential derives the stored credential from a salted password.
func NewScramCredential(mech ScramMechanism, saltedPassword, salt []byte, iterations int32) (ScramCredential, error) {
	if err := checkScramParams(mech, salt, iterations); err != nil {
		return ScramCredential{}, err
	}
	if len(saltedPassword) != mech.size() {
		return ScramCredential{}, fmt.Errorf("%w: salted password of %d bytes for %s (want %d)", ErrInvalidCredential, len(saltedPassword), mech, mech.size())
	}
	return ScramCredential{
		Mechanism:  mech,
		Salt:       append([]byte(nil), salt...),
		StoredKey:  mech.hash(mech.hmac(saltedPassword, []byte("Client Key"))),
		ServerKey:  mech.hmac(saltedPassword, []byte("Server Key")),
		Iterations: iterations,
	}, nil
}

// CredentialFromPassword salts and derives a credential from a clear
// password (for the CLI and tests; the broker never sees passwords this way).
func CredentialFromPassword(mech ScramMechanism, password string, salt []byte, iterations int32) (ScramCredential, error) {
	sp, err := SaltedPassword(mech, password, salt, iterations)
	if err != nil {
		return ScramCredential{}, err
	}
	return NewScramCredential(mech, sp, salt, iterations)
}

// Validate checks a stored credential's shape.
func (c ScramCredential) Validate() error {
	if err := checkScramParams(c.Mechanism, c.Salt, c.Iterations); err != nil {
		return err
	}
	if len(c.StoredKey) != c.Mechanism.size() || len(c.ServerKey) != c.Mechanism.size() {
		return fmt.Errorf("%w: %s keys of %d and %d bytes", ErrInvalidCredential, c.Mechanism, len(c.StoredKey), len(c.ServerKey))
	}
	return nil
}

func checkScramParams(mech ScramMechanism, salt []byte, iterations int32) error {
	switch {
	case !mech.Valid():
		return fmt.Errorf("%w: unknown mechanism %d", ErrInvalidCredential, int8(mech))
	case len(salt) == 0 || len(salt) > 1024:
		return fmt.Errorf("%w: salt of %d bytes", ErrInvalidCredential, len(salt))
	case iterations < MinScramIterations || iterations > MaxScramIterations:
		return fmt.Errorf("%w: %d iterations is outside %d..%d", ErrInvalidCredential, iterations, MinScramIterations, MaxScramIterations)
	}
	return nil
}
