#!/usr/bin/env bash
# Makes the throwaway test CA and the loopback server certificate the interop brokers (Gregor
# from scripts/interop-gregor.sh, Apache Kafka from scripts/kafka-ref.sh) serve on their SSL and
# SASL_SSL listeners, and the interop clients trust.
#
#   scripts/interop-tls.sh [DIR]   (default .cache/interop-tls) prints DIR
#
# DIR/ca.pem          the CA certificate (clients' trust store)
# DIR/server.pem      server certificate for 127.0.0.1 and localhost, signed by the CA; it is also a
#                     client certificate (Gregor nodes present it to each other on an SSL controller
#                     listener)
# DIR/server-key.pem  its unencrypted PKCS#8 key
# DIR/server-keystore.pem  key and certificate in one file (Kafka's PEM key store)
# DIR/other-ca.pem    an unrelated CA that signed nothing: clients trusting only it must be refused
# Files are kept while the certificate is valid for at least another day; nothing is committed.
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
DIR="${1:-${GREGOR_CACHE:-$ROOT/.cache}/interop-tls}"

die() { echo "interop-tls: $*" >&2; exit 1; }

command -v openssl >/dev/null || die "openssl not found (apt-get install -y openssl)"
mkdir -p "$DIR"
if [[ -f "$DIR/server-keystore.pem" && -f "$DIR/ca.pem" && -f "$DIR/other-ca.pem" ]] &&
	openssl x509 -checkend 86400 -noout -in "$DIR/server.pem" >/dev/null 2>&1 &&
	openssl x509 -noout -text -in "$DIR/server.pem" 2>/dev/null | grep -q "TLS Web Client Authentication"; then
	echo "$DIR"
	exit 0
fi
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
openssl req -x509 -newkey rsa:2048 -nodes -days 30 -subj "/CN=Gregor interop test CA" \
	-keyout "$tmp/ca-key.pem" -out "$tmp/ca.pem" \
	-addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign" 2>/dev/null \
	|| die "could not make the CA"
openssl req -x509 -newkey rsa:2048 -nodes -days 30 -subj "/CN=Gregor interop unrelated CA" \
	-keyout "$tmp/other-ca-key.pem" -out "$tmp/other-ca.pem" \
	-addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign" 2>/dev/null \
	|| die "could not make the unrelated CA"
openssl req -newkey rsa:2048 -nodes -subj "/CN=localhost" -keyout "$tmp/key.pem" -out "$tmp/server.csr" 2>/dev/null \
	|| die "could not make the server key"
printf 'subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth,clientAuth\nbasicConstraints=CA:FALSE\n' >"$tmp/ext.cnf"
openssl x509 -req -in "$tmp/server.csr" -CA "$tmp/ca.pem" -CAkey "$tmp/ca-key.pem" -CAcreateserial \
	-days 30 -sha256 -extfile "$tmp/ext.cnf" -out "$tmp/server.pem" 2>/dev/null || die "could not sign the server certificate"
openssl pkcs8 -topk8 -nocrypt -in "$tmp/key.pem" -out "$tmp/server-key.pem" || die "could not convert the key to PKCS#8"
cat "$tmp/server-key.pem" "$tmp/server.pem" >"$tmp/server-keystore.pem"
chmod 600 "$tmp/server-key.pem" "$tmp/server-keystore.pem"
cp "$tmp/ca.pem" "$tmp/other-ca.pem" "$tmp/server.pem" "$tmp/server-key.pem" "$tmp/server-keystore.pem" "$DIR/"
echo "$DIR"
