package main

import (
	"crypto/hmac"
	"crypto/pbkdf2"
	"crypto/rand"
	"crypto/sha256"
	"crypto/sha512"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"hash"
	"strconv"
	"strings"
)

// scramClient is a client side of SCRAM-SHA-256 and SCRAM-SHA-512 (RFC 5802, RFC 7677) for
// sarama, which leaves the SCRAM exchange to its caller. Usernames with ',' or '=' are escaped
// as the RFC says.
type scramClient struct {
	hash       func() hash.Hash
	user, pass string
	nonce      string
	firstBare  string
	serverSig  []byte
	step       int
	done       bool
}

func newScramSHA256() *scramClient { return &scramClient{hash: sha256.New} }
func newScramSHA512() *scramClient { return &scramClient{hash: sha512.New} }

func (s *scramClient) Begin(user, pass, _ string) error {
	var b [18]byte
	if _, err := rand.Read(b[:]); err != nil {
		return fmt.Errorf("scram: nonce: %w", err)
	}
	user = strings.NewReplacer("=", "=3D", ",", "=2C").Replace(user)
	*s = scramClient{hash: s.hash, user: user, pass: pass, nonce: base64.RawStdEncoding.EncodeToString(b[:])}
	return nil
}

func (s *scramClient) Done() bool { return s.done }

func (s *scramClient) Step(challenge string) (string, error) {
	s.step++
	switch s.step {
	case 1:
		s.firstBare = "n=" + s.user + ",r=" + s.nonce
		return "n,," + s.firstBare, nil
	case 2:
		attrs := map[string]string{}
		for _, kv := range strings.Split(challenge, ",") {
			if len(kv) > 2 && kv[1] == '=' {
				attrs[kv[:1]] = kv[2:]
			}
		}
		nonce, saltB64, iterS := attrs["r"], attrs["s"], attrs["i"]
		if !strings.HasPrefix(nonce, s.nonce) || len(nonce) == len(s.nonce) {
			return "", errors.New("scram: server nonce does not extend the client nonce")
		}
		salt, err := base64.StdEncoding.DecodeString(saltB64)
		if err != nil {
			return "", fmt.Errorf("scram: salt: %w", err)
		}
		iter, err := strconv.Atoi(iterS)
		if err != nil || iter < 1 || iter > 1<<20 {
			return "", fmt.Errorf("scram: iteration count %q out of range", iterS)
		}
		salted, err := pbkdf2.Key(s.hash, s.pass, salt, iter, s.hash().Size())
		if err != nil {
			return "", fmt.Errorf("scram: %w", err)
		}
		finalNoProof := "c=biws,r=" + nonce
		authMsg := s.firstBare + "," + challenge + "," + finalNoProof
		clientKey := s.mac(salted, "Client Key")
		h := s.hash()
		h.Write(clientKey)
		storedKey := h.Sum(nil)
		sig := s.mac(storedKey, authMsg)
		proof := make([]byte, len(clientKey))
		for i := range proof {
			proof[i] = clientKey[i] ^ sig[i]
		}
		s.serverSig = s.mac(s.mac(salted, "Server Key"), authMsg)
		return finalNoProof + ",p=" + base64.StdEncoding.EncodeToString(proof), nil
	case 3:
		v, ok := strings.CutPrefix(challenge, "v=")
		if !ok {
			return "", fmt.Errorf("scram: server final message %q", challenge)
		}
		got, err := base64.StdEncoding.DecodeString(v)
		if err != nil || subtle.ConstantTimeCompare(got, s.serverSig) != 1 {
			return "", errors.New("scram: server signature does not verify")
		}
		s.done = true
		return "", nil
	}
	return "", errors.New("scram: exchange already finished")
}

func (s *scramClient) mac(key []byte, msg string) []byte {
	h := hmac.New(s.hash, key)
	h.Write([]byte(msg))
	return h.Sum(nil)
}
