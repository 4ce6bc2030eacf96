#!/usr/bin/env bash
# Entrypoint of the mm2cutover Kafka Connect worker (MirrorMaker 2 on Connect).
#
# Validates the environment, sets defaults, then execs the JVM so that SIGTERM from
# the container runtime reaches Kafka Connect directly: Connect stops its tasks,
# flushes and commits their source offsets, and leaves the group before exiting.
#
# The worker configuration is connect-mm2.properties next to this script (or
# MM2_CONF_DIR); it reads every value below through ${env:...}.
set -euo pipefail

die() {
  echo "docker-entrypoint: $*" >&2
  exit 64
}

# valid_port NAME VALUE: a decimal TCP port in 1..65535.
valid_port() {
  local name=$1 value=$2
  [[ $value =~ ^[0-9]{1,5}$ ]] && ((10#$value >= 1 && 10#$value <= 65535)) ||
    die "$name must be a TCP port number between 1 and 65535, got '$value'"
}

MM2_CONF_DIR=${MM2_CONF_DIR:-$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)}
KAFKA_HOME=${KAFKA_HOME:-/opt/kafka}
CONNECT_CONFIG_FILE=${CONNECT_CONFIG_FILE:-$MM2_CONF_DIR/connect-mm2.properties}

[[ -n ${CONNECT_BOOTSTRAP_SERVERS:-} ]] ||
  die "CONNECT_BOOTSTRAP_SERVERS is required: the target Kafka cluster that stores Connect's configs, offsets and status"
[[ -r $CONNECT_CONFIG_FILE ]] || die "worker configuration $CONNECT_CONFIG_FILE is not readable"
compgen -G "$KAFKA_HOME/libs/connect-mirror-*.jar" >/dev/null ||
  die "no connect-mirror jar under $KAFKA_HOME/libs: KAFKA_HOME must be an Apache Kafka distribution"

export CONNECT_GROUP_ID=${CONNECT_GROUP_ID:-mm2-connect}
export CONNECT_CONFIG_STORAGE_TOPIC=${CONNECT_CONFIG_STORAGE_TOPIC:-mm2-connect-configs}
export CONNECT_OFFSET_STORAGE_TOPIC=${CONNECT_OFFSET_STORAGE_TOPIC:-mm2-connect-offsets}
export CONNECT_STATUS_STORAGE_TOPIC=${CONNECT_STATUS_STORAGE_TOPIC:-mm2-connect-status}
export CONNECT_REPLICATION_FACTOR=${CONNECT_REPLICATION_FACTOR:-3}
[[ $CONNECT_REPLICATION_FACTOR =~ ^[1-9][0-9]*$ ]] ||
  die "CONNECT_REPLICATION_FACTOR must be a positive integer, got '$CONNECT_REPLICATION_FACTOR'"

# Exactly-once source support: a value the worker would refuse (or misread) is
# refused here, in words.
CONNECT_EXACTLY_ONCE_SOURCE_SUPPORT=${CONNECT_EXACTLY_ONCE_SOURCE_SUPPORT:-disabled}
export CONNECT_EXACTLY_ONCE_SOURCE_SUPPORT=${CONNECT_EXACTLY_ONCE_SOURCE_SUPPORT,,}
case $CONNECT_EXACTLY_ONCE_SOURCE_SUPPORT in
  disabled | preparing | enabled) ;;
  *) die "CONNECT_EXACTLY_ONCE_SOURCE_SUPPORT must be disabled, preparing or enabled, got '$CONNECT_EXACTLY_ONCE_SOURCE_SUPPORT'" ;;
esac

export CONNECT_SECURITY_PROTOCOL=${CONNECT_SECURITY_PROTOCOL:-SASL_PLAINTEXT}
export CONNECT_SASL_MECHANISM=${CONNECT_SASL_MECHANISM:-PLAIN}
case $CONNECT_SECURITY_PROTOCOL in
  PLAINTEXT | SSL) export CONNECT_SASL_JAAS_CONFIG=${CONNECT_SASL_JAAS_CONFIG:-} ;;
  SASL_PLAINTEXT | SASL_SSL)
    [[ -n ${CONNECT_SASL_JAAS_CONFIG:-} ]] ||
      die "CONNECT_SASL_JAAS_CONFIG is required with CONNECT_SECURITY_PROTOCOL=$CONNECT_SECURITY_PROTOCOL (mount it from a Secret)"
    ;;
  *) die "CONNECT_SECURITY_PROTOCOL must be PLAINTEXT, SSL, SASL_PLAINTEXT or SASL_SSL, got '$CONNECT_SECURITY_PROTOCOL'" ;;
esac

