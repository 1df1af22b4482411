package auth

import (
	"context"
	"errors"
	"testing"

	"github.com/twmb/franz-go/pkg/sasl"
	"github.com/twmb/franz-go/pkg/sasl/scram"
)

func mustCred(t testing.TB, mech ScramMechanism, pw string) ScramCredential {
	t.Helper()
	c, err := CredentialFromPassword(mech, pw, []byte("0123456789abcdef"), MinScramIterations)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// runExchange drives a server exchange with a real client mechanism.
func runExchange(ctx context.Context, client sasl.Mechanism, server Exchange) (Outcome, error) {
	sess, msg, err := client.Authenticate(ctx, "broker")
	if err != nil {
		return Outcome{}, err
	}
	for i := 0; i < 5; i++ {
		reply, done, err := server.Step(ctx, msg)
		if err != nil {
			return Outcome{}, err
		}
		cdone, next, err := sess.Challenge(reply)
		if err != nil {
			return Outcome{}, err
		}
		if done {
			if !cdone {
				return Outcome{}, errors.New("client not done when the server is")
			}
			return server.Outcome(), nil
		}
		msg = next
	}
	return Outcome{}, errors.New("exchange did not end")
}

func TestScramExchange(t *testing.T) {
	store := CredentialMap{
		"alice": {mustCred(t, ScramSHA256, "alice-secret"), mustCred(t, ScramSHA512, "alice-secret-512")},
		"a,b=c": {mustCred(t, ScramSHA256, "pw")},
	}
	for _, tc := range []struct {
		name     string
		mech     ScramMechanism
		user, pw string
		wantErr  error
	}{
		{"sha256 ok", ScramSHA256, "alice", "alice-secret", nil},
		{"sha512 ok", ScramSHA512, "alice", "alice-secret-512", nil},
		{"escaped name", ScramSHA256, "a,b=c", "pw", nil},
		{"wrong password", ScramSHA256, "alice", "nope", ErrAuthenticationFailed},
		{"password of the other mechanism", ScramSHA512, "alice", "alice-secret", ErrAuthenticationFailed},
		{"unknown user", ScramSHA256, "mallory", "x", ErrAuthenticationFailed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := scram.Auth{User: tc.user, Pass: tc.pw}
			client := a.AsSha256Mechanism()
			if tc.mech == ScramSHA512 {
				client = a.AsSha512Mechanism()
			}
			srv := &Scram{Mech: tc.mech, Store: store, FakeSalt: []byte("k")}
			out, err := runExchange(context.Background(), client, srv.Start(ConnFacts{}))
			if tc.wantErr != nil {
				if !errors.Is(err, tc.wantErr) {
					t.Fatalf("err %v, want %v", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := out.Principal.String(); got != "User:"+tc.user {
				t.Fatalf("principal %q", got)
			}
		})
	}
}

func TestScramUnknownUserLooksLikeKnown(t *testing.T) {
	srv := &Scram{Mech: ScramSHA256, Store: CredentialMap{}, FakeSalt: []byte("secret")}
	first := func(user string) string {
		reply, _, err := srv.Start(ConnFacts{}).Step(context.Background(), []byte("n,,n="+user+",r=abc"))
		if err != nil {
			t.Fatal(err)
		}
		return string(reply)
	}
	a, b := first("ghost"), first("ghost")
	// Same salt each time for a user (nonces differ).
	if a[len(a)-30:] != b[len(b)-30:] {
		t.Fatalf("fake salt not stable: %q vs %q", a, b)
	}
}

func TestScramParsers(t *testing.T) {
	for _, tc := range []struct {
		name    string
		first   string
		wantErr error
	}{
		{"ok", "n,,n=user,r=nonce", nil},
		{"extension", "n,,n=user,r=nonce,tokenauth=true", nil},
		{"authzid equal", "n,a=user,n=user,r=nonce", nil},
		{"authzid differs", "n,a=root,n=user,r=nonce", ErrAuthenticationFailed},
		{"channel binding", "p=tls-unique,,n=user,r=nonce", ErrMalformed},
		{"no header", "n=user,r=nonce", ErrMalformed},
		{"no nonce", "n,,n=user", ErrMalformed},
		{"empty user", "n,,n=,r=x", ErrMalformed},
		{"bad escape", "n,,n=a=2Xb,r=x", ErrMalformed},
		{"mandatory ext", "n,,m=x,n=user,r=x", ErrMalformed},
		{"nonce with space", "n,,n=u,r=a b", ErrMalformed},
		{"empty", "", ErrMalformed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseScramClientFirst([]byte(tc.first))
			if !errors.Is(err, tc.wantErr) && !(tc.wantErr == nil && err == nil) {
				t.Fatalf("err %v, want %v", err, tc.wantErr)
			}
		})
	}
	for _, tc := range []struct {
		name  string
		final string
		ok    bool
	}{
		{"ok", "c=biws,r=nonce,p=AAAA", true},
		{"no proof", "c=biws,r=nonce", false},
		{"proof not base64", "c=biws,r=nonce,p=!!", false},
		{"binding not base64", "c=!,r=nonce,p=AAAA", false},
		{"order", "r=nonce,c=biws,p=AAAA", false},
		{"empty proof", "c=biws,r=n,p=", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseScramClientFinal([]byte(tc.final))
			if (err == nil) != tc.ok || err != nil && !errors.Is(err, ErrMalformed) {
				t.Fatalf("err %v", err)
			}
		})
	}
}

func TestScramExchangeRejectsTamperedFinal(t *testing.T) {
	store := CredentialMap{"u": {mustCred(t, ScramSHA256, "pw")}}
	srv := &Scram{Mech: ScramSHA256, Store: store}
	for _, tc := range []struct {
		name   string
		mutate func(string) string
	}{
		{"wrong nonce", func(s string) string { return "c=biws,r=other,p=" + s[len(s)-44:] }},
		{"wrong binding", func(s string) string { return "c=eSws," + s[len("c=biws,"):] }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			client := scram.Auth{User: "u", Pass: "pw"}.AsSha256Mechanism()
			sess, msg, _ := client.Authenticate(context.Background(), "")
			ex := srv.Start(ConnFacts{})
			reply, _, err := ex.Step(context.Background(), msg)
			if err != nil {
				t.Fatal(err)
			}
			_, final, err := sess.Challenge(reply)
			if err != nil {
				t.Fatal(err)
			}
			if _, _, err := ex.Step(context.Background(), []byte(tc.mutate(string(final)))); err == nil {
				t.Fatal("accepted")
			}
			// And the exchange cannot be retried.
			if _, _, err := ex.Step(context.Background(), final); err == nil {
				t.Fatal("exchange continued after a failure")
			}
		})
	}
}

