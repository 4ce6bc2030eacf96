#!/usr/bin/env bash
# Regenerates the throwaway test stores of package clientconf (run from this
# directory): a CA, a server certificate for 127.0.0.1 and a client
# certificate (CN=cutover-test), the client key and chain as PEM, encrypted
# PEM (PBES2, AES-256-CBC), PKCS12 and JKS (keytool, a separate key
# password), and the CA as JKS and PKCS12 truststores. Nothing here protects
# anything: the keys are for the tests only.
set -euo pipefail
rm -f ./*.pem ./*.p12 ./*.jks
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout ca.key.pem -out ca.pem -days 36500 -subj "/CN=clientconf test CA" 2>/dev/null
for who in server client; do
  subj="/CN=cutover-test"; ext="extendedKeyUsage=clientAuth"
  [[ $who == server ]] && subj="/CN=localhost" && ext="subjectAltName=IP:127.0.0.1,DNS:localhost
extendedKeyUsage=serverAuth"
  openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout $who.key -out $who.csr -subj "$subj" 2>/dev/null
  openssl x509 -req -in $who.csr -CA ca.pem -CAkey ca.key.pem -CAcreateserial -days 36500 -out $who.crt -extfile <(printf '%s\n' "$ext") 2>/dev/null
  openssl pkcs8 -topk8 -nocrypt -in $who.key -out $who.p8
  cat $who.p8 $who.crt ca.pem >$who.pem
done
openssl pkcs8 -topk8 -v2 aes-256-cbc -v2prf hmacWithSHA256 -passout pass:key-secret -in client.key -out client.enc.p8
cat client.enc.p8 client.crt ca.pem >client-encrypted.pem
openssl pkcs12 -export -inkey client.key -in client.crt -certfile ca.pem -name client -passout pass:store-secret -out client.p12
keytool -importkeystore -srckeystore client.p12 -srcstoretype PKCS12 -srcstorepass store-secret -srcalias client \
  -destkeystore client.jks -deststoretype JKS -deststorepass store-secret -destkeypass key-secret-jks -noprompt 2>/dev/null
keytool -importcert -noprompt -alias ca -file ca.pem -keystore truststore.jks -storetype JKS -storepass trust-secret 2>/dev/null
keytool -importcert -noprompt -alias ca -file ca.pem -keystore truststore.p12 -storetype PKCS12 -storepass trust-secret 2>/dev/null
rm -f ./*.key ./*.csr ./*.crt ./*.p8 ./*.srl ca.key.pem