export CONNECT_REST_HOST=${CONNECT_REST_HOST:-0.0.0.0}
export CONNECT_REST_PORT=${CONNECT_REST_PORT:-8088}
valid_port CONNECT_REST_PORT "$CONNECT_REST_PORT"
if [[ -z ${POD_IP:-} ]]; then
  # hostname may fail (no resolvable name): that is the message below, not a
  # silent exit of set -e and pipefail.
  POD_IP=$({ hostname -i 2>/dev/null || true; } | awk '{print $1}')
  [[ -n $POD_IP ]] || die "POD_IP is not set (set it from status.podIP through the Downward API)"
  echo "docker-entrypoint: POD_IP not set, advertising $POD_IP" >&2
fi
export POD_IP

# TLS and authentication, each only when its variables are set. Kafka refuses a
# password setting next to a PEM store, and an empty location is not "no store",
# so these settings cannot sit in connect-mm2.properties with empty defaults: the
# entrypoint then writes the effective configuration, connect-mm2.properties plus
# the lines below, into a new directory under TMPDIR. Every line is a ${env:...}
# reference; no value, and so no credential, is written.
extra=()
java_opts=()

# store_lines PREFIX VAR_PREFIX KIND: ssl.<KIND>store settings under PREFIX,
# from VAR_PREFIX<KIND>STORE_{LOCATION,TYPE,PASSWORD}.
store_lines() {
  local prefix=$1 vars=$2 kind=$3 upper
  upper=$(tr '[:lower:]' '[:upper:]' <<<"$kind")
  local loc=${vars}${upper}STORE_LOCATION typ=${vars}${upper}STORE_TYPE pw=${vars}${upper}STORE_PASSWORD
  [[ -n ${!loc:-} ]] || return 0
  [[ -r ${!loc} ]] || die "$loc: ${!loc} is not readable"
  extra+=("${prefix}ssl.${kind}store.type=\${env:$typ}" "${prefix}ssl.${kind}store.location=\${env:$loc}")
  [[ -n ${!pw:-} ]] && extra+=("${prefix}ssl.${kind}store.password=\${env:$pw}")
  return 0
}

# The worker's own clients and its connectors' producers, consumers and admins.
export CONNECT_SSL_TRUSTSTORE_TYPE=${CONNECT_SSL_TRUSTSTORE_TYPE:-PEM}
export CONNECT_SSL_KEYSTORE_TYPE=${CONNECT_SSL_KEYSTORE_TYPE:-PEM}
if [[ -n ${CONNECT_SSL_TRUSTSTORE_LOCATION:-}${CONNECT_SSL_KEYSTORE_LOCATION:-} ]]; then
  [[ $CONNECT_SECURITY_PROTOCOL == SSL || $CONNECT_SECURITY_PROTOCOL == SASL_SSL ]] ||
    die "CONNECT_SSL_TRUSTSTORE_LOCATION and CONNECT_SSL_KEYSTORE_LOCATION need CONNECT_SECURITY_PROTOCOL=SSL or SASL_SSL, got $CONNECT_SECURITY_PROTOCOL"
  for prefix in "" producer. consumer. admin.; do
    store_lines "$prefix" CONNECT_SSL_ trust
    store_lines "$prefix" CONNECT_SSL_ key
    [[ -n ${CONNECT_SSL_KEY_PASSWORD:-} ]] && extra+=("${prefix}ssl.key.password=\${env:CONNECT_SSL_KEY_PASSWORD}")
  done
fi

# REST over HTTPS: a keystore turns the listener to https. The truststore holds
# the CA of the other workers' certificates: a worker that is not the leader
# forwards writes to the leader's advertised https URL (listeners.https.* are
# then the settings of both Connect's REST server and its forwarding client).
export CONNECT_REST_SSL_KEYSTORE_TYPE=${CONNECT_REST_SSL_KEYSTORE_TYPE:-PKCS12}
export CONNECT_REST_SSL_TRUSTSTORE_TYPE=${CONNECT_REST_SSL_TRUSTSTORE_TYPE:-PKCS12}
if [[ -n ${CONNECT_REST_SSL_KEYSTORE_LOCATION:-} ]]; then
  [[ $CONNECT_REST_SSL_KEYSTORE_TYPE == PEM || -n ${CONNECT_REST_SSL_KEYSTORE_PASSWORD:-} ]] ||
    die "CONNECT_REST_SSL_KEYSTORE_PASSWORD is required with CONNECT_REST_SSL_KEYSTORE_TYPE=$CONNECT_REST_SSL_KEYSTORE_TYPE (mount it from a Secret)"
  extra+=("listeners=https://\${env:CONNECT_REST_HOST}:\${env:CONNECT_REST_PORT}" "rest.advertised.listener=https")
  store_lines listeners.https. CONNECT_REST_SSL_ key
  store_lines listeners.https. CONNECT_REST_SSL_ trust
  [[ -n ${CONNECT_REST_SSL_KEY_PASSWORD:-} ]] && extra+=("listeners.https.ssl.key.password=\${env:CONNECT_REST_SSL_KEY_PASSWORD}")
  [[ -n ${CONNECT_REST_SSL_CLIENT_AUTH:-} ]] && extra+=("listeners.https.ssl.client.auth=\${env:CONNECT_REST_SSL_CLIENT_AUTH}")
  [[ -v CONNECT_REST_SSL_ENDPOINT_IDENTIFICATION_ALGORITHM ]] &&
    extra+=("listeners.https.ssl.endpoint.identification.algorithm=\${env:CONNECT_REST_SSL_ENDPOINT_IDENTIFICATION_ALGORITHM}")
