package auth

import (
	"context"
	"testing"
)

func FuzzParsePlain(f *testing.F) {
	f.Add([]byte("\x00alice\x00pw"))
	f.Add([]byte("a\x00a\x00b"))
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := ParsePlain(b)
		if err == nil && (m.Username == "" || m.Password == "") {
			t.Fatalf("accepted %q with empty fields", b)
		}
	})
}

func FuzzScramClientFirst(f *testing.F) {
	f.Add([]byte("n,,n=user,r=fyko+d2lbbFgONRv9qkxdawL"))
	f.Add([]byte("n,a=u,n=u,r=x,tokenauth=true"))
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := ParseScramClientFirst(b)
		if err == nil && (m.Username == "" || m.Nonce == "") {
			t.Fatalf("accepted %q with empty fields", b)
		}
	})
}

func FuzzScramClientFinal(f *testing.F) {
	f.Add([]byte("c=biws,r=abc,p=dHppcHBpdHk="))
	f.Fuzz(func(t *testing.T, b []byte) {
		if m, err := ParseScramClientFinal(b); err == nil && len(m.Proof) == 0 {
			t.Fatalf("accepted %q without a proof", b)
		}
	})
}

// FuzzScramExchange feeds two arbitrary messages to a server exchange with a
// known user; no input may authenticate without the password.
func FuzzScramExchange(f *testing.F) {
	store := CredentialMap{"u": {mustCred(f, ScramSHA256, "secret")}}
	f.Add([]byte("n,,n=u,r=abc"), []byte("c=biws,r=abc,p=AAAA"))
	f.Fuzz(func(t *testing.T, first, final []byte) {
		ex := (&Scram{Mech: ScramSHA256, Store: store}).Start(ConnFacts{})
		if _, done, err := ex.Step(context.Background(), first); err != nil || done {
			return
		}
		if _, done, err := ex.Step(context.Background(), final); err == nil || done {
			t.Fatalf("authenticated with %q / %q", first, final)
		}
	})
}

func FuzzOAuthBearerMessage(f *testing.F) {
	f.Add([]byte("n,,\x01auth=Bearer a.b.c\x01\x01"))
	o := &OAuthBearer{AllowUnsecured: true}
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := ParseOAuthBearerMessage(b)
		if err != nil {
			return
		}
		o.Validate(m.Token)
	})
}
