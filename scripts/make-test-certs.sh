#!/usr/bin/env bash
# Makes the certificates of the DICOM TLS tests (and a template for a test CA) in DIR with OpenSSL:
#   ca.pem ca.key            a test CA
#   server.pem server.key    signed by the CA, subjectAltName DNS:localhost, IP:127.0.0.1
#   client.pem client.key    signed by the CA, no subjectAltName (mutual TLS; as a server cert: a name mismatch)
#   expired.pem expired.key  signed by the CA, valid only in 2020 (same names as server.pem)
#   other-ca.pem             another CA, and other.pem other.key signed by it (same names as server.pem)
# Usage: scripts/make-test-certs.sh DIR
set -euo pipefail
dir=${1:?usage: make-test-certs.sh DIR}
mkdir -p "$dir"
cd "$dir"
quiet() { "$@" > /dev/null 2>&1 || { echo "failed: $*" >&2; "$@"; exit 1; }; }
san='subjectAltName=DNS:localhost,IP:127.0.0.1'
printf '%s\n' "$san" > san.ext

ca() {  # NAME CN
    quiet openssl req -x509 -newkey rsa:2048 -nodes -keyout "$1.key" -out "$1.pem" -days 2 -subj "/CN=$2" \
        -addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign,cRLSign
}
leaf() {  # NAME CA CN [nosan]
    quiet openssl req -newkey rsa:2048 -nodes -keyout "$1.key" -out "$1.csr" -subj "/CN=$3"
    local ext=(-extfile san.ext)
    [[ ${4:-} == nosan ]] && ext=()
    quiet openssl x509 -req -in "$1.csr" -CA "$2.pem" -CAkey "$2.key" -CAcreateserial -days 2 -out "$1.pem" "${ext[@]}"
}
ca ca px-test-ca
ca other-ca px-other-ca
leaf server ca localhost
leaf client ca px-client nosan
leaf other other-ca localhost

# Expired: OpenSSL 3.0's `x509 -req` cannot backdate, `ca` can (with a throwaway database).
quiet openssl req -newkey rsa:2048 -nodes -keyout expired.key -out expired.csr -subj /CN=localhost
mkdir -p ca-db && : > ca-db/index.txt
cat > ca-db/ca.cnf <<CNF
[ca]
default_ca = test
[test]
database = $PWD/ca-db/index.txt
new_certs_dir = $PWD/ca-db
serial = $PWD/ca-db/serial
default_md = sha256
policy = any
copy_extensions = none
[any]
commonName = supplied
[ext]
$san
CNF
echo 01 > ca-db/serial
quiet openssl ca -batch -config ca-db/ca.cnf -cert ca.pem -keyfile ca.key -in expired.csr -out expired.pem \
    -startdate 20200101000000Z -enddate 20200102000000Z -extensions ext -notext
rm -f ./*.csr