elif [[ -n ${CONNECT_REST_SSL_TRUSTSTORE_LOCATION:-} ]]; then
  die "CONNECT_REST_SSL_TRUSTSTORE_LOCATION is set but CONNECT_REST_SSL_KEYSTORE_LOCATION is not: HTTPS needs the worker's own certificate"
fi

# Basic authentication of REST requests: BasicAuthSecurityRestExtension checks
# them against a properties file of user=password lines (mount it from a Secret),
# through the JAAS login module named in the generated JAAS file.
jaas_file=
if [[ -n ${CONNECT_REST_BASIC_AUTH_FILE:-} ]]; then
  [[ -r $CONNECT_REST_BASIC_AUTH_FILE ]] || die "CONNECT_REST_BASIC_AUTH_FILE: $CONNECT_REST_BASIC_AUTH_FILE is not readable"
  compgen -G "$KAFKA_HOME/libs/connect-basic-auth-extension-*.jar" >/dev/null ||
    die "CONNECT_REST_BASIC_AUTH_FILE is set but $KAFKA_HOME/libs has no connect-basic-auth-extension jar"
  [[ $CONNECT_REST_BASIC_AUTH_FILE != *'"'* && $CONNECT_REST_BASIC_AUTH_FILE != *\\* ]] ||
    die "CONNECT_REST_BASIC_AUTH_FILE must not contain a quote or a backslash"
  extra+=("rest.extension.classes=org.apache.kafka.connect.rest.basic.auth.extension.BasicAuthSecurityRestExtension")
  jaas_file=yes
fi

# Any other CONNECT_<NAME> variable is a worker setting, named as Confluent's
# images name them: CONNECT_ dropped, lower case, "_" for ".", "__" for "_",
# "___" for "-" (CONNECT_PRODUCER_MAX_REQUEST_SIZE is producer.max.request.size,
# CONNECT_CLIENT_RACK is client.rack). Each becomes one ${env:...} line after
# connect-mm2.properties, so it overrides the same key there and its value, a
# secret or not, is never written, except CONNECT_CONFIG_PROVIDERS and
# CONNECT_CONFIG_PROVIDERS_<NAME>_CLASS (see below). The variables above are
# the entrypoint's own and are not mapped.
own_vars=" BOOTSTRAP_SERVERS GROUP_ID CONFIG_STORAGE_TOPIC OFFSET_STORAGE_TOPIC STATUS_STORAGE_TOPIC REPLICATION_FACTOR
  EXACTLY_ONCE_SOURCE_SUPPORT
  SECURITY_PROTOCOL SASL_MECHANISM SASL_JAAS_CONFIG REST_HOST REST_PORT CONFIG_FILE LOG_LEVEL REST_BASIC_AUTH_FILE
  SSL_TRUSTSTORE_TYPE SSL_TRUSTSTORE_LOCATION SSL_TRUSTSTORE_PASSWORD SSL_KEYSTORE_TYPE SSL_KEYSTORE_LOCATION
  SSL_KEYSTORE_PASSWORD SSL_KEY_PASSWORD "