func TestCredentialBounds(t *testing.T) {
	salt := []byte("salt")
	for _, tc := range []struct {
		name string
		mech ScramMechanism
		salt []byte
		iter int32
		ok   bool
	}{
		{"min", ScramSHA256, salt, 4096, true},
		{"max", ScramSHA512, salt, 16384, true},
		{"too few", ScramSHA256, salt, 4095, false},
		{"too many", ScramSHA256, salt, 16385, false},
		{"no salt", ScramSHA256, nil, 4096, false},
		{"unknown mech", 3, salt, 4096, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := CredentialFromPassword(tc.mech, "pw", tc.salt, tc.iter)
			if (err == nil) != tc.ok {
				t.Fatalf("err %v", err)
			}
			if err != nil && !errors.Is(err, ErrInvalidCredential) {
				t.Fatalf("err %v is not ErrInvalidCredential", err)
			}
			if err == nil {
				if verr := c.Validate(); verr != nil {
					t.Fatal(verr)
				}
			}
		})
	}
	if _, err := NewScramCredential(ScramSHA256, make([]byte, 10), salt, 4096); !errors.Is(err, ErrInvalidCredential) {
		t.Fatalf("short salted password: %v", err)
	}
}

func TestPlain(t *testing.T) {
	store := CredentialMap{"alice": {mustCred(t, ScramSHA512, "pw")}, "bob": {mustCred(t, ScramSHA256, "pw2")}}
	for _, tc := range []struct {
		name    string
		msg     string
		want    string
		wantErr error
	}{
		{"ok sha512 credential", "\x00alice\x00pw", "User:alice", nil},
		{"ok sha256 credential", "\x00bob\x00pw2", "User:bob", nil},
		{"authzid equal", "alice\x00alice\x00pw", "User:alice", nil},
		{"authzid other", "bob\x00alice\x00pw", "", ErrAuthenticationFailed},
		{"wrong password", "\x00alice\x00nope", "", ErrAuthenticationFailed},
		{"unknown user", "\x00carol\x00pw", "", ErrAuthenticationFailed},
		{"two fields", "alice\x00pw", "", ErrMalformed},
		{"four fields", "\x00a\x00b\x00c", "", ErrMalformed},
		{"empty user", "\x00\x00pw", "", ErrMalformed},
		{"empty password", "\x00alice\x00", "", ErrMalformed},
		{"not utf8", "\x00al\xffice\x00pw", "", ErrMalformed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ex := (&Plain{Store: store}).Start(ConnFacts{})
			_, done, err := ex.Step(context.Background(), []byte(tc.msg))
			if tc.wantErr != nil {
				if !errors.Is(err, tc.wantErr) || done {
					t.Fatalf("err %v done %v, want %v", err, done, tc.wantErr)
				}
				return
			}
			if err != nil || !done || ex.Outcome().Principal.String() != tc.want {
				t.Fatalf("err %v done %v principal %v", err, done, ex.Outcome().Principal)
			}
		})
	}
}

func TestMechanisms(t *testing.T) {
	ms, err := NewMechanisms(&Plain{}, &Scram{Mech: ScramSHA256}, &Scram{Mech: ScramSHA512})
	if err != nil {
		t.Fatal(err)
	}
	if got := ms.Names(); len(got) != 3 || got[0] != "PLAIN" || got[2] != "SCRAM-SHA-512" {
		t.Fatalf("names %v", got)
	}
	if _, ok := ms.Lookup("scram-sha-256"); ok {
		t.Fatal("lookup is case-insensitive; Kafka's is not")
	}
	if _, err := NewMechanisms(&Plain{}, &Plain{}); err == nil {
		t.Fatal("duplicate accepted")
	}
}