# shellcheck disable=SC2086 # word splitting joins the list on single spaces
own_vars=" $(echo $own_vars) "
mapped=()
while read -r var; do
  name=${var#CONNECT_}
  [[ $own_vars == *" $name "* || $name == REST_SSL_* || -z $name ]] && continue
  [[ $name =~ ^[A-Z0-9_]+$ ]] ||
    die "$var: a worker setting variable is CONNECT_ and upper-case letters, digits and underscores"
  key=${name,,}
  key=${key//___/-}
  key=${key//__/%}
  key=${key//_/.}
  key=${key//%/_}
  [[ $key =~ ^[a-z0-9]([a-z0-9._-]*[a-z0-9])?$ && $key != *..* ]] ||
    die "$var does not name a worker setting (got '$key')"
  # Kafka reads config.providers and config.providers.<name>.class as they
  # are written, before it resolves any ${...} reference (AbstractConfig's
  # instantiateConfigProviders): a reference there names no provider, and
  # config.providers would lose the env provider every line above needs.
  # They are written as given (checked: names and a class name are no
  # secret), env kept first; a provider's parameters are refused.
  case $key in
    config.providers)
      [[ ${!var} =~ ^[A-Za-z0-9_-]+(,[A-Za-z0-9_-]+)*$ ]] ||
        die "$var must be config provider names separated by commas, got '${!var}'"
      providers=env
      IFS=, read -ra names <<<"${!var}"
      for p in "${names[@]}"; do
        [[ ,$providers, == *,$p,* ]] || providers+=,$p
      done
      mapped+=("config.providers=$providers")
      continue
      ;;
    config.providers.*.class)
      [[ ${!var} =~ ^[A-Za-z_$][A-Za-z0-9_$]*(\.[A-Za-z_$][A-Za-z0-9_$]*)+$ ]] ||
        die "$var must be a Java class name with its package, got '${!var}'"
      mapped+=("$key=${!var}")
      continue
      ;;
    config.providers.*)
      die "$var: Kafka passes a config provider's parameters as they are written, before it resolves any \${...} reference, so a variable cannot give one without its value being written into the worker configuration; put config.providers.<name>.param.* lines in the worker configuration file (CONNECT_CONFIG_FILE)"
      ;;
  esac
  mapped+=("$key=\${env:$var}")
done < <(compgen -e | grep '^CONNECT_' | sort)
if ((${#mapped[@]} > 0)); then
  extra+=("# CONNECT_<NAME> variables:" "${mapped[@]}")
fi

if ((${#extra[@]} > 0)); then
  runtime_dir=$(mktemp -d "${TMPDIR:-/tmp}/mm2-connect.XXXXXX") || die "cannot create a directory under ${TMPDIR:-/tmp} for the effective worker configuration"
  { cat "$CONNECT_CONFIG_FILE"; echo; echo "# Added by docker-entrypoint.sh from the environment."; printf '%s\n' "${extra[@]}"; } >"$runtime_dir/connect-mm2.properties"
  CONNECT_CONFIG_FILE=$runtime_dir/connect-mm2.properties
  if [[ -n $jaas_file ]]; then
    printf 'KafkaConnect {\n  org.apache.kafka.connect.rest.basic.auth.extension.PropertyFileLoginModule required\n  file="%s";\n};\n' \
      "$CONNECT_REST_BASIC_AUTH_FILE" >"$runtime_dir/rest-jaas.conf"
    java_opts+=("-Djava.security.auth.login.config=$runtime_dir/rest-jaas.conf")
  fi
fi

if [[ -n ${JMX_EXPORTER_PORT:-} ]]; then
  valid_port JMX_EXPORTER_PORT "$JMX_EXPORTER_PORT"
  JMX_EXPORTER_JAR=${JMX_EXPORTER_JAR:-/opt/jmx-exporter/jmx_prometheus_javaagent.jar}
  JMX_EXPORTER_CONFIG=${JMX_EXPORTER_CONFIG:-$MM2_CONF_DIR/jmx-exporter.yaml}
  [[ -r $JMX_EXPORTER_JAR ]] ||
    die "JMX_EXPORTER_PORT is set but the Prometheus JMX exporter agent $JMX_EXPORTER_JAR is missing; refusing to start without the metrics you asked for"
  [[ -r $JMX_EXPORTER_CONFIG ]] || die "JMX exporter configuration $JMX_EXPORTER_CONFIG is not readable"
  java_opts+=("-javaagent:$JMX_EXPORTER_JAR=$JMX_EXPORTER_PORT:$JMX_EXPORTER_CONFIG")
fi

# Word splitting of the *_OPTS variables is intended: they hold several JVM flags.
# shellcheck disable=SC2206
java_opts+=(
  ${KAFKA_HEAP_OPTS:--Xms1g -Xmx1g}
  ${KAFKA_JVM_PERFORMANCE_OPTS:--server -XX:+UseG1GC -XX:MaxGCPauseMillis=20 -XX:+ExitOnOutOfMemoryError -Djava.awt.headless=true}
  ${KAFKA_OPTS:-}
)

exec java "${java_opts[@]}" \
  -Dlog4j2.configurationFile="$MM2_CONF_DIR/connect-log4j2.properties" \
  -Dlog4j.configuration="file:$MM2_CONF_DIR/connect-log4j.properties" \
  -cp "$KAFKA_HOME/libs/*" \
  org.apache.kafka.connect.cli.ConnectDistributed "$CONNECT_CONFIG_FILE"
